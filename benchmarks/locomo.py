"""Retrieval on LoCoMo: amem's hybrid retriever against BM25 alone and dense alone.

    python benchmarks/locomo.py ../shared/data/locomo-dev.json [--llm none] [--set fusion=score]

Each conversation goes into a fresh vault through the Python API (one `add_many` call,
in order, one note per turn "Speaker: text", the image caption appended; created = the
session's date; the turn's dia_id in metadata). Every question of categories 1-4 is
asked through `AgentMemory.retrieve(question, top_k=10)`; the two baselines rank the
same turns within the same conversation. Prints recall@5, recall@10, hit@10 and MRR
(of the first evidence turn in the top 10) per category and overall, and amem's
recall@10 and MRR per conversation, and each conversation's boxes: how many, the share of
its turns in boxes of 3 or more (the inbox aside), the biggest box's share and the inbox's.

`--dump FILE` writes each question's figures (JSON lines); `--against FILE` compares
this run's hybrid with such an earlier dump question by question: the mean change with
a bootstrap 95% interval, and how many questions gained or lost. On a few hundred
questions a change of 0.01 in recall@10 is often noise; this says whether it is.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from internals import services  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TOP_K = 10


def turns_of(conversation: dict) -> list[dict]:
    """The conversation's turns in order, each with its session's date."""
    sessions = sorted(
        (int(m.group(1)), key)
        for key in conversation
        if (m := re.fullmatch(r"session_(\d+)", key)) and isinstance(conversation[key], list)
    )
    out = []
    for number, key in sessions:
        date = conversation.get(f"session_{number}_date_time")
        for turn in conversation[key]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [image: {turn['blip_caption']}]"
            out.append({"dia_id": turn["dia_id"], "text": text, "date": date})
    return out


def evidence_of(qa: dict, known: set[str]) -> list[str]:
    """The QA item's evidence turn ids, with the data's few malformed ids repaired."""
    ids = []
    for item in qa.get("evidence", []):
        for part in str(item).split(";"):
            part = part.strip().replace("D:", "D")
            m = re.fullmatch(r"D(\d+):(\d+)", part)
            if m and (norm := f"D{int(m.group(1))}:{int(m.group(2))}") in known:
                ids.append(norm)
    return list(dict.fromkeys(ids))


class BM25:
    """Plain Okapi BM25 (k1 1.2, b 0.75) over lower-cased word tokens: the baseline."""

    def __init__(self, docs: list[str], k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.docs = [Counter(self.tokens(d)) for d in docs]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / len(self.docs)
        df = Counter(t for d in self.docs for t in d)
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    @staticmethod
    def tokens(text: str) -> list[str]:
        return re.findall(r"\w+", text.lower())

    def rank(self, query: str) -> list[int]:
        terms = set(self.tokens(query))
        scores = []
        for i, doc in enumerate(self.docs):
            s = 0.0
            norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg)
            for t in terms:
                f = doc.get(t)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + norm)
            scores.append(s)
        return sorted(range(len(self.docs)), key=lambda i: -scores[i])


def metrics(ranked: list[str], gold: list[str]) -> dict[str, float]:
    top = ranked[:TOP_K]
    first = next((r for r, i in enumerate(top, 1) if i in gold), None)
    return {
        "recall@5": len(set(ranked[:5]) & set(gold)) / len(gold),
        "recall@10": len(set(top) & set(gold)) / len(gold),
        "hit@10": 1.0 if first else 0.0,
        "MRR": 1.0 / first if first else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path, help="LoCoMo JSON (e.g. ../shared/data/locomo-dev.json)")
    parser.add_argument("--llm", default="none", help="'none' (default: the pipeline's deterministic fallbacks) or 'llama' (the bundled model)")
    parser.add_argument("--embedder", default="sentence-transformers", help="sentence-transformers (default) or fake")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an amem setting, e.g. fusion=score")
    parser.add_argument("--conversations", type=int, metavar="N", help="only the first N conversations (the bundled model takes ~1 s a turn on one thread: 2,152 turns in 38 min)")
    parser.add_argument("--sample", action="append", metavar="ID", help="only this conversation (its sample_id, e.g. conv-30); repeatable")
    parser.add_argument("--keep", type=Path, help="build the vaults under this folder and keep them; reuse them next time")
    parser.add_argument("--dump", type=Path, metavar="FILE", help="write each question's figures here (JSON lines)")
    parser.add_argument("--against", type=Path, metavar="FILE", help="compare the hybrid with an earlier --dump, question by question")
    args = parser.parse_args()

    from amem_cli import AgentMemory

    settings = dict(kv.split("=", 1) for kv in args.set)
    settings["llm"] = args.llm
    data = json.loads(args.path.read_text(encoding="utf-8"))[: args.conversations]
    if args.sample:
        data = [s for s in data if s["sample_id"] in args.sample]
        if not data:
            parser.error(f"no conversation {', '.join(args.sample)} in {args.path}")
    scores: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    latencies, add_seconds, n_turns = [], 0.0, 0
    per_question: list[dict] = []
    boxes: dict[str, dict] = {}
    root = args.keep or Path(tempfile.mkdtemp(prefix="amem-locomo-"))
    for sample in data:
        turns = turns_of(sample["conversation"])
        ids = [t["dia_id"] for t in turns]
        known = set(ids)
        questions = [q for q in sample["qa"] if q.get("category") in CATEGORIES and evidence_of(q, known)]
        vault = root / sample["sample_id"]
        reuse = args.keep is not None and vault.exists()
        with AgentMemory(vault, embedder=args.embedder, **settings) as memory:
            if not reuse:
                start = time.perf_counter()
                notes = memory.add_many(
                    {"content": t["text"], "created_at": t["date"], "metadata": {"dia_id": t["dia_id"]}} for t in turns
                )
                add_seconds += time.perf_counter() - start
                n_turns += len(notes)
            boxes[sample["sample_id"]] = box_figures(memory)
            embedder = services(memory).embedder  # the same model, for the dense baseline
            import numpy as np

            doc_vectors = np.asarray(embedder.embed([t["text"] for t in turns]))
            bm25 = BM25([t["text"] for t in turns])
            for qa in questions:
                gold = evidence_of(qa, known)
                cat = CATEGORIES[qa["category"]]
                start = time.perf_counter()
                hits = memory.retrieve(qa["question"], top_k=TOP_K)
                latencies.append(time.perf_counter() - start)
                ranked = {
                    "amem hybrid": [n.metadata["dia_id"] for n in hits],
                    "BM25": [ids[i] for i in bm25.rank(qa["question"])[:TOP_K]],
                    "dense": [
                        ids[i] for i in np.argsort(-(doc_vectors @ np.asarray(embedder.embed([qa["question"]])[0])))[:TOP_K]
                    ],
                }
                per_question.append({"sample_id": sample["sample_id"], "question": qa["question"], "category": cat})
                for name, order in ranked.items():
                    m = metrics(order, gold)
                    per_question[-1][name] = m
                    scores[name][cat].append(m)
                    scores[name]["overall"].append(m)
                    scores[name][sample["sample_id"], cat].append(m)
                    scores[name][sample["sample_id"], "overall"].append(m)

    print(f"LoCoMo retrieval: {args.path.name}, {len(data)} conversations, "
          f"{len(scores['BM25']['overall'])} questions (categories 1-4), llm={args.llm}, settings={settings or 'defaults'}")
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}")
    if add_seconds:
        print(f"add_many: {n_turns} notes in {add_seconds:.0f} s ({n_turns / add_seconds:.3g} notes/s)")
    print(f"retrieve p50 {statistics.median(latencies) * 1000:.1f} ms, "
          f"p95 {sorted(latencies)[int(len(latencies) * 0.95)] * 1000:.1f} ms")
    header = f"{'retriever':<12} {'category':<12} {'n':>4} " + " ".join(f"{m:>9}" for m in ("recall@5", "recall@10", "hit@10", "MRR"))
    print(header)
    print("-" * len(header))
    for group in ["overall", *CATEGORIES.values()]:
        for name in ("BM25", "dense", "amem hybrid"):
            rows = scores[name][group]
            if not rows:  # a category the chosen conversations do not ask
                continue
            means = {k: statistics.fmean(r[k] for r in rows) for k in rows[0]}
            print(f"{name:<12} {group:<12} {len(rows):>4} " + " ".join(f"{means[k]:>9.3f}" for k in means))
        print()
    # A change should help each conversation, not only their mean.
    print("amem hybrid per conversation: recall@10 / MRR (n)")
    groups = ["overall", *CATEGORIES.values()]
    print(f"{'conversation':<14}" + "".join(f"{g:>20}" for g in groups))
    for sample in data:
        cells = []
        for group in groups:
            rows = scores["amem hybrid"][sample["sample_id"], group]
            cell = f"{statistics.fmean(r['recall@10'] for r in rows):.3f} / {statistics.fmean(r['MRR'] for r in rows):.3f} ({len(rows)})" if rows else "-"
            cells.append(f"{cell:>20}")
        print(f"{sample['sample_id']:<14}" + "".join(cells))
    print("\nboxes per conversation: boxes (the inbox aside), turns in boxes of 3+, the biggest box, the inbox")
    for sample_id, b in boxes.items():
        print(f"{sample_id:<14} {b['boxes']:>5} {b['in 3+']:>7.1%} {b['biggest']:>7.1%} ({b['biggest box']}) {b['inbox']:>7.1%}")
    if args.dump:
        args.dump.write_text("".join(json.dumps(q) + "\n" for q in per_question), encoding="utf-8")
    if args.against:
        compare(per_question, args.against)
    return 0


def box_figures(memory) -> dict:
    """The vault's boxes: how many (the inbox aside), the share of its notes in one of 3 or
    more notes, the biggest one's share, the inbox's share."""
    index = services(memory).index
    sizes = {box: n for box, n in index.notes.boxes() if box != "inbox"}
    notes = index.notes.get_many(index.notes.ids(), links=False).values()
    total = max(len(notes), 1)
    biggest = max(sizes, key=sizes.get, default="-")
    return {"boxes": len(sizes), "in 3+": sum(any(sizes.get(b, 0) >= 3 for b in n.boxes) for n in notes) / total,
            "biggest": sizes.get(biggest, 0) / total, "biggest box": biggest,
            "inbox": sum("inbox" in n.boxes for n in notes) / total}


def compare(now: list[dict], path: Path, *, rounds: int = 10_000) -> None:
    """The hybrid's change from an earlier dump, paired over the questions both asked:
    over all of them, then by category."""
    before = _by_question(map(json.loads, path.read_text().splitlines()))
    pairs = [(q, before[key]) for key, q in _by_question(now).items() if key in before]
    print(f"\namem hybrid against {path.name}, {len(pairs)} questions in both: change, bootstrap 95% interval, questions up/down")
    for line in _changes(pairs, rounds):
        print(line)
    for category in sorted({q["category"] for q, _ in pairs}):
        group = [(a, b) for a, b in pairs if a["category"] == category]
        for line in _changes(group, rounds):
            print(f"  {category:<26} ({len(group):>3}) {line}")


def _changes(pairs: list[tuple[dict, dict]], rounds: int) -> list[str]:
    lines = []
    for key in ("recall@10", "MRR"):
        diffs = [a["amem hybrid"][key] - b["amem hybrid"][key] for a, b in pairs]
        low, high = paired_interval(diffs, rounds=rounds)
        up, down = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
        lines.append(f"{key:<10} {statistics.fmean(diffs):+.3f}  [{low:+.3f}, {high:+.3f}]  {up} up, {down} down")
    return lines


def paired_interval(diffs: list[float], *, rounds: int = 10_000) -> tuple[float, float]:
    """A bootstrap 95% interval of the mean of paired differences. Seeded: the same
    interval for the same runs."""
    rng = random.Random(0)
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(rounds))
    return means[int(rounds * 0.025)], means[int(rounds * 0.975)]


def _by_question(rows) -> dict[tuple, dict]:
    """Each question's row by (conversation, question, how many times asked before): a
    question a conversation asks twice is paired with its own twin."""
    seen: Counter = Counter()
    out = {}
    for q in rows:
        key = (q["sample_id"], q["question"])
        out[(*key, seen[key])] = q
        seen[key] += 1
    return out


if __name__ == "__main__":
    sys.exit(main())
