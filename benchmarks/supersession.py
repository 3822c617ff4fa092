"""How well amem tells that a newer note changes an older one (supersession), on a labelled set.

    .venv/bin/python benchmarks/supersession.py                       # benchmarks/data/updates/update_pairs.jsonl
    .venv/bin/python benchmarks/supersession.py --pairs other.jsonl   # another set, same format
    .venv/bin/python benchmarks/supersession.py --llm                 # and the bundled model (1 thread; --model PATH: another GGUF)

Runs `amem_cli.steps.supersede.judge(new, old)` on every pair of the set (written blind
from issue 38's text, before the detector: benchmarks/data/updates/README.md) and prints:

- precision, recall and F1 of `supersedes` (what amem links), overall, by source and by
  category (a `keeps` category has no recall: its line counts the wrong links);
- how many pairs were `unsure` (not linked; `amem supersede --suggest` lists them), by label;
- every error: each wrong link and each missed supersession, with the pair's id, texts and
  the detector's reason.

`--llm` asks a model too (one call a pair: does the newer note change a value the older
states? JSON yes/no), and prints the model alone, the model confirming what the detector
was unsure of, and the model vetoing what the detector linked: where a model could help.

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
    ap.add_argument("--llm", action="store_true", help="ask a model too (the bundled one unless --model)")
    ap.add_argument("--model", help="a GGUF file for --llm")
    ap.add_argument("--deciding", action="store_true",
                    help="with --llm: ask only of the pairs the detector linked or was unsure of (where a model could change it)")
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
    if args.llm:
        compare_model(pairs, verdicts, args.model, deciding=args.deciding)


PROMPT = (
    "Two notes from one person's memory, the older first. Does the newer note change a value the older "
    "note states (a number, date, name, yes/no, a choice or a status), so that the older note is no longer "
    "current? A question, a plan for something else, more detail or the same fact again change nothing. "
    'Answer JSON {"changes": true} or {"changes": false}.'
)
SCHEMA = {"type": "object", "properties": {"changes": {"type": "boolean"}}, "required": ["changes"]}


def compare_model(pairs: list[dict], verdicts: dict, model: str | None, *, deciding: bool) -> None:
    """The model alone, confirming the detector's unsure pairs, and vetoing its links
    (`deciding`: the model asked only of the pairs the detector linked or was unsure of)."""
    import time

    from amem_cli.llm import make_llm
    from amem_cli.llm.structured import parse_reply

    llm = make_llm("llama", model_path=model, threads=1)
    said: dict[str, bool | None] = {}
    start = time.perf_counter()
    for p in pairs:
        if deciding and verdicts[p["id"]].decision == "no":
            said[p["id"]] = None
            continue
        messages = [{"role": "system", "content": PROMPT},
                    {"role": "user", "content": f"Older note: {p['old']['text']}\nNewer note: {p['new']['text']}"}]
        parsed = parse_reply(llm.complete_json(messages, SCHEMA, max_tokens=12) or "", SCHEMA)
        said[p["id"]] = parsed.data.get("changes") if parsed.valid and isinstance(parsed.data, dict) else None
    asked = [i for i in said if not deciding or verdicts[i].decision != "no"]
    seconds = (time.perf_counter() - start) / len(asked)
    print(f"\nmodel {llm.identity}: {len(asked)} pairs asked, {seconds:.2f} s a pair, "
          f"{sum(said[i] is None for i in asked)} unreadable answers")
    detector = {i: v.decision for i, v in verdicts.items()}
    ways = {
        **({} if deciding else {"model alone": {i: "supersedes" if said[i] else "no" for i in said}}),
        "detector": detector,
        "detector + model confirms unsure": {i: "supersedes" if d == "supersedes" or d == "unsure" and said[i] else d
                                             for i, d in detector.items()},
        "detector, model vetoes its links": {i: d if d != "supersedes" or said[i] is not False else "no"
                                             for i, d in detector.items()},
    }
    for name, decided in ways.items():
        print(f"  {name:<34} {prf(*scores([(p, decided[p['id']]) for p in pairs]))}")


if __name__ == "__main__":
    main()
