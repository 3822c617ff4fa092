"""Vaults built by an earlier version (no supersessions), with their supersessions found
as adding their notes in order would have: the paired "after" of a benchmark run.

    python benchmarks/supersede_vaults.py BEFORE_DIR AFTER_DIR [--unlink]

Copies each vault under BEFORE_DIR (built with `--keep` by an earlier version, e.g.
`PYTHONPATH=/tmp/amem-bae2764 python locomo.py DATA --keep BEFORE_DIR`) to AFTER_DIR and
runs the detector over its notes, oldest first (`Supersessions.detect`, `--llm none`).
A benchmark run with `--keep AFTER_DIR` then reuses them: the two runs differ only in
what supersession adds, not in embeddings built twice. `--unlink` undoes the supersessions
the earlier version found first: two versions' detectors compared on the same vaults
(`PYTHONPATH=OTHER_CHECKOUT` for the other).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from internals import services  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def undo_supersessions(memory) -> int:
    """Undo every supersession the vault holds (those an earlier version found as it built
    it), so that what is found next is the detector's under test alone; how many."""
    c = services(memory)
    notes = c.index.notes.list(newest_first=False)
    pairs = [(old, n.id) for n in notes for old in n.supersedes]
    for old, new in pairs:
        c.supersessions.undo(old, new)
    return len(pairs)


def find_supersessions(memory) -> int:
    """Run the detector over the vault's notes, oldest first; the links it made."""
    from amem_cli.steps.supersede import SUPERSEDES

    c = services(memory)
    notes = c.index.notes.list(newest_first=False)
    found = c.supersessions.detect(notes)
    return sum(1 for verdicts in found.values() for v in verdicts.values() if v.decision == SUPERSEDES)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--embedder", default="sentence-transformers", help="as the vaults were built with")
    ap.add_argument("--unlink", action="store_true", help="undo the vaults' supersessions first")
    args = ap.parse_args()

    from amem_cli import AgentMemory

    for source in sorted(p for p in args.before.iterdir() if p.is_dir()):
        vault = args.after / source.name
        if vault.exists():
            print(f"{source.name}: there already, left as it is", file=sys.stderr)
            continue
        shutil.copytree(source, vault)
        start = time.perf_counter()
        with AgentMemory(vault, llm="none", embedder=args.embedder) as memory:
            undone = undo_supersessions(memory) if args.unlink else 0
            links = find_supersessions(memory)
            notes = len(memory.notes(limit=None))
        print(f"{source.name}: {notes} notes, {links} supersessions" + (f" ({undone} undone first)" if args.unlink else "")
              + f", {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
