"""What supersession detection costs, and a guard that making it cheaper changes no verdict.

    python benchmarks/supersession_cost.py collect PAIRS.jsonl \\
        --longmemeval ../shared/data/longmemeval-dev.json --questions 0,59,60 \\
        --locomo ../shared/data/locomo-dev.json --conversations 1
    python benchmarks/supersession_cost.py check PAIRS.jsonl

`collect` builds the vaults as the LongMemEval and LoCoMo benchmarks do (one `add_many`
a LongMemEval session, one a LoCoMo conversation; `--llm none`) and records every (new,
old) pair `Supersessions.detect` judges on the way, then adds the labelled supersession
sets (benchmarks/data/updates/update_pairs.jsonl and each `--pairs` file), each pair both
ways (`amem consolidate` asks both); with `judge`'s decision and reason for each. It prints
the CPU time (`time.process_time`) of the `add_many` calls and of detection within them.
Keep PAIRS.jsonl outside the repository: it holds the evaluation data's text.

`check` judges every recorded pair again with the code as it is now and prints the
pairs whose decision or reason differ (exit 1 if any), and the judged pairs a CPU second.
Run `collect` at a version before a change to the detector, `check` after it: a change
meant only to save work must show no difference.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

LABELLED = HERE / "data" / "updates" / "update_pairs.jsonl"


def _load(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").split("\n")  # not splitlines(): a chat turn may hold U+2028
    return [json.loads(line) for line in lines if line.strip()]


def _built_pairs(builds: list[tuple[str, list[list[dict]]]], embedder: str) -> list[dict]:
    """The (new, old) pairs detection judges while each vault is built (each a list of
    `add_many` batches), and the CPU time it takes."""
    from amem_cli import AgentMemory
    from amem_cli.services import supersession

    judged: list[tuple[str, str, str]] = []
    source = ""
    original_judge, original_detect = supersession.judge, supersession.Supersessions.detect
    detect_cpu = 0.0

    def recording_judge(new: str, old: str):
        judged.append((source, new, old))
        return original_judge(new, old)

    def timed_detect(self, notes):
        nonlocal detect_cpu
        start = time.process_time()
        try:
            return original_detect(self, notes)
        finally:
            detect_cpu += time.process_time() - start

    supersession.judge, supersession.Supersessions.detect = recording_judge, timed_detect
    root = Path(tempfile.mkdtemp(prefix="amem-supersession-cost-"))
    add_cpu, notes = 0.0, 0
    try:
        for source, batches in builds:
            with AgentMemory(root / re.sub(r"\W+", "-", source), embedder=embedder, llm="none") as memory:
                for batch in batches:
                    start = time.process_time()
                    memory.add_many({"content": t["text"], "created_at": t["date"]} for t in batch)
                    add_cpu += time.process_time() - start
                    notes += len(batch)
            print(f"built {source}: {len(judged)} pairs judged so far", file=sys.stderr, flush=True)
    finally:
        supersession.judge, supersession.Supersessions.detect = original_judge, original_detect
        shutil.rmtree(root, ignore_errors=True)
    print(f"add_many: {notes} notes, {add_cpu:.1f} s CPU ({notes / add_cpu:.3g} notes per CPU second); "
          f"detection {detect_cpu:.1f} s CPU ({100 * detect_cpu / add_cpu:.0f} %), {len(judged)} pairs judged")
    return [{"source": s, "new": new, "old": old} for s, new, old in judged]


def collect(args: argparse.Namespace) -> int:
    from amem_cli.steps.supersede import judge

    builds: list[tuple[str, list[list[dict]]]] = []
    if args.longmemeval:
        from longmemeval import sessions_of

        questions = json.loads(args.longmemeval.read_text(encoding="utf-8"))
        for i in (int(x) for x in args.questions.split(",")):
            builds.append((f"longmemeval {questions[i]['question_id']}", sessions_of(questions[i])))
    if args.locomo:
        from locomo import turns_of

        for sample in json.loads(args.locomo.read_text(encoding="utf-8"))[:args.conversations]:
            builds.append((f"locomo {sample['sample_id']}", [turns_of(sample["conversation"])]))
    pairs = _built_pairs(builds, args.embedder) if builds else []
    for path in [LABELLED, *args.pairs]:
        for p in _load(path):
            pairs.append({"source": f"{path.name} {p['id']}", "new": p["new"]["text"], "old": p["old"]["text"]})
            pairs.append({"source": f"{path.name} {p['id']} reversed", "new": p["old"]["text"], "old": p["new"]["text"]})
    seen, out = set(), []
    for p in pairs:
        if (p["new"], p["old"]) not in seen:
            seen.add((p["new"], p["old"]))
            verdict = judge(p["new"], p["old"])
            out.append({**p, "decision": verdict.decision, "reason": verdict.reason})
    args.out.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in out), encoding="utf-8")
    decisions = {d: sum(p["decision"] == d for p in out) for d in ("supersedes", "unsure", "no")}
    print(f"{len(out)} distinct pairs ({len(pairs)} judged) written to {args.out}: {decisions}")
    return 0


def check(args: argparse.Namespace) -> int:
    from amem_cli.steps import statements, supersede

    pairs = _load(args.pairs_file)
    for cached in (statements.read, supersede._says_change):
        cached.cache_clear()  # each run starts as a process does
    start = time.process_time()
    verdicts = [supersede.judge(p["new"], p["old"]) for p in pairs]
    cpu = time.process_time() - start
    differ = [(p, v) for p, v in zip(pairs, verdicts) if (v.decision, v.reason) != (p["decision"], p["reason"])]
    for p, v in differ[:args.show]:
        print(f"- {p['source']}: was {p['decision']} ({p['reason']}), now {v.decision} ({v.reason})\n"
              f"  new: {p['new'][:200]!r}\n  old: {p['old'][:200]!r}")
    print(f"{len(pairs)} pairs judged in {cpu:.2f} s CPU ({len(pairs) / cpu:.0f} pairs per CPU second); "
          f"{len(differ)} differ from {args.pairs_file}")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="record the pairs detection judges, and its verdicts now")
    c.add_argument("out", type=Path, help="where to write the pairs (JSON lines), outside the repository")
    c.add_argument("--longmemeval", type=Path, help="LongMemEval JSON (../shared/data/longmemeval-dev.json)")
    c.add_argument("--questions", default="0,59,60", help="which questions' vaults to build (indexes; default 0,59,60)")
    c.add_argument("--locomo", type=Path, help="LoCoMo JSON (../shared/data/locomo-dev.json)")
    c.add_argument("--conversations", type=int, default=1, help="how many LoCoMo conversations to build (default 1)")
    c.add_argument("--pairs", type=Path, action="append", default=[], help="another labelled set, as update_pairs.jsonl")
    c.add_argument("--embedder", default="onnx", help="onnx (default: as amem runs; links, and so candidates, follow it) or fake")
    k = sub.add_parser("check", help="judge the recorded pairs again: differences, pairs per CPU second")
    k.add_argument("pairs_file", type=Path)
    k.add_argument("--show", type=int, default=20, help="how many differences to print (default 20)")
    args = ap.parse_args()
    return collect(args) if args.command == "collect" else check(args)


if __name__ == "__main__":
    raise SystemExit(main())
