"""The crash harness for as many kills as you like: SIGKILL `amem` at random moments
during add, evolve, import and reindex; after each kill, `amem doctor` (and `--fix` when
needed); count what held.

    .venv/bin/python benchmarks/crash.py 1000              # 1,000 kills over 2 vaults
    .venv/bin/python benchmarks/crash.py 200 --lanes 1 --seed 3

Prints the kills per operation, how many needed `amem doctor --fix`, the kinds of
problem doctor found, the acknowledged notes and how many of them were lost (must be 0),
other failures (must be none) and the time taken. The harness itself is
tests/reliability/crashes.py (CI runs it with 200 kills).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "reliability"))

from crashes import OPS, run_crashes  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kills", type=int, help="kills in all")
    parser.add_argument("--lanes", type=int, default=2, help="vaults worked at once (one process each)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="amem-crash-") as root:
        start = time.monotonic()
        stats = run_crashes(Path(root), kills=args.kills, lanes=args.lanes, seed=args.seed)
        took = time.monotonic() - start
    kills = sum(stats.kills.values())
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"kills: {kills} in {took:.0f} s ({took / max(kills, 1):.2f} s a kill, doctor included), "
          f"{args.lanes} vaults, seed {args.seed}")
    print(f"{'operation':<10} {'kills':>6} {'needed --fix':>13} {'finished':>9}")
    for op in OPS:
        print(f"{op:<10} {stats.kills[op]:>6} {stats.needed_fix[op]:>13} {stats.completed[op]:>9}")
    print("problems doctor found: " + (", ".join(f"{k} {n}" for k, n in stats.problems.most_common()) or "none"))
    print(f"acknowledged notes: {stats.acknowledged}; notes lost: {len(stats.lost)}")
    print(f"other failures: {len(stats.failures)}")
    for failure in stats.failures:
        print("  " + failure)
    return 1 if stats.lost or stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
