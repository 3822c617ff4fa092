"""`AgentMemory.retrieve` latency in process, on an existing vault.

    .venv/bin/python benchmarks/shell.py --sizes 10000 --dir /tmp/b    # builds /tmp/b/vault-10000
    .venv/bin/python benchmarks/retrieve_latency.py /tmp/b/vault-10000

Asks --queries distinct queries (the opening words of notes spread over the vault, so
none is answered from the result cache) after one warm-up, and prints p50/p95 with
the machine's context. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from amem_cli.api import AgentMemory

sys.path.insert(0, str(Path(__file__).parent))
from internals import services  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("vault", help="an existing vault folder")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--top-k", type=int, default=10)
    args = ap.parse_args()
    if not (Path(args.vault) / ".amem").is_dir():  # AgentMemory would make an empty vault there
        sys.exit(f"retrieve_latency.py: {args.vault} is not a vault (no .amem/ in it); build one with benchmarks/shell.py --dir")
    with AgentMemory(args.vault, llm="none") as memory:
        ids = services(memory).index.notes.ids()
        if not ids:
            sys.exit(f"retrieve_latency.py: {args.vault} holds no notes to ask about")
        step = max(1, len(ids) // args.queries)
        notes = services(memory).index.notes.get_many(ids[::step][: args.queries])
        queries = [" ".join(n.content.split()[:10]) for n in notes.values()]
        memory.retrieve("warm up", top_k=args.top_k)
        times = []
        for q in queries:
            t0 = time.perf_counter()
            memory.retrieve(q, top_k=args.top_k)
            times.append(time.perf_counter() - t0)
        identity = services(memory).embedder.identity
    times.sort()
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, load average {os.getloadavg()[0]:.2f}")
    print(f"vault: {args.vault} ({len(ids):,} notes), embedder {identity}")
    print(f"retrieve top {args.top_k}, {len(times)} distinct queries: "
          f"p50 {statistics.median(times) * 1000:.1f} ms, p95 {times[int(len(times) * 0.95) - 1] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
