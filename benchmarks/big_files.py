"""How long one large note file takes on its way through amem: parse, index, render,
and a rewrite (one link added, as the pipeline adds them), for each shape a 2 MiB file
may have: many keywords, many tags, many links, many backlinks, a long body, a big
metadata map.

    .venv/bin/python benchmarks/big_files.py            # every shape, ~2 MiB each
    .venv/bin/python benchmarks/big_files.py --mib 1    # smaller files
    .venv/bin/python benchmarks/big_files.py --shape keywords

Each step's time is printed in seconds (the best of --repeat runs of the pure steps; the
vault steps run once, on a fresh vault with the fake embedder). A step that takes more
than --limit seconds is stopped and shown as `>limit` (the quadratic steps this script
was written to find ran for minutes). Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from internals import services  # noqa: E402

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def _items(prefix: str, size: int, width: int = 18) -> list[str]:
    """Distinct items of `width` characters, as many as fill `size` bytes of YAML list."""
    count = size // (width + 3)  # "- " + item + newline
    return [f"{prefix}{n:0{width - len(prefix)}d}" for n in range(count)]


def shapes(size: int) -> dict[str, str]:
    """The file text of each shape, about `size` bytes each, each under the 100,000 YAML
    values a frontmatter may hold (`markdown.MAX_VALUES`)."""
    head = "---\nid: big\n"
    body = "A note that grew large.\n"

    def listed(key: str, items: list[str]) -> str:
        return head + f"{key}:\n" + "".join(f"- {x}\n" for x in items) + "---\n" + body

    links = [f"'[[n{n:012d}]]'" for n in range(size // 23)]
    para = "The quick brown fox jumps over the lazy dog while the note grows longer. "
    meta = "".join(f"  key{n:07d}: a value of some length {n:012d}\n" for n in range(size // 50))
    return {
        "keywords": listed("keywords", _items("kw", size)),
        "tags": listed("tags", _items("tag", size)),
        "links": listed("links", links),
        "backlinks": listed("backlinks", links),
        "body": head + "---\n" + (para * 12 + "\n\n") * (size // (len(para) * 12 + 2)),
        "metadata": head + "metadata:\n" + meta + "---\n" + body,
    }


# index: the sync that reads the file into SQLite; embed: its vectors (the fake hashing
# embedder, which reads the whole text: the real one reads its first 256 tokens);
# rewrite: the file read, changed and written again, with its index rows; show: `get`.
STEPS = ("parse", "render", "index", "embed", "rewrite", "show")


def _timed(fn, *args):
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def _pure_steps(text: str, repeat: int) -> dict[str, float]:
    from amem_cli.markdown import parse_note, render_note

    note = parse_note(text, path="big.md")
    return {
        "parse": min(_timed(parse_note, text) for _ in range(repeat)),
        "render": min(_timed(render_note, note) for _ in range(repeat)),
    }


def _vault_steps(text: str) -> dict[str, float]:
    from amem_cli import AgentMemory

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "other.md").write_text("---\nid: other\n---\nA small note.\n", encoding="utf-8")
        mem = AgentMemory(root, embedder="fake", llm="none")
        try:
            indexer = services(mem).indexer
            indexer.sync(force=True)
            indexer.flush_vectors()  # the vector store is open before anything is timed
            (root / "big.md").write_text(text, encoding="utf-8")
            out = {"index": _timed(lambda: indexer.sync(force=True))}
            out["embed"] = _timed(indexer.flush_vectors)
            out["rewrite"] = _timed(lambda: services(mem).notes.update("big", lambda n: replace(n, links=[*n.links, "other"]), embed=False))
            out["show"] = _timed(mem.get, "big")
        finally:
            mem.close()
    return out


def _run(queue, fn, *args) -> None:
    try:
        queue.put(fn(*args))
    except Exception as exc:  # shown, so a shape amem refuses is not mistaken for a slow one
        queue.put({"error": f"{type(exc).__name__}: {exc}"})


def _bounded(limit: float, fn, *args) -> dict[str, float] | None:
    """fn(*args) in a child process, or None when it takes longer than `limit`."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    child = multiprocessing.Process(target=_run, args=(queue, fn, *args))
    child.start()
    child.join(limit)
    if child.is_alive():
        child.kill()
        child.join()
        return None
    return queue.get() if not queue.empty() else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mib", type=float, default=2.0, help="the size of each file (default 2 MiB, the most a note may be)")
    ap.add_argument("--shape", action="append", help="only this shape (repeatable)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--limit", type=float, default=120.0, help="seconds before a step is stopped")
    args = ap.parse_args()
    size = int(args.mib * 2**20) - 4096  # room for the head, under the 2 MiB a note may be
    print(f"{'shape':<10} {'bytes':>9} " + " ".join(f"{step:>8}" for step in STEPS))
    for name, text in shapes(size).items():
        if args.shape and name not in args.shape:
            continue
        pure = _bounded(args.limit, _pure_steps, text, args.repeat) or {}
        vault = _bounded(args.limit * 3, _vault_steps, text) or {}
        errors = [part.pop("error") for part in (pure, vault) if "error" in part]
        for error in errors:
            print(f"{name}: {error}")
        cells = [{**pure, **vault}.get(step) for step in STEPS]
        stopped = "failed" if errors else f">{int(args.limit)}"
        shown = [f"{c:8.3f}" if c is not None else f"{stopped:>8}" for c in cells]
        print(f"{name:<10} {len(text.encode()):>9,} " + " ".join(shown), flush=True)


if __name__ == "__main__":
    main()
