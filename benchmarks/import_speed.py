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
Then the texts each case's last import embedded are embedded again, by the model alone in
this process, in the import's batches: the import's ceiling on this machine, in the same
run. Each case's figure that counts is its ratio to that rate (issue 40's targets: 0.6
with keywords given, 0.4 without, whose notes are embedded twice). On a loaded machine
wall-clock rates are noise: the CPU seconds of the command (its process and the warm
server's, from /proc) and of the model alone give the same ratio in CPU terms.
`--no-server`: the imports run in the command's own process. Figures only; nothing is
asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
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


def timed(argv: list[str], source: Path | None = None) -> tuple[float, dict, float]:
    """Seconds `argv` took, its JSON output and the CPU seconds its process used;
    `source`: the amem source it runs (PYTHONPATH)."""
    env = {**os.environ, **SETTINGS}
    if source is not None:
        env["PYTHONPATH"] = str(source)
    cpu0, t0 = children_cpu(), time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True, env=env)
    seconds, cpu = time.perf_counter() - t0, children_cpu() - cpu0
    if res.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    return seconds, json.loads(res.stdout), cpu


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's ended children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) a running process has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def command_cpu(cpu: float, server: dict) -> float:
    """The CPU seconds a command used: its own process's, and the warm server's it ran in
    (all of the server's since it started: the command started it)."""
    return cpu + (process_cpu(server["pid"]) if server.get("running") else 0.0)


def one_case(tmp: Path, name: str, data: Path, one: Path, options: list[str], source: Path | None) -> dict:
    """The import of `data` into a new vault, and the fixed cost (`one`, into another)."""
    amem = amem_argv()
    fixed_vault, vault = tmp / f"{name}-fixed", tmp / name
    try:
        timed([*amem, "--dir", str(fixed_vault), "init", "--json"], source)
        fixed_s, _, fixed_cpu = timed([*amem, "--dir", str(fixed_vault), "import", str(one), *options], source)
        fixed_cpu = command_cpu(fixed_cpu, timed([*amem, "--dir", str(fixed_vault), "server", "status", "--json"], source)[1])
        timed([*amem, "--dir", str(vault), "init", "--json"], source)
        command = [*amem, "--dir", str(vault), "import", str(data), *options]
        wall_s, report, cpu = timed(command, source)
        _, server, _ = timed([*amem, "--dir", str(vault), "server", "status", "--json"], source)
        cpu = command_cpu(cpu, server)  # read before `status` adds its own
        _, status, _ = timed([*amem, "--dir", str(vault), "status", "--json"], source)
    finally:
        for folder in (fixed_vault, vault):
            subprocess.run([*amem, "--dir", str(folder), "server", "stop"], capture_output=True,
                           env={**os.environ, **({"PYTHONPATH": str(source)} if source else {})})
    return {"vault": vault, "command": command, "wall": wall_s, "fixed": fixed_s, "cpu": cpu, "fixed_cpu": fixed_cpu,
            "report": report, "status": status, "server": bool(server.get("running"))}


def embedding_alone(vault: Path, embedder: str) -> tuple[float, float, int]:
    """Seconds and CPU seconds the embedder alone takes for the imported notes' texts
    (what an import embeds: content, context, keywords, tags; in batches of the import's
    size), and how many: the import's ceiling."""
    from amem_cli.api import AgentMemory
    from amem_cli.retrieve.fields import embedding_text
    from amem_cli.services.indexer import EMBED_BATCH

    with AgentMemory(vault, embedder=embedder, llm="none") as memory:
        index = services(memory).index
        texts = [embedding_text(n) for n in index.notes.get_many(index.notes.ids()).values()]
        model = services(memory).embedder
        model.embed(texts[:8])  # loaded and warm, as in the server
        cpu0, t0 = time.process_time(), time.perf_counter()
        for start in range(0, len(texts), EMBED_BATCH):
            model.embed(texts[start:start + EMBED_BATCH])
        return time.perf_counter() - t0, time.process_time() - cpu0, len(texts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=2000, help="how many notes to import (default 2000)")
    ap.add_argument("--embedder", default="onnx", help="onnx (amem's default), sentence-transformers or fake")
    ap.add_argument("--batch", type=int, default=256, help="amem import --batch (default 256)")
    ap.add_argument("--defer", action="store_true", help="amem import --defer: store and embed, queue the pipeline's work")
    ap.add_argument("--before", type=Path, metavar="DIR", help="also run the amem whose source is in DIR (PYTHONPATH=DIR)")
    ap.add_argument("--rounds", type=int, default=1, help="repeat the imports this many times, before and after taking turns (default 1)")
    ap.add_argument("--no-server", action="store_true", help="import in the command's own process, not the warm server")
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
    if args.no_server:
        SETTINGS["AMEM_SERVER"] = "off"
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
        # The model alone, on each case's own texts (those without keywords get the ones the pipeline made).
        alone = {label: embedding_alone(cases["after", label][-1]["vault"], args.embedder) for label in files}
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
    for label, (model_s, model_cpu, model_n) in alone.items():
        rows.append((f"the model alone, keywords {label}", f"{model_n / model_s:.1f} texts/s, {model_n / model_cpu:.1f} "
                     f"texts per CPU-second ({model_n} embedding texts of the last import, in process)"))
    for (version, label), runs in cases.items():
        rates = [args.notes / case["wall"] for case in runs]
        wall, fixed, cpu, fixed_cpu = (statistics.median(case[k] for case in runs) for k in ("wall", "fixed", "cpu", "fixed_cpu"))
        net = args.notes / (wall - fixed) if wall > fixed else None  # a tiny import can take less than one note's
        each = f"; rounds: {', '.join(f'{r:.1f}' for r in rates)}" if len(runs) > 1 else ""
        rows.append((f"{version}, keywords {label}", f"{statistics.median(rates):.1f} notes/s ("
                     f"{f'{net:.1f}' if net else 'n/a'} less the fixed cost of {fixed:.1f} s{each})"))
        model_s, model_cpu, model_n = alone[label]
        model_rate, model_cpu_rate = model_n / model_s, model_n / model_cpu
        cpu_rate = args.notes / (cpu - fixed_cpu) if cpu > fixed_cpu else None
        rows.append(("  ratio to the model alone", f"{statistics.median(rates) / model_rate:.2f} (whole command), "
                     + (f"{net / model_rate:.2f} (less the fixed cost)" if net else "n/a")))
        rows.append(("  in CPU time", f"{cpu:.1f} CPU-s ({fixed_cpu:.1f} fixed): "
                     + (f"{cpu_rate:.1f} notes per CPU-second, ratio {cpu_rate / model_cpu_rate:.2f}" if cpu_rate else "n/a")))
        counts = [f"{case['report']['imported']} / {case['status']['indexed']} / {case['status']['embedded']} / "
                  f"{case['status']['links']}" + ("" if case["server"] else "  (NOT through the warm server)") for case in runs]
        rows += [("  imported / indexed / embedded / links", c) for c in dict.fromkeys(counts)]  # once if the same each round
    if args.keep:
        rows.append(("kept", str(tmp)))
    width = max(len(k) for k, _ in rows)
    print("\namem import benchmark")
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
