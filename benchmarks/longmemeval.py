"""Retrieval on LongMemEval: amem's hybrid retriever against BM25, turn by turn.

    nice -n 10 python benchmarks/longmemeval.py ../shared/data/longmemeval-dev.json --keep /tmp/lme
    python benchmarks/longmemeval.py ../shared/data/longmemeval-dev.json --reuse /tmp/lme --set diversity=0

Each question gets its own fresh vault: its haystack, one note a turn ("user: ..." /
"assistant: ..."), each session added by one `add_many` call (so a session is a
sequence), every turn dated by its session; the turn's place (session:turn) in metadata.
The question is asked through `AgentMemory.retrieve(question, top_k=10, now=its date)`,
and plain BM25 ranks the same turns. Prints, by question type and overall, turn-level
recall@5, recall@10, hit@10 and MRR (of the first evidence turn in the top 10), and
session-level any@5 (is a turn of an evidence session among the top 5: the measure
most published LongMemEval figures give).

`--keep DIR` builds the vaults there and keeps them (a vault already there is used as it
is, so an interrupted build goes on where it stopped); `--reuse DIR` searches kept vaults
and never builds one. `--dump` / `--against` as in locomo.py: each question's figures,
and the paired change from an earlier dump with a bootstrap 95% interval, by type.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from locomo import BM25, compare, metrics  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TYPES = ("single-session-user", "single-session-assistant", "single-session-preference", "multi-session",
         "knowledge-update", "temporal-reasoning")
TOP_K = 10


def date_of(stamp: str) -> str:
    """LongMemEval's "2023/05/30 (Tue) 10:18" as amem reads it ("2023/05/30 10:18")."""
    return re.sub(r"\s*\(\w+\)\s*", " ", stamp).strip()


def sessions_of(question: dict) -> list[list[dict]]:
    """The haystack's sessions, each a list of its turns with their text, place and
    date; turns with no text (a handful) are left out: they cannot be notes."""
    out = []
    for s, (session, stamp) in enumerate(zip(question["haystack_sessions"], question["haystack_dates"])):
        out.append([
            {"turn": f"{s}:{t}", "text": f"{turn['role']}: {turn['content'].strip()}", "date": date_of(stamp),
             "evidence": bool(turn.get("has_answer"))}
            for t, turn in enumerate(session) if turn["content"].strip()
        ])
    return out


def any_at(ranked: list[str], gold: list[str], k: int = 5) -> float:
    """Whether a turn of an evidence session is among the top k (session:turn ids)."""
    sessions = {g.split(":")[0] for g in gold}
    return 1.0 if any(r.split(":")[0] in sessions for r in ranked[:k]) else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path, help="LongMemEval JSON (e.g. ../shared/data/longmemeval-dev.json)")
    parser.add_argument("--llm", default="none", help="'none' (default: the deterministic fallbacks) or 'llama'")
    parser.add_argument("--embedder", default="onnx", help="onnx (default, as amem runs: 10x quicker than sentence-transformers on long turns), sentence-transformers or fake")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an amem setting, e.g. diversity=0")
    parser.add_argument("--type", action="append", choices=TYPES, help="only questions of this type; repeatable")
    parser.add_argument("--questions", type=int, metavar="N", help="only the first N questions")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--keep", type=Path, metavar="DIR", help="build the vaults under DIR and keep them (those there are used as they are)")
    where.add_argument("--reuse", type=Path, metavar="DIR", help="search the vaults kept under DIR; build none")
    parser.add_argument("--dump", type=Path, metavar="FILE", help="write each question's figures here (JSON lines)")
    parser.add_argument("--against", type=Path, metavar="FILE", help="compare the hybrid with an earlier --dump, question by question")
    args = parser.parse_args()

    from amem_cli import AgentMemory

    settings = dict(kv.split("=", 1) for kv in args.set)
    settings["llm"] = args.llm
    data = json.loads(args.path.read_text(encoding="utf-8"))
    data = [q for q in data if not args.type or q["question_type"] in args.type][: args.questions]
    root = args.reuse or args.keep or Path(tempfile.mkdtemp(prefix="amem-longmemeval-"))
    if args.reuse and (missing := [q["question_id"] for q in data if not (root / q["question_id"]).is_dir()]):
        parser.error(f"{len(missing)} of the vaults are not under {root} (e.g. {missing[0]}): build them with --keep")

    scores: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    per_question: list[dict] = []
    add_seconds, n_turns = 0.0, 0
    for n, question in enumerate(data, 1):
        sessions = sessions_of(question)
        turns = [t for s in sessions for t in s]
        ids = [t["turn"] for t in turns]
        gold = [t["turn"] for t in turns if t["evidence"]]
        vault = root / question["question_id"]
        build = not vault.is_dir()
        if build:
            # Built aside and moved in whole: a vault under its own name is complete.
            part = root / f"{question['question_id']}.part"
            shutil.rmtree(part, ignore_errors=True)
            start = time.perf_counter()
            with AgentMemory(part, embedder=args.embedder, **settings) as memory:
                for session in sessions:
                    memory.add_many(
                        {"content": t["text"], "created_at": t["date"], "metadata": {"turn": t["turn"]}} for t in session
                    )
            part.rename(vault)
            add_seconds += time.perf_counter() - start
            n_turns += len(turns)
        with AgentMemory(vault, embedder=args.embedder, **settings) as memory:
            hits = memory.retrieve(question["question"], top_k=TOP_K, now=date_of(question["question_date"]))
        ranked = {
            "amem hybrid": [h.metadata["turn"] for h in hits],
            "BM25": [ids[i] for i in BM25([t["text"] for t in turns]).rank(question["question"])[:TOP_K]],
        }
        kind = question["question_type"]
        per_question.append({"sample_id": question["question_id"], "question": question["question"], "category": kind})
        for name, order in ranked.items():
            m = {**metrics(order, gold), "any@5": any_at(order, gold)}
            per_question[-1][name] = m
            scores[name][kind].append(m)
            scores[name]["all"].append(m)
        if build:
            print(f"built {n} of {len(data)} vaults ({add_seconds:.0f} s so far)", file=sys.stderr, flush=True)

    print(f"LongMemEval retrieval: {args.path.name}, {len(data)} questions, llm={args.llm}, settings={settings}")
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")
    if add_seconds:
        print(f"add_many: {n_turns} notes in {add_seconds:.0f} s ({n_turns / add_seconds:.3g} notes/s)")
    keys = ("recall@5", "recall@10", "hit@10", "MRR", "any@5")
    header = f"{'retriever':<12} {'question type':<26} {'n':>4} " + " ".join(f"{k:>9}" for k in keys)
    print(header)
    print("-" * len(header))
    for group in [*TYPES, "all"]:
        for name in ("BM25", "amem hybrid"):
            rows = scores[name][group]
            if rows:
                print(f"{name:<12} {group:<26} {len(rows):>4} " + " ".join(f"{statistics.fmean(r[k] for r in rows):>9.3f}" for k in keys))
        print()
    if args.dump:
        args.dump.write_text("".join(json.dumps(q) + "\n" for q in per_question), encoding="utf-8")
    if args.against:
        compare(per_question, args.against)
    return 0


if __name__ == "__main__":
    sys.exit(main())
