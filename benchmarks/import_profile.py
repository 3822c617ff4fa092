"""Where an import's CPU goes: cProfile (timed in CPU seconds) of an in-process import
of N notes, its `time.process_time`, and counts a loaded machine does not change:
whole-vault scans, syncs, note files read and written.

    .venv/bin/python benchmarks/import_profile.py --notes 2000 --embedder fake
    .venv/bin/python benchmarks/import_profile.py --notes 2000 --no-watch          # as `amem import` without the server
    .venv/bin/python benchmarks/import_profile.py --notes 500 --no-watch --no-profile   # CPU seconds without the profiler's cost
    PYTHONPATH=../before .venv/bin/python benchmarks/import_profile.py --notes 2000   # an older amem's source

The notes are foundation.py's seeded ones (with their keywords; `--no-keywords`: the
pipeline extracts them). The import runs through `AgentMemory` (a file watcher, as in
the warm server; `--no-watch`: none, so each sync looks at every file, as in a command's
own process). `--out FILE` keeps the profile for `python -m pstats`. Figures only.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from foundation import make_notes  # noqa: E402


def counting(counts: dict[str, int], cls, name: str, key: str) -> None:
    """Count the calls of `cls.name` under `key` from now on."""
    original = getattr(cls, name)

    def counted(*args, **kwargs):
        counts[key] += 1
        return original(*args, **kwargs)

    setattr(cls, name, counted)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=2000, help="how many notes to import (default 2000)")
    ap.add_argument("--embedder", default="fake", help="fake (default: amem's own work stands out), onnx or sentence-transformers")
    ap.add_argument("--no-keywords", action="store_true", help="notes without keywords: the pipeline extracts them")
    ap.add_argument("--no-watch", action="store_true", help="no file watcher: each sync scans the vault")
    ap.add_argument("--top", type=int, default=30, help="lines of the profile to print (default 30)")
    ap.add_argument("--out", type=Path, help="keep the profile in this file")
    ap.add_argument("--no-profile", action="store_true",
                    help="process_time and counts only: cProfile's own cost left out (it made a 500-note import 3.5x dearer: 41 against 11-12 CPU s)")
    args = ap.parse_args()

    import amem_cli
    from amem_cli import vault as vault_module
    from amem_cli.api import AgentMemory
    from amem_cli.services.indexer import Indexer

    if args.no_watch:
        from amem_cli import watch

        watch.VaultWatcher.start = lambda self: None  # "this system cannot watch"
    tmp = Path(tempfile.mkdtemp(prefix="amem-import-profile-"))
    try:
        data = tmp / "notes.jsonl"
        with data.open("w", encoding="utf-8") as fh:
            for note in make_notes(args.notes):
                note["created_at"] = note["created_at"].isoformat()
                if args.no_keywords:
                    del note["keywords"]
                fh.write(json.dumps(note) + "\n")
        counts = dict.fromkeys(["scans", "syncs", "reads", "writes", "files written"], 0)
        Vault = vault_module.Vault
        for cls, name, key in ((Vault, "scan", "scans"), (Indexer, "sync", "syncs"), (Vault, "read_settled", "reads"),
                               (Vault, "read_bytes", "reads"), (Vault, "write_many", "writes")):
            counting(counts, cls, name, key)
        write_many = Vault.write_many

        def written(self, items, *rest):
            counts["files written"] += len(items)
            return write_many(self, items, *rest)

        Vault.write_many = written
        with AgentMemory(tmp / "vault", embedder=args.embedder, llm="none") as memory:
            memory.add("The embedder is loaded and the index made before the import is timed.")
            counts.update(dict.fromkeys(counts, 0))
            profile = cProfile.Profile(time.process_time)
            cpu0, main0, t0 = time.process_time(), time.thread_time(), time.perf_counter()
            if not args.no_profile:
                profile.enable()
            report = memory.import_file(data)
            profile.disable()
            cpu, main, wall = time.process_time() - cpu0, time.thread_time() - main0, time.perf_counter() - t0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"amem from {Path(amem_cli.__file__).parent.parent}; {len(report.ids)} notes imported, embedder {args.embedder}, "
          f"keywords {'left out' if args.no_keywords else 'given'}, {'no watcher' if args.no_watch else 'a watcher'}")
    # The main thread's: amem's own work; a real embedder's threads (prefetch, ONNX's pool, which spins while
    # it waits) add CPU that moves with the machine's load.
    print(f"process_time {cpu:.1f} s, main thread {main:.1f} s (wall {wall:.1f} s); "
          + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if args.no_profile:
        return
    if args.out:
        profile.dump_stats(args.out)
    stats = pstats.Stats(profile)
    stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
