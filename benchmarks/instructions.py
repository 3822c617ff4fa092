"""Instructions one `amem` client process executes (valgrind's callgrind): a count a
loaded machine does not change, to compare two checkouts when timings are noise.

    .venv/bin/python benchmarks/instructions.py --against ../amem-base
    .venv/bin/python benchmarks/instructions.py --against ../amem-base --embedder fake   # quicker to build

This checkout and DIR (as with shell.py --against: this venv, DIR's `amem_cli` first on
PYTHONPATH), each with a vault of --notes notes of shell.py's generator and its own warm
server: `amem --help`, a warm `amem search` and a warm `amem add`, each run once to write
its bytecode and then once under callgrind (PYTHONHASHSEED=0). Only the client process is
counted, not the server's work (shell.py times the whole command). Needs valgrind.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from foundation import make_notes, make_queries  # noqa: E402
from shell import AMEM, run  # noqa: E402


def instructions(argv: list[str], env: dict, first: list[str] | None = None) -> int:
    """Of `argv`, after `first` (default: `argv` itself) has run once to write the bytecode."""
    subprocess.run(first or argv, capture_output=True, env=env, check=True)
    res = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                         capture_output=True, text=True, env={**env, "PYTHONHASHSEED": "0"}, check=True)
    return int(re.search(r"Collected : (\d+)", res.stderr).group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", type=Path, required=True, metavar="DIR", help="the other amem checkout")
    ap.add_argument("--notes", type=int, default=1000, help="notes in each vault (default 1000)")
    ap.add_argument("--embedder", default=None, help="the embedder (default: amem's default)")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("needs valgrind (apt-get install valgrind)")

    base = Path(tempfile.mkdtemp(prefix="amem-instructions-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEM_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"AMEM_LLM": "none", "AMEM_SERVER": "auto", "HF_HUB_OFFLINE": "1", "AMEM_CONFIG": "/nonexistent/config.toml",
                "PYTHONPYCACHEPREFIX": str(base / "bytecode")})  # bytecode cached, as an installed amem has it
    if args.embedder:
        env["AMEM_EMBEDDER"] = args.embedder
    sides = {"this": env, "other": {**env, "PYTHONPATH": str(args.against.resolve())}}
    os.chdir(base)  # not a checkout: `python -m amem_cli` (how a server starts) would import the one it is run in
    notes = make_notes(args.notes + 1)
    jsonl = base / "notes.jsonl"
    jsonl.write_text("".join(json.dumps({**n, "created_at": n["created_at"].isoformat()}) + "\n" for n in notes[:-1]))
    query = make_queries(notes[:-1], 1)[0][0]
    added = notes[-1]
    counts: dict[str, dict[str, int]] = {}
    vaults = {name: base / f"vault-{name}" for name in sides}
    try:
        for name, side_env in sides.items():
            vault = vaults[name]
            vault.mkdir()
            run(vault, "init", env=side_env)
            run(vault, "import", str(jsonl), env=side_env)
            run(vault, "search", "warm up", env=side_env)  # its server, warm
            at = [*AMEM, "--dir", str(vault)]
            counts[name] = {
                "`amem --help`": instructions([*AMEM, "--help"], side_env),
                "warm `amem search`": instructions([*at, "search", query, "--limit", "5"], side_env),
                "warm `amem add`": instructions([*at, "add", added["content"], "--created",
                                                 added["created_at"].isoformat()], side_env,
                                                first=[*at, "add", "A note that warms the bytecode up"]),
            }
    finally:
        for name, vault in vaults.items():
            if vault.exists():
                subprocess.run([*AMEM, "--dir", str(vault), "server", "stop"], capture_output=True, env=sides[name])
        shutil.rmtree(base, ignore_errors=True)
    print(f"{args.notes:,}-note vaults; this: {Path(__file__).resolve().parent.parent}, other: {args.against}")
    print("client process | this M instructions | other M instructions | this - other")
    print("--- | --- | --- | ---")
    for what, mine in counts["this"].items():
        theirs = counts["other"][what]
        print(f"{what} | {mine / 1e6:.1f} | {theirs / 1e6:.1f} | {(mine - theirs) / theirs:+.1%}")


if __name__ == "__main__":
    main()
