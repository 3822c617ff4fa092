"""A blind pairwise judgment of two ways of writing a note's fields.

    python benchmarks/fields_judge.py make-packets BASE.jsonl CHALLENGER.jsonl --name det-vs-smollm2
    python benchmarks/fields_judge.py score det-vs-smollm2

BASE and CHALLENGER are candidate files (`benchmarks/judged_fields.py` writes them: one
line a note, {"id", "text", "created", "method", "keywords", "tags", "context", "boxes"}).
`make-packets` writes, for the notes both hold:

- `judging/packets/NAME/partN.jsonl` (`--part-size`, 50 items a part): each item the note
  and its two field sets as "A" and "B", in an order drawn at random (seeded) for each
  item, and the fields to judge (those where the two differ); items in a random order.
  Nothing in a packet names a method.
- `judging/keys/NAME.jsonl`, kept apart: for each item which method is A and which is B,
  and the notes whose field sets are the same (ties, not judged).

A judge (a fresh session given `judging/JUDGE.md` and one part's path, nothing else)
writes `judging/verdicts/NAME/partN.jsonl`: one line an item, {"item", FIELD: "A" | "B" |
"tie" for each field it was asked, "why"}. `score` reads every verdict and the key and
prints, per field and overall (the majority of an item's fields), the challenger's wins,
ties and losses against the base, and the net score (wins - losses) / n with a bootstrap
95 % interval: the challenger is "not worse beyond the interval" when the interval's top
is >= 0. Items with no verdict are counted and named, never guessed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent
JUDGING = HERE / "judging"
FIELDS = ("keywords", "tags", "context", "boxes")
SEED = 39
PART_SIZE = 50


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def shown(fields: dict) -> dict:
    """A field set as a judge sees it: the four fields, nothing else."""
    return {f: fields.get(f) or ([] if f != "context" else "") for f in FIELDS}


def make_packets(base_path: Path, challenger_path: Path, name: str, *, part_size: int = PART_SIZE,
                 fields: tuple[str, ...] = FIELDS, root: Path = JUDGING) -> dict:
    base = {r["id"]: r for r in read_jsonl(base_path)}
    challenger = {r["id"]: r for r in read_jsonl(challenger_path)}
    methods = (base[next(iter(base))]["method"], challenger[next(iter(challenger))]["method"])
    ids = [i for i in base if i in challenger]
    rng = random.Random(f"{SEED}:{name}")
    rng.shuffle(ids)
    items, key, same = [], [], []
    for n, note_id in enumerate(ids, 1):
        b, c = base[note_id], challenger[note_id]
        if b["text"] != c["text"]:
            raise SystemExit(f"{note_id}: the two candidate files hold different texts")
        differ = [f for f in fields if shown(b)[f] != shown(c)[f]]
        if not differ:
            same.append(note_id)
            continue
        order = [("base", b), ("challenger", c)]
        rng.shuffle(order)
        item = f"x-{n:03d}"  # names no method: the comparison's name would tell a judge what A and B may be
        items.append({"item": item, "note": b["text"], "created": b.get("created", "")[:10],
                      "A": {f: shown(order[0][1])[f] for f in differ}, "B": {f: shown(order[1][1])[f] for f in differ},
                      "judge": differ})
        key.append({"item": item, "id": note_id, "A": order[0][0], "B": order[1][0]})
    parts = [items[i:i + part_size] for i in range(0, len(items), part_size)]
    packet_dir = root / "packets" / name
    for old in packet_dir.glob("part*.jsonl"):
        old.unlink()
    for number, part in enumerate(parts, 1):
        write_jsonl(packet_dir / f"part{number}.jsonl", part)
    write_jsonl(root / "keys" / f"{name}.jsonl",
                [{"comparison": name, "base": methods[0], "challenger": methods[1], "same": same}] + key)
    return {"items": len(items), "same": len(same), "parts": len(parts), "dir": str(packet_dir)}


def net_interval(scores: list[int], rounds: int = 10_000) -> tuple[float, float]:
    """A bootstrap 95 % interval of the mean of per-item scores (+1 win, 0 tie, -1 loss). Seeded."""
    if not scores:
        return 0.0, 0.0
    rng = random.Random(0)
    means = sorted(sum(rng.choices(scores, k=len(scores))) / len(scores) for _ in range(rounds))
    return means[int(rounds * 0.025)], means[int(rounds * 0.975)]


def outcome(verdict: str, challenger_is: str) -> int:
    """+1 when the judge kept the challenger's field, -1 the base's, 0 a tie."""
    verdict = str(verdict).strip().upper()
    if verdict not in ("A", "B"):
        return 0
    return 1 if verdict == challenger_is else -1


def score(name: str, root: Path = JUDGING) -> dict:
    header, *key = read_jsonl(root / "keys" / f"{name}.jsonl")
    verdicts: dict[str, dict] = {}
    for path in sorted((root / "verdicts" / name).glob("*.jsonl")):
        for row in read_jsonl(path):
            verdicts[row["item"]] = row
    packets = {row["item"]: row for path in sorted((root / "packets" / name).glob("*.jsonl")) for row in read_jsonl(path)}
    per_field: dict[str, list[int]] = {f: [] for f in FIELDS}
    overall: list[int] = []
    missing = []
    for k in key:
        v = verdicts.get(k["item"])
        if v is None:
            missing.append(k["item"])
            continue
        challenger_is = "A" if k["A"] == "challenger" else "B"
        results = []
        for f in FIELDS:
            if f in packets[k["item"]]["judge"]:
                r = outcome(v.get(f, "tie"), challenger_is)
            else:
                r = 0  # the same in both: a tie
            per_field[f].append(r)
            if f in packets[k["item"]]["judge"]:
                results.append(r)
        overall.append((sum(results) > 0) - (sum(results) < 0))
    # Notes whose fields were all the same: a tie in every field.
    for _ in header["same"]:
        for f in FIELDS:
            per_field[f].append(0)
        overall.append(0)
    rows = {}
    for label, scores in [*per_field.items(), ("overall", overall)]:
        counts = Counter(scores)
        low, high = net_interval(scores)
        rows[label] = {"n": len(scores), "win": counts[1], "tie": counts[0], "loss": counts[-1],
                       "net": sum(scores) / len(scores) if scores else 0.0, "interval": [low, high],
                       "not worse": high >= 0}
    return {"comparison": name, "base": header["base"], "challenger": header["challenger"], "fields": rows,
            "judged": len(key) - len(missing), "same": len(header["same"]), "missing": missing}


def render(result: dict) -> str:
    lines = [f"{result['comparison']}: {result['challenger']} (challenger) against {result['base']} (base); "
             f"{result['judged']} items judged, {result['same']} notes with the same fields (ties)"
             + (f", {len(result['missing'])} items without a verdict" if result["missing"] else ""),
             f"{'field':<10} {'n':>4} {'win':>5} {'tie':>5} {'loss':>5}   net [95% interval]   challenger not worse?"]
    for label, r in result["fields"].items():
        lines.append(f"{label:<10} {r['n']:>4} {r['win']:>5} {r['tie']:>5} {r['loss']:>5}   "
                     f"{r['net']:+.3f} [{r['interval'][0]:+.3f}, {r['interval'][1]:+.3f}]   {'yes' if r['not worse'] else 'no'}")
    if result["missing"]:
        lines.append("without a verdict: " + ", ".join(result["missing"][:20]) + (" ..." if len(result["missing"]) > 20 else ""))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("make-packets", help="write a comparison's packets and its key")
    make.add_argument("base", type=Path, help="candidate file of the base method")
    make.add_argument("challenger", type=Path, help="candidate file of the challenger")
    make.add_argument("--name", required=True, help="the comparison's name (packets/NAME, keys/NAME.jsonl)")
    make.add_argument("--part-size", type=int, default=PART_SIZE, help=f"items a part (default {PART_SIZE})")
    make.add_argument("--fields", default=",".join(FIELDS), help="the fields to judge (default: all four)")
    sc = sub.add_parser("score", help="win/tie/loss with a 95%% interval from the verdicts and the key")
    sc.add_argument("name", help="the comparison's name")
    sc.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.command == "make-packets":
        fields = tuple(f for f in args.fields.split(",") if f)
        if unknown := set(fields) - set(FIELDS):
            parser.error(f"unknown fields: {', '.join(sorted(unknown))}")
        print(json.dumps(make_packets(args.base, args.challenger, args.name, part_size=args.part_size, fields=fields)))
        return 0
    if not (JUDGING / "keys" / f"{args.name}.jsonl").is_file():
        parser.error(f"no key for {args.name!r} (make-packets first)")
    result = score(args.name)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
