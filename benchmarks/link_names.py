"""What resolving links by name costs: an Obsidian-style vault indexed from its files.

    .venv/bin/python benchmarks/link_names.py --notes 2000 --links 5

Writes N notes the way Obsidian does (file names with spaces, no frontmatter, or one with
`aliases:` and `links: ["[[Other Note|shown]]"]`), each with L links in its text to other
notes by file name (`[[Note 17]]`, `[[note 17#Heading|see]]`, `[text](Note%2017.md)`),
then rebuilds the index from the files (`reindex`, fake embedder) and a second time, and
prints the CPU seconds of each and the edges the graph holds. Run it on an older checkout
to compare (it only writes files and calls `reindex`). Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from internals import services  # noqa: E402


def write_vault(root: Path, notes: int, links: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for i in range(notes):
        others = rng.sample(range(notes), links)
        forms = [f"[[Note {j}]]" if k % 3 == 0 else f"[[note {j}#Heading|see]]" if k % 3 == 1
                 else f"[note {j}](Note%20{j}.md)" for k, j in enumerate(others)]
        text = f"Note {i} is about topic {rng.randrange(50)}. " + " and ".join(forms) + ".\n"
        if i % 4 == 0:
            text = f'---\naliases: [Alias {i}]\nlinks: ["[[Note {others[0]}|shown]]"]\n---\n' + text
        (root / f"Note {i}.md").write_text(text, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=2000)
    ap.add_argument("--links", type=int, default=5, help="links in each note's text")
    args = ap.parse_args()
    from amem_cli import AgentMemory

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_vault(root, args.notes, args.links)
        with AgentMemory(root, embedder="fake", llm="none") as mem:
            for run in ("first", "again"):
                start = time.process_time()
                mem.reindex()
                cpu = time.process_time() - start
                print(f"reindex ({run}) of {args.notes} notes: {cpu:.2f} CPU s ({1000 * cpu / args.notes:.2f} ms a note)")
            edges = services(mem).index.db.execute("SELECT count(*) FROM links").fetchone()[0]
            print(f"link rows: {edges}; status links: {services(mem).index.links.count()}")


if __name__ == "__main__":
    main()
