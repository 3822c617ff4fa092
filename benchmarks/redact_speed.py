"""How fast `redact()` goes over ordinary notes (it runs on every note of an import), and
what it changes in them.

    .venv/bin/python benchmarks/redact_speed.py            # 1,000 notes, best of 5 rounds
    .venv/bin/python benchmarks/redact_speed.py --notes 5000 --show
    .venv/bin/python benchmarks/redact_speed.py --against fe90fbb   # and redact() as it was then

The notes: the seeded generator of foundation.py (short notes about people and projects)
and this repository's own Markdown (README.md, RELIABILITY.md, the example vault in notes/,
cut into paragraphs: prose, shell commands, config, code, tables), taken in turn. Prints
notes/s and MB/s, and how many notes redact() changed: text of this kind holds no secret,
so each change is a false positive (`--show` prints them). `--against REV` times the
`amem_cli/redact.py` of a git revision too (with the package of that revision), in
turns with this one, so both see the same load on the machine.
Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from amem_cli.redact import redact  # noqa: E402
from foundation import make_notes  # noqa: E402


def paragraphs() -> list[str]:
    files = [ROOT / "README.md", ROOT / "RELIABILITY.md", *sorted((ROOT / "notes").glob("*.md"))]
    out = []
    for path in files:
        for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
            if len(block.strip()) >= 40:
                out.append(block.strip())
    return out


def ordinary_notes(n: int) -> list[str]:
    made = [note["content"] for note in make_notes(n)]
    docs = paragraphs()
    return [docs[i // 2 % len(docs)] if i % 2 else made[i] for i in range(n)]


def redact_at(rev: str):
    """`redact` from amem_cli/redact.py as it was at a git revision (with the modules it
    imports: the package of that revision, under another name, in a temp folder)."""
    import importlib
    import io
    import tarfile
    import tempfile

    archive = subprocess.run(["git", "archive", rev, "amem_cli"], cwd=ROOT, capture_output=True, check=True).stdout
    folder = Path(tempfile.mkdtemp(prefix="redact-at-"))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    name = f"amem_cli_{re.sub(r'[^A-Za-z0-9]', '_', rev)}"
    (folder / "amem_cli").rename(folder / name)
    sys.path.insert(0, str(folder))
    return importlib.import_module(f"{name}.redact").redact


def timed(fn, notes: list[str]) -> tuple[float, list]:
    t0 = time.perf_counter()
    results = [fn(t) for t in notes]
    return time.perf_counter() - t0, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--show", action="store_true", help="print each note redact() changed")
    parser.add_argument("--against", metavar="REV", help="time redact() of this git revision too")
    args = parser.parse_args()
    notes = ordinary_notes(args.notes)
    size = sum(len(t.encode()) for t in notes)
    versions = {"this tree": redact} | ({args.against: redact_at(args.against)} if args.against else {})
    best = {name: float("inf") for name in versions}
    for _ in range(args.rounds):  # in turns: a busy spell of the machine hits both
        for name, fn in versions.items():
            seconds, results = timed(fn, notes)
            best[name] = min(best[name], seconds)
            if name == "this tree":
                ours = results
    for name, seconds in best.items():
        print(f"{name}: {len(notes)} notes, {size / 1e6:.2f} MB: {seconds * 1000:.1f} ms (best of {args.rounds}), "
              f"{len(notes) / seconds:,.0f} notes/s, {size / 1e6 / seconds:.1f} MB/s")
    changed = [(t, r) for t, (r, n) in zip(notes, ours) if n]
    print(f"changed by redact(): {len(changed)} of {len(notes)} ({len({t for t, _ in changed})} distinct)")
    if args.show:
        for _, after in dict(changed).items():
            print("---\n" + after)


if __name__ == "__main__":
    main()
