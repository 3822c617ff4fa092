"""What the warm server's memory (RSS) is made of, at N notes, with the bundled model loaded.

    .venv/bin/python benchmarks/server_memory.py --notes 10000
    .venv/bin/python benchmarks/server_memory.py --vault DIR      # a vault you have

Builds a vault of N varied notes (foundation.py's generator, imported with `--llm none`
and the real embedder), unless `--vault` gives one. Then, in a new process, loads what a
warm server holds one part at a time and reads the process's RSS (/proc/self/status)
after each: Python with amem's services, the SQLite index, the embedder (warm), Chroma
(the vault's vectors, queried once), the model (the bundled GGUF, loaded), and a search.
Each part's figure is what it added. Last, the real server: `amem search` starts it (with
the model, as a user's would), and its RSS is read the same way. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from foundation import amem_argv  # noqa: E402
from import_speed import write_jsonl  # noqa: E402

# Run in a new process, so nothing this script loaded is counted.
PARTS = r"""
import json, sys

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

vault = sys.argv[1]
steps = [("python", rss_mb())]
from amem_cli.config import load_settings
from amem_cli.operations import Facade
from amem_cli.wire.notes import Search
facade = Facade(load_settings(dir=vault))
c = facade._services()
steps.append(("amem's services (imported, built)", rss_mb()))
c.index.notes.count()
steps.append(("SQLite index (open)", rss_mb()))
c.embedder.embed(["a query to warm the model"])
steps.append(("embedder (loaded, warm)", rss_mb()))
c.indexer.nearest(c.embedder.embed(["deploy"])[0], 10)
steps.append(("Chroma (the vault's vectors, queried)", rss_mb()))
if c.llm is not None:
    c.llm.warm()
steps.append(("model (" + (c.llm.identity if c.llm is not None else "none") + ", loaded)", rss_mb()))
facade.run(Search("what did we decide about the deploy?"))
steps.append(("a search", rss_mb()))
print(json.dumps(steps))
"""


def server_rss(vault: Path, env: dict) -> float | None:
    amem = amem_argv()
    subprocess.run([*amem, "--dir", str(vault), "search", "deploy", "--json"], capture_output=True, env=env, check=True)
    status = json.loads(subprocess.run([*amem, "--dir", str(vault), "server", "status", "--json"], capture_output=True,
                                       text=True, env=env, check=True).stdout)
    try:
        if not status.get("running"):
            return None
        for line in Path(f"/proc/{status['pid']}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return None
    finally:
        subprocess.run([*amem, "--dir", str(vault), "server", "stop"], capture_output=True, env=env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=10000, help="notes in the vault built (default 10000)")
    ap.add_argument("--vault", type=Path, help="measure this vault instead of building one")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("AMEM_LLM", "AMEM_SERVER")}
    tmp = Path(tempfile.mkdtemp(prefix="amem-memory-"))
    try:
        vault = args.vault
        if vault is None:
            vault, data = tmp / "vault", tmp / "notes.jsonl"
            write_jsonl(data, args.notes, keywords=True)
            for command in (["init"], ["--llm", "none", "--no-server", "import", str(data)]):
                subprocess.run([*amem_argv(), "--dir", str(vault), *command, "--json"], capture_output=True, env=env, check=True)
        steps = json.loads(subprocess.run([sys.executable, "-c", PARTS, str(vault)], capture_output=True, text=True,
                                          env={**env, "AMEM_SERVER": "off"}, check=True).stdout)
        served = server_rss(vault, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\namem warm-server memory ({vault if args.vault else f'{args.notes} notes'})")
    width = max(len(name) for name, _ in steps)
    before = 0.0
    for name, rss in steps:
        print(f"{name:<{width}} {rss - before:+8.1f} MB  (RSS {rss:.1f} MB)")
        before = rss
    print(f"{'the warm server itself, after a search':<{width}} {served if served is not None else float('nan'):9.1f} MB RSS")


if __name__ == "__main__":
    main()
