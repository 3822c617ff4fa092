"""The A-MEM pipeline at work: what it costs and what it makes, per `add`.

    python benchmarks/pipeline.py ../shared/data/locomo-dev.json [--turns 200] [--llm llama|none]
    python benchmarks/pipeline.py ../shared/data/locomo-dev.json --turns 60 --model-fields all --before ../before

Adds the first N turns of the first LoCoMo conversation one `AgentMemory.add` at a time
("Speaker: text", the session's date), as an agent would, and prints: LLM calls per add,
seconds per add (p50, p95), the share of raw model outputs that were valid JSON for
their schema, the share of keywords found in the note's text, links per note,
evolutions per add and the fields that fell back. Run it once per `--llm`.
`--model-fields`: amem's `model_fields` setting (default: amem's own, `auto`); `all`
measures every field the model can write. `--before DIR`: the same turns are added by
the amem whose source is in DIR too (a git worktree of an older commit, run with
PYTHONPATH=DIR), one after the other in this run, and both columns are printed in one
table. Each amem runs in a process of its own, once the 1-minute load average is under
0.7 (or after 90 s).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from internals import services  # noqa: E402
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from locomo import turns_of  # noqa: E402


def measure(args: argparse.Namespace) -> dict:
    """Add the turns with the amem this process imports; its figures."""
    import amem_cli
    from amem_cli import AgentMemory
    from amem_cli.steps._text import grounded

    turns = turns_of(json.loads(args.path.read_text(encoding="utf-8"))[0]["conversation"])[: args.turns]
    settings = {"model_fields": args.model_fields} if args.model_fields else {}
    seconds, calls = [], []
    with tempfile.TemporaryDirectory(prefix="amem-pipeline-") as tmp, \
            AgentMemory(tmp, embedder=args.embedder, llm=args.llm, **settings) as memory:
        memory.add("warm-up: load the models before timing")
        pipeline = services(memory).notes.pipeline
        stats = pipeline.stats
        base_valid, base_fallbacks, base_evolutions = len(stats.valid_outputs), stats.fallbacks, stats.evolutions
        for t in turns:
            before = stats.llm_calls
            start = time.perf_counter()
            memory.add(t["text"], created_at=t["date"], metadata={"dia_id": t["dia_id"]})
            seconds.append(time.perf_counter() - start)
            calls.append(stats.llm_calls - before)
        notes = [n for n in services(memory).notes.list(limit=10**6) if "dia_id" in n.metadata]
        valid = stats.valid_outputs[base_valid:]
        keywords = [(k, n.content) for n in notes for k in n.keywords]
        llm = services(memory).llm
        return {
            "source": str(Path(amem_cli.__file__).parent.parent),
            "model": llm.identity if llm is not None else "none",
            "threads": getattr(llm, "threads", None),
            "automatic threads": hasattr(llm, "fixed_threads") and llm.fixed_threads is None,
            "fields": ",".join(sorted(pipeline.settings.model_fields)) if llm is not None else "-",
            "turns": len(turns),
            "seconds": seconds,
            "calls": calls,
            "valid": [sum(valid), len(valid)],
            "keywords grounded": [sum(grounded(k, c) for k, c in keywords), len(keywords)],
            "links": sum(len(n.links) for n in notes) / max(1, len(notes)),
            "evolutions": (stats.evolutions - base_evolutions) / len(turns),
            "fallbacks": (stats.fallbacks - base_fallbacks) / len(turns),
        }


def settle(quiet: float = 0.7, most: float = 90.0) -> float:
    """Wait (at most `most` seconds) for the 1-minute load average to fall under `quiet`:
    work that ended just before still counts in it for a minute, and amem chooses its
    threads from it. Returns the load average then."""
    deadline = time.monotonic() + most
    while os.getloadavg()[0] >= quiet and time.monotonic() < deadline:
        time.sleep(5)
    return os.getloadavg()[0]


def run(args: argparse.Namespace, source: Path | None) -> dict:
    """`measure` in a new process running the amem in `source` (None: this one's)."""
    load = settle()
    argv = [sys.executable, __file__, str(args.path), "--turns", str(args.turns), "--llm", args.llm,
            "--embedder", args.embedder, "--measure"]
    if args.model_fields:
        argv += ["--model-fields", args.model_fields]
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    out = subprocess.run(argv, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"the run with {source or 'this amem'} failed ({out.returncode}):\n{out.stderr}")
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "load": load}


def rows_of(f: dict) -> dict[str, str]:
    seconds = sorted(f["seconds"])
    p95 = seconds[int(len(seconds) * 0.95)]
    valid, outputs = f["valid"]
    grounded, keywords = f["keywords grounded"]
    return {
        "model fields": f["fields"],
        "llama.cpp threads": f"{f['threads'] or '-'}" + (" (automatic; at the end)" if f["automatic threads"] else ""),
        "LLM calls per add (mean / max)": f"{statistics.fmean(f['calls']):.2f} / {max(f['calls'])}",
        "seconds per add p50 / p95": f"{statistics.median(seconds):.2f} / {p95:.2f}",
        "seconds per add mean": f"{statistics.fmean(seconds):.2f}",
        "load average (1 min) at the start": f"{f['load']:.2f}",
        "valid model outputs": f"{valid / outputs:.1%} of {outputs}" if outputs else "n/a (no model)",
        "keywords found in the note's text": f"{grounded / max(1, keywords):.1%} of {keywords}",
        "links per note (outgoing)": f"{f['links']:.2f}",
        "evolutions per add": f"{f['evolutions']:.2f}",
        "fields that fell back per add": f"{f['fallbacks']:.2f}",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path, help="LoCoMo JSON (e.g. ../shared/data/locomo-dev.json)")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--llm", default="llama", help="llama (the bundled model, default) or none")
    parser.add_argument("--embedder", default="sentence-transformers")
    parser.add_argument("--model-fields", help="amem's model_fields setting (default: amem's own); `all` for every field")
    parser.add_argument("--before", type=Path, metavar="DIR", help="also run the amem whose source is in DIR (PYTHONPATH=DIR)")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # one run, figures as JSON
    args = parser.parse_args()
    args.path = args.path.resolve()
    if args.measure:
        print(json.dumps(measure(args)))
        return 0

    load = os.getloadavg()[0]
    columns = {}
    if args.before:
        columns["before"] = run(args, args.before.resolve())
    columns["after"] = run(args, None)
    f = columns["after"]
    print(f"A-MEM pipeline: {f['turns']} turns of {args.path.name}, one add each; llm={f['model']}; "
          f"{os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average (1 min) before / after: {load:.2f} / {os.getloadavg()[0]:.2f}")
    for name, figures in columns.items():
        print(f"  {name}: the amem in {figures['source']}")
    table = {name: rows_of(figures) for name, figures in columns.items()}
    width = max(len(row) for row in table["after"])
    print(f"{'':<{width}}  " + "  ".join(f"{name:<24}" for name in table).rstrip())
    for row in table["after"]:
        print(f"{row:<{width}}  " + "  ".join(f"{rows[row]:<24}" for rows in table.values()).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
