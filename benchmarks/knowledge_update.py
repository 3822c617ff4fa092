"""LongMemEval: does the latest fact come first? Turn recall@10 by question type too.

    nice -n 10 python benchmarks/knowledge_update.py ../shared/data/longmemeval-dev.json --keep /tmp/lme-after
    python benchmarks/knowledge_update.py ../shared/data/longmemeval-dev.json --type knowledge-update --keep /tmp/lme-after
    PYTHONPATH=/tmp/amem-bae2764 python benchmarks/knowledge_update.py DATA --keep /tmp/lme-before --dump before.jsonl
    python benchmarks/knowledge_update.py DATA --keep /tmp/lme-after --against before.jsonl

The smallest runner issue 38 needs (a fuller LongMemEval runner is benchmarks/longmemeval.py
once it lands). Each question gets its own vault: its haystack, one note a turn ("user:
..." / "assistant: ..."), each session one `add_many` call (a sequence), every turn dated
by its session (`--llm none`). The question is asked through `AgentMemory.retrieve(question,
top_k=10)`. Prints turn-level recall@10 and MRR by question type, and for the
knowledge-update questions (evidence at several dates: the old value and the new) the
share whose latest evidence turn is in the top 10 above every older evidence turn.

`--keep DIR` builds the vaults there and keeps them (one already there is used as it is);
`--from DIR` (with `--keep`) copies each vault from DIR, built by an earlier version,
asks the question once as it is (the "default" columns: no supersession), then finds its
supersessions as adding its notes in order would have (`supersede_vaults.py`) and asks
again: the same run, the same vaults, the same code, with and without supersession
(`--unlink`: the supersessions the earlier version found as it built them are undone
first, so "default" has none and the second run only those of the code under test);
`--dump FILE` writes each question's figures, `--against FILE` pairs this run with such a
dump (mean change, bootstrap 95% interval). `PYTHONPATH` pointing at another checkout
measures that version ("before").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from locomo import paired_interval  # noqa: E402
from supersede_vaults import find_supersessions, undo_supersessions  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
TOP_K = 10


def date_of(stamp: str) -> str:
    """LongMemEval's "2023/05/30 (Tue) 10:18" as amem reads it ("2023/05/30 10:18")."""
    return re.sub(r"\s*\(\w+\)\s*", " ", stamp).strip()


def sessions_of(question: dict) -> list[list[dict]]:
    """Each session's turns with text, place ("session:turn") and date; empty turns left out."""
    return [
        [{"turn": f"{s}:{t}", "text": f"{turn['role']}: {turn['content'].strip()}", "date": date_of(stamp),
          "evidence": bool(turn.get("has_answer"))} for t, turn in enumerate(session) if turn["content"].strip()]
        for s, (session, stamp) in enumerate(zip(question["haystack_sessions"], question["haystack_dates"]))
    ]


def latest_first(ranked: list[str], evidence: list[dict]) -> bool:
    """The latest evidence turn (by its session's date, then its place) is in the ranking
    above every older evidence turn."""
    def when(t: dict) -> tuple:
        s, n = t["turn"].split(":")
        return t["date"], int(s), int(n)

    latest = max(evidence, key=when)["turn"]
    if latest not in ranked:
        return False
    older = {t["turn"] for t in evidence} - {latest}
    return not any(r in older for r in ranked[: ranked.index(latest)])


