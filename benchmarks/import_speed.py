"""How fast `amem import` brings in a JSONL file, with keywords given and without.

    .venv/bin/python benchmarks/import_speed.py --notes 10000           # the real all-MiniLM-L6-v2
    .venv/bin/python benchmarks/import_speed.py --notes 2000 --embedder fake
    .venv/bin/python benchmarks/import_speed.py --notes 10000 --before ../before   # and an older amem, in the same run
    .venv/bin/python benchmarks/import_speed.py --notes 3000 --before ../before --rounds 3   # taking turns, 3 times

Writes N varied notes (the seeded generator of foundation.py: content, keywords, tags,
created_at, metadata) to a JSONL file, and the same notes without their keywords (so the
pipeline extracts them, as for notes people write), then runs `amem import` of each on a
new vault the way a user does (the `amem` script in a new process, `--llm none`: the
pipeline builds and links notes without a model; the command goes through the vault's
warm server, which it starts) and prints notes/s over the whole command, and again less
the command's fixed cost (start-up and model load: an import of one note into another
new vault, timed the same way). `--before DIR`: the same imports by the amem whose
source is in DIR (a git worktree of an older commit: it runs with PYTHONPATH=DIR), so
a change is measured before and after on one machine in one run. `--rounds N` repeats
the imports N times, before and after taking turns, and gives each figure's median and
every round's: on a shared 2-core machine one 10,000-note import moves by 10-20% from one run
to the next, so a single pair says little. `--defer` only stores
and embeds (the pipeline's work is queued). The servers started are stopped at the end.
Then the texts the last import embedded are embedded again, by the model alone in this
process: the import's ceiling on this machine, in the same run. Figures only; nothing
is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from internals import services  # noqa: E402

from foundation import amem_argv, make_notes  # noqa: E402


def write_jsonl(path: Path, n: int, keywords: bool) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for note in make_notes(n):
            note["created_at"] = note["created_at"].isoformat()
            if not keywords:
                del note["keywords"]
            fh.write(json.dumps(note) + "\n")


# Settings by environment, not by flags: a server the CLI starts takes the environment
# but not the flags (and a server with other settings is stopped, the command run here).
SETTINGS = {"AMEM_LLM": "none"}


def timed(argv: list[str], source: Path | None = None) -> tuple[float, dict]:
    """Seconds `argv` took and its JSON output; `source`: the amem source it runs (PYTHONPATH)."""
    env = {**os.environ, **SETTINGS}
    if source is not None:
        env["PYTHONPATH"] = str(source)
    t0 = time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    return seconds, json.loads(res.stdout)


def one_case(tmp: Path, name: str, data: Path, one: Path, options: list[str], source: Path | None) -> dict:
    """The import of `data` into a new vault, and the fixed cost (`one`, into another)."""
    amem = amem_argv()
    fixed_vault, vault = tmp / f"{name}-fixed", tmp / name
    try:
        timed([*amem, "--dir", str(fixed_vault), "init", "--json"], source)
        fixed_s, _ = timed([*amem, "--dir", str(fixed_vault), "import", str(one), *options], source)
        timed([*amem, "--dir", str(vault), "init", "--json"], source)
        command = [*amem, "--dir", str(vault), "import", str(data), *options]
        wall_s, report = timed(command, source)
        _, status = timed([*amem, "--dir", str(vault), "status", "--json"], source)
        _, server = timed([*amem, "--dir", str(vault), "server", "status", "--json"], source)
    finally:
        for folder in (fixed_vault, vault):
            subprocess.run([*amem, "--dir", str(folder), "server", "stop"], capture_output=True,
                           env={**os.environ, **({"PYTHONPATH": str(source)} if source else {})})
    return {"vault": vault, "command": command, "wall": wall_s, "fixed": fixed_s, "report": report,
            "status": status, "server": bool(server.get("running"))}


def embedding_alone(vault: Path, embedder: str) -> tuple[float, int]:
    """Seconds the embedder alone takes for the imported notes' texts (what an import
    embeds: content, context, keywords, tags), and how many: the import's ceiling."""
    from amem_cli.api import AgentMemory

    with AgentMemory(vault, embedder=embedder, llm="none") as memory:
        index = services(memory).index
        texts = [n.embedding_text() for n in index.notes.get_many(index.notes.ids()).values()]
        model = services(memory).embedder
        model.embed(texts[:8])  # loaded and warm, as in the server
        t0 = time.perf_counter()
        model.embed(texts)
        return time.perf_counter() - t0, len(texts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=2000, help="how many notes to import (default 2000)")
    ap.add_argument("--embedder", default="onnx", help="onnx (amem's default), sentence-transformers or fake")
    ap.add_argument("--batch", type=int, default=256, help="amem import --batch (default 256)")
    ap.add_argument("--defer", action="store_true", help="amem import --defer: store and embed, queue the pipeline's work")
    ap.add_argument("--before", type=Path, metavar="DIR", help="also run the amem whose source is in DIR (PYTHONPATH=DIR)")
    ap.add_argument("--rounds", type=int, default=1, help="repeat the imports this many times, before and after taking turns (default 1)")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder (vaults and JSONL)")
    args = ap.parse_args()

    from amem_cli import __version__

    tmp = Path(tempfile.mkdtemp(prefix="amem-import-"))
    files = {}
    for keywords in (True, False):
        label = "given" if keywords else "left out"
        files[label] = (tmp / f"notes-{len(files)}.jsonl", tmp / f"one-{len(files)}.jsonl")
        write_jsonl(files[label][0], args.notes, keywords)
        write_jsonl(files[label][1], 1, keywords)
    SETTINGS["AMEM_EMBEDDER"] = args.embedder
    options = ["--batch", str(args.batch), "--json", *(["--defer"] if args.defer else [])]
    sources = {**({"before": args.before.resolve()} if args.before else {}), "after": None}
    load = os.getloadavg()[0]
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    cases: dict[tuple[str, str], list[dict]] = {}
    try:
        for _ in range(args.rounds):
            for version, source in sources.items():
                for label, (data, one) in files.items():
                    runs = cases.setdefault((version, label), [])
                    runs.append(one_case(tmp, f"{version}-{len(runs)}-{label.replace(' ', '-')}", data, one, options, source))
        last = cases["after", "left out"][-1]
        model_s, model_n = embedding_alone(last["vault"], args.embedder)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    rows = [
        ("amem", __version__ + (f" (after); before: the source in {args.before}" if args.before else "")),
        ("python", platform.python_version()),
        ("platform", platform.platform()),
        ("cpu count", str(os.cpu_count())),
        ("load average (1 min) before / after", f"{load:.2f} / {os.getloadavg()[0]:.2f}"),
        ("embedder", last["status"]["embedding_model"] or args.embedder),
        ("command", " ".join(f"{k}={v}" for k, v in SETTINGS.items()) + " " + shlex.join(last["command"])),
        ("notes", f"{args.notes} a run" + (f", {args.rounds} rounds (figures: median, then each round)" if args.rounds > 1 else "")),
    ]
    for (version, label), runs in cases.items():
        rates = [args.notes / case["wall"] for case in runs]
        wall, fixed = (statistics.median(case[k] for case in runs) for k in ("wall", "fixed"))
        net = f"{args.notes / (wall - fixed):.1f}" if wall > fixed else "n/a"  # a tiny import can take less than one note's
        each = f"; rounds: {', '.join(f'{r:.1f}' for r in rates)}" if len(runs) > 1 else ""
        rows.append((f"{version}, keywords {label}", f"{statistics.median(rates):.1f} notes/s ({net} "
                     f"less the fixed cost of {fixed:.1f} s{each})"))
        counts = [f"{case['report']['imported']} / {case['status']['indexed']} / {case['status']['embedded']} / "
                  f"{case['status']['links']}" + ("" if case["server"] else "  (NOT through the warm server)") for case in runs]
        rows += [("  imported / indexed / embedded / links", c) for c in dict.fromkeys(counts)]  # once if the same each round
    rows.append(("the model alone on the same texts", f"{model_n / model_s:.1f} notes/s (the ceiling: {model_n} embedding texts, in process)"))
    if args.keep:
        rows.append(("kept", str(tmp)))
    width = max(len(k) for k, _ in rows)
    print("\namem import benchmark")
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
