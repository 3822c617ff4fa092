"""The A-MEM pipeline at work: what it costs and what it makes, per `add`.

    python benchmarks/pipeline.py ../shared/data/locomo-dev.json [--turns 200] [--llm llama|none]

Adds the first N turns of the first LoCoMo conversation one `AgentMemory.add` at a time
("Speaker: text", the session's date), as an agent would, and prints: LLM calls per add,
seconds per add (p50, p95), the share of raw model outputs that were valid JSON for
their schema, the share of keywords found in the note's text, links per note,
evolutions per add and the fields that fell back. Run it once per `--llm`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from locomo import turns_of  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path, help="LoCoMo JSON (e.g. ../shared/data/locomo-dev.json)")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--llm", default="llama", help="llama (the bundled model, default) or none")
    parser.add_argument("--embedder", default="sentence-transformers")
    args = parser.parse_args()

    from amem_cli import AgentMemory
    from amem_cli.steps._text import grounded

    turns = turns_of(json.loads(args.path.read_text(encoding="utf-8"))[0]["conversation"])[: args.turns]
    seconds, calls = [], []
    with tempfile.TemporaryDirectory(prefix="amem-pipeline-") as tmp, \
            AgentMemory(tmp, embedder=args.embedder, llm=args.llm) as memory:
        memory.add("warm-up: load the models before timing")
        stats = memory._c.notes.pipeline.stats
        base_valid, base_fallbacks, base_evolutions = len(stats.valid_outputs), stats.fallbacks, stats.evolutions
        for t in turns:
            before = stats.llm_calls
            start = time.perf_counter()
            memory.add(t["text"], created_at=t["date"], metadata={"dia_id": t["dia_id"]})
            seconds.append(time.perf_counter() - start)
            calls.append(stats.llm_calls - before)
        notes = [n for n in memory._c.notes.list(limit=10**6) if "dia_id" in n.metadata]
        valid = stats.valid_outputs[base_valid:]
        keywords = [(k, n.content) for n in notes for k in n.keywords]
        links = sum(len(n.links) for n in notes)
        model = memory._c.llm.identity if memory._c.llm is not None else "none"

    p95 = sorted(seconds)[int(len(seconds) * 0.95)]
    print(f"A-MEM pipeline: {len(turns)} turns of {args.path.name}, one add each; llm={model}; "
          f"{os.cpu_count()} cores, Python {platform.python_version()}")
    rows = [
        ("LLM calls per add", f"{statistics.fmean(calls):.2f}"),
        ("seconds per add p50 / p95", f"{statistics.median(seconds):.2f} / {p95:.2f}"),
        ("valid model outputs", f"{sum(valid) / len(valid):.1%} of {len(valid)}" if valid else "n/a (no model)"),
        ("keywords found in the note's text", f"{sum(grounded(k, c) for k, c in keywords) / max(1, len(keywords)):.1%} of {len(keywords)}"),
        ("links per note (outgoing)", f"{links / max(1, len(notes)):.2f}"),
        ("evolutions per add", f"{(stats.evolutions - base_evolutions) / len(turns):.2f}"),
        ("fields that fell back per add", f"{(stats.fallbacks - base_fallbacks) / len(turns):.2f}"),
    ]
    for name, value in rows:
        print(f"{name:<36} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