def scores(ranked: list[str], evidence: list[dict], update: bool) -> dict[str, float]:
    """recall@10 and MRR of the evidence turns; for a knowledge-update question (`update`),
    `latest_first`."""
    gold = {t["turn"] for t in evidence}
    first = next((r for r, t in enumerate(ranked, 1) if t in gold), None)
    out = {"recall@10": len(gold & set(ranked)) / len(gold), "MRR": 1 / first if first else 0.0}
    if update:
        out["latest_first"] = float(latest_first(ranked, evidence))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", type=Path)
    ap.add_argument("--type", action="append", help="only questions of this type (repeatable)")
    ap.add_argument("--keep", type=Path, help="build the vaults here and keep them; reuse those already there")
    ap.add_argument("--dump", type=Path)
    ap.add_argument("--against", type=Path)
    ap.add_argument("--embedder", default="onnx")
    ap.add_argument("--from", dest="source", type=Path, help="copy the vaults from here and find their supersessions")
    ap.add_argument("--unlink", action="store_true", help="with --from: undo the copied vaults' supersessions first")
    args = ap.parse_args()

    from amem_cli import AgentMemory

    data = [q for q in json.loads(args.path.read_text(encoding="utf-8")) if not args.type or q["question_type"] in args.type]
    root = args.keep or Path(tempfile.mkdtemp(prefix="amem-lme-"))
    rows, build, links, unlinked = [], 0.0, 0, 0
    for n, q in enumerate(data, 1):
        sessions = sessions_of(q)
        turns = [t for s in sessions for t in s]
        evidence = [t for t in turns if t["evidence"]]
        vault = root / q["question_id"]
        fresh = not vault.exists()
        if fresh and args.source:
            shutil.copytree(args.source / q["question_id"], vault)
        default = None
        with AgentMemory(vault, llm="none", embedder=args.embedder) as memory:
            if fresh and args.source:
                unlinked += undo_supersessions(memory) if args.unlink else 0
                default = [h.metadata.get("turn") for h in memory.retrieve(q["question"], top_k=TOP_K)]
                start = time.perf_counter()
                links += find_supersessions(memory)
                build += time.perf_counter() - start
            elif fresh:
                start = time.perf_counter()
                for session in sessions:
                    if session:
                        memory.add_many({"content": t["text"], "created_at": t["date"], "metadata": {"turn": t["turn"]}}
                                        for t in session)
                build += time.perf_counter() - start
            ranked = [h.metadata.get("turn") for h in memory.retrieve(q["question"], top_k=TOP_K)]
        update = q["question_type"] == "knowledge-update"
        row = {"question_id": q["question_id"], "type": q["question_type"], **scores(ranked, evidence, update)}
        if default is not None:
            row.update({f"default {k}": v for k, v in scores(default, evidence, update).items()})
        rows.append(row)
        print(f"[{n}/{len(data)}] {q['question_id']} {q['question_type']} recall@10 {row['recall@10']:.2f}"
              + (f" latest first {bool(row['latest_first'])}" if "latest_first" in row else ""), file=sys.stderr)

    print(f"LongMemEval {args.path.name}: {len(rows)} questions, --llm none, top {TOP_K}"
          + (f"; vaults built in {build:.0f} s" if build else "")
          + (f"; {links} supersessions found in the vaults from {args.source}" if args.source else "")
          + (f" ({unlinked} they held undone first)" if args.unlink else ""))
    by_type = defaultdict(list)
    for r in rows:
        by_type[r["type"]].append(r)
        by_type["all"].append(r)
    print(f"{'question type':<27} {'n':>3} {'recall@10':>9} {'MRR':>6}")
    for name, rs in sorted(by_type.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        print(f"{name:<27} {len(rs):>3} {statistics.fmean(r['recall@10'] for r in rs):>9.3f} "
              f"{statistics.fmean(r['MRR'] for r in rs):>6.3f}")
    ku = [r["latest_first"] for r in rows if "latest_first" in r]
    if ku:
        print(f"knowledge-update: latest evidence first in {sum(ku):.0f} of {len(ku)} ({statistics.fmean(ku):.0%})")
    paired = [r for r in rows if "default recall@10" in r]
    if paired:
        print(f"\nthe same vaults before their supersessions were found (default), {len(paired)} questions: "
              "change, bootstrap 95% interval")
        for key in ("recall@10", "MRR", "latest_first"):
            diffs = [r[key] - r[f"default {key}"] for r in paired if key in r]
            if diffs:
                low, high = paired_interval(diffs)
                print(f"{key:<13} default {statistics.fmean(r[f'default {key}'] for r in paired if key in r):.3f} "
                      f"now {statistics.fmean(r[key] for r in paired if key in r):.3f}  {statistics.fmean(diffs):+.3f}  "
                      f"[{low:+.3f}, {high:+.3f}]  {sum(d > 0 for d in diffs)} up, {sum(d < 0 for d in diffs)} down")
    if args.dump:
        args.dump.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if args.against:
        before = {r["question_id"]: r for r in map(json.loads, args.against.read_text().splitlines())}
        pairs = [(r, before[r["question_id"]]) for r in rows if r["question_id"] in before]
        print(f"\nagainst {args.against.name}, {len(pairs)} questions in both: change, bootstrap 95% interval")
        for key in ("recall@10", "MRR", "latest_first"):
            diffs = [a[key] - b[key] for a, b in pairs if key in a and key in b]
            if diffs:
                low, high = paired_interval(diffs)
                print(f"{key:<13} {statistics.fmean(diffs):+.3f}  [{low:+.3f}, {high:+.3f}]  "
                      f"{sum(d > 0 for d in diffs)} up, {sum(d < 0 for d in diffs)} down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
