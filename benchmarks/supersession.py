"""How well amem tells that a newer note changes an older one (supersession), on a labelled set.

    .venv/bin/python benchmarks/supersession.py                       # benchmarks/data/updates/update_pairs.jsonl
    .venv/bin/python benchmarks/supersession.py --pairs other.jsonl   # another set, same format

Runs `amem_cli.steps.supersede.judge(new, old)` on every pair of the set (written blind
from issue 38's text, before the detector: benchmarks/data/updates/README.md) and prints:

- precision, recall and F1 of `supersedes` (what amem links), overall, by source and by
  category (a `keeps` category has no recall: its line counts the wrong links);
- how many pairs were `unsure` (not linked; `amem supersede --suggest` lists them), by label;
- every error: each wrong link and each missed supersession, with the pair's id, texts and
  the detector's reason.

Figures only; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAIRS = HERE / "data" / "updates" / "update_pairs.jsonl"
sys.path.insert(0, str(HERE.parent))


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def scores(rows: list[tuple[dict, str]]) -> tuple[int, int, int]:
    """(true links, wrong links, missed supersessions) of `(pair, decision)` rows."""
    tp = sum(1 for p, d in rows if d == "supersedes" and p["label"] == "supersedes")
    fp = sum(1 for p, d in rows if d == "supersedes" and p["label"] != "supersedes")
    fn = sum(1 for p, d in rows if d != "supersedes" and p["label"] == "supersedes")
    return tp, fp, fn


def prf(tp: int, fp: int, fn: int) -> str:
    p = tp / (tp + fp) if tp + fp else float("nan")
    r = tp / (tp + fn) if tp + fn else float("nan")
    f = 2 * p * r / (p + r) if tp else 0.0
    return f"P {p:.3f}  R {r:.3f}  F1 {f:.3f}  (tp {tp}, fp {fp}, fn {fn})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=Path, default=PAIRS)
    args = ap.parse_args()

    from amem_cli.steps.supersede import judge

    pairs = load(args.pairs)
    verdicts = {p["id"]: judge(p["new"]["text"], p["old"]["text"]) for p in pairs}
    rows = [(p, verdicts[p["id"]].decision) for p in pairs]

    print(f"{len(pairs)} pairs: {sum(p['label'] == 'supersedes' for p in pairs)} supersedes, "
          f"{sum(p['label'] != 'supersedes' for p in pairs)} keeps ({args.pairs.name})")
    print(f"\nall           {prf(*scores(rows))}")
    print("\nby source")
    for source in sorted({p["source"] for p in pairs}):
        print(f"  {source:<11} {prf(*scores([r for r in rows if r[0]['source'] == source]))}")
    print("\nby category (supersedes: found / all; keeps: wrongly linked / all)")
    groups: dict[tuple[str, str], list[tuple[dict, str]]] = defaultdict(list)
    for p, d in rows:
        groups[(p["label"], p["category"])].append((p, d))
    for (label, category), rs in sorted(groups.items()):
        linked = sum(d == "supersedes" for _, d in rs)
        unsure = sum(d == "unsure" for _, d in rs)
        print(f"  {label:<10} {category:<12} {linked:>3} / {len(rs):<3}  (unsure {unsure})")
    unsure = Counter(p["label"] for p, d in rows if d == "unsure")
    print(f"\nunsure (not linked, listed by `amem supersede --suggest`): {unsure['supersedes']} supersedes, "
          f"{unsure['keeps']} keeps")

    wrong = [p for p, d in rows if d == "supersedes" and p["label"] != "supersedes"]
    missed = [p for p, d in rows if d != "supersedes" and p["label"] == "supersedes"]
    for title, errors in (("wrong links", wrong), ("missed supersessions", missed)):
        print(f"\n{title} ({len(errors)})")
        for p in errors:
            v = verdicts[p["id"]]
            print(f"- {p['id']} [{p['source']}/{p['category']}] {v.decision}: {v.reason}")
            print(f"    old: {p['old']['text']}")
            print(f"    new: {p['new']['text']}")
            if p.get("changed"):
                print(f"    changed: {p['changed']}")


if __name__ == "__main__":
    main()
