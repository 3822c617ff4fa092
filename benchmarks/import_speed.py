"""How fast `amem import` brings in a JSONL file.

    .venv/bin/python benchmarks/import_speed.py --notes 10000           # the real all-MiniLM-L6-v2
    .venv/bin/python benchmarks/import_speed.py --notes 2000 --embedder fake

Writes N varied notes (the seeded generator of foundation.py: content, keywords, tags,
created_at, metadata) to a JSONL file, then runs `amem import` on a new vault the way a
user does (the `amem` script in a new process, `--llm none`: the pipeline builds and
links notes without a model; the command goes through the vault's warm server, which it
starts) and prints notes/s over the whole command, and again less the command's fixed
cost (start-up and model load: an import of one note into another new vault, timed the
same way). `--defer` only stores and embeds (the pipeline's work is queued);
`--no-keywords` leaves keywords out, so the pipeline extracts them. The servers started
are stopped at the end. Then the same texts the import embedded are embedded again, by
the model alone in this process: the import's ceiling on this machine, in the same run.
Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

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


def timed(argv: list[str]) -> tuple[float, dict]:
    t0 = time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **SETTINGS})
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    return seconds, json.loads(res.stdout)


def embedding_alone(vault: Path, embedder: str) -> tuple[float, int]:
    """Seconds the embedder alone takes for the imported notes' texts (what an import
    embeds: content, context, keywords, tags), and how many: the import's ceiling."""
    from amem_cli.api import AgentMemory

    with AgentMemory(vault, embedder=embedder, llm="none") as memory:
        index = memory._c.index
        texts = [n.embedding_text() for n in index.get_many(index.ids()).values()]
        model = memory._c.embedder
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
    ap.add_argument("--no-keywords", action="store_true", help="leave keywords out: the pipeline extracts them")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder (vault and JSONL)")
    args = ap.parse_args()

    from amem_cli import __version__

    tmp = Path(tempfile.mkdtemp(prefix="amem-import-"))
    data, one = tmp / "notes.jsonl", tmp / "one.jsonl"
    write_jsonl(data, args.notes, not args.no_keywords)
    write_jsonl(one, 1, not args.no_keywords)
    amem = amem_argv()
    fixed_vault, vault = tmp / "fixed", tmp / "vault"
    SETTINGS["AMEM_EMBEDDER"] = args.embedder
    options = ["--batch", str(args.batch), "--json", *(["--defer"] if args.defer else [])]
    load = os.getloadavg()[0]
    try:
        # The fixed cost: start-up, server start, model load, one note.
        timed([*amem, "--dir", str(fixed_vault), "init", "--json"])
        fixed_s, _ = timed([*amem, "--dir", str(fixed_vault), "import", str(one), *options])

        timed([*amem, "--dir", str(vault), "init", "--json"])
        command = [*amem, "--dir", str(vault), "import", str(data), *options]
        wall_s, report = timed(command)
        _, status = timed([*amem, "--dir", str(vault), "status", "--json"])
        _, server = timed([*amem, "--dir", str(vault), "server", "status", "--json"])
        subprocess.run([*amem, "--dir", str(vault), "server", "stop"], capture_output=True)  # the CPUs to the model alone
        model_s, model_n = embedding_alone(vault, args.embedder)
    finally:
        for folder in (fixed_vault, vault):
            subprocess.run([*amem, "--dir", str(folder), "server", "stop"], capture_output=True)
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    rows = [
        ("amem", __version__),
        ("python", platform.python_version()),
        ("platform", platform.platform()),
        ("cpu count", str(os.cpu_count())),
        ("load average (1 min) before / after", f"{load:.2f} / {os.getloadavg()[0]:.2f}"),
        ("embedder", status["embedding_model"] or args.embedder),
        ("command", " ".join(f"{k}={v}" for k, v in SETTINGS.items()) + " " + shlex.join(command)),
        ("through the warm server", "yes" if server.get("running") else "no"),
        ("notes imported", f"{report['imported']} of {args.notes} (keywords {'left out' if args.no_keywords else 'given'})"),
        ("indexed / embedded / links", f"{status['indexed']} / {status['embedded']} / {status['links']}"),
        ("wall time", f"{wall_s:.1f} s"),
        ("notes/s", f"{args.notes / wall_s:.1f}"),
        ("fixed cost (import of 1 note)", f"{fixed_s:.1f} s"),
        ("notes/s less the fixed cost", f"{args.notes / max(wall_s - fixed_s, 1e-9):.1f}"),
        ("the model alone on the same texts", f"{model_n / model_s:.1f} notes/s (the ceiling: {model_n} embedding texts, in process)"),
    ]
    if args.keep:
        rows.append(("kept", str(tmp)))
    width = max(len(k) for k, _ in rows)
    print("\namem import benchmark")
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
