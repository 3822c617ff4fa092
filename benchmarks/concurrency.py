"""Many `amem add` processes on one vault at once, with searches running during the writes.

    .venv/bin/python benchmarks/concurrency.py                      # 8 x 50, with and without the server
    .venv/bin/python benchmarks/concurrency.py --writers 4 --each 10 --server off

Each writer is a shell loop of `amem add` calls (as a user or an agent would run them),
all writers started at once; one more process searches in a loop until they are done.
Then it checks what the reliability issue asks: every process exited 0 with no traceback,
every acknowledged id has its file, `amem doctor` finds the vault consistent, and every
note is found by full-text search for its own unique words. It prints the figures; the
test suite (tests/reliability/test_concurrency.py) runs the same harness in a smaller size.
Fake embedder and no model: the point is the writes, not the model.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

AMEM = [sys.executable, "-c", "import sys; from amem_cli.cli.entry import main; sys.argv[0] = 'amem'; main()"]


def content(writer: int, item: int) -> str:
    return f"Note {item} of writer {writer}, with its own words zq{writer}x{item}w to be found by"


@dataclass
class Outcome:
    writers: int
    each: int
    server: str
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)  # processes that did not exit 0 cleanly
    acknowledged: list[str] = field(default_factory=list)  # ids the adds printed
    searches: int = 0
    search_failures: list[str] = field(default_factory=list)
    missing_files: list[str] = field(default_factory=list)
    doctor: dict = field(default_factory=dict)
    not_found: list[str] = field(default_factory=list)  # notes their own words did not find

    @property
    def ok(self) -> bool:
        return not (self.failures or self.search_failures or self.missing_files or self.not_found) and \
            self.doctor.get("ok") is True and len(set(self.acknowledged)) == self.writers * self.each


def amem(vault: Path, *args: str, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([*AMEM, "--dir", str(vault), *args], capture_output=True, text=True, env=env, timeout=timeout)


def stress(vault: Path, writers: int, each: int, server: str) -> Outcome:
    """Run the writers and a searcher at once on `vault`, then check the vault."""
    env = {**os.environ, "AMEM_SERVER": server, "AMEM_EMBEDDER": "fake", "AMEM_LLM": "none"}
    out = Outcome(writers, each, server)
    amem(vault, "init", env=env)
    loops = [
        " && ".join(shlex.join([*AMEM, "--dir", str(vault), "add", content(w, i)]) for i in range(each))
        for w in range(writers)
    ]
    done = threading.Event()

    def search() -> None:
        while not done.is_set():
            res = amem(vault, "search", "writer words", "--limit", "3", env=env)
            out.searches += 1
            if res.returncode != 0 or "Traceback" in res.stderr:
                out.search_failures.append(res.stderr.strip()[-500:])

    started = time.perf_counter()
    procs = [subprocess.Popen(["sh", "-c", loop], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for loop in loops]
    searcher = threading.Thread(target=search)
    searcher.start()
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=3600)
        out.acknowledged += stdout.split()
        if proc.returncode != 0 or "Traceback" in stderr:
            out.failures.append(f"exit {proc.returncode}: {stderr.strip()[-500:]}")
    done.set()
    searcher.join()
    if server != "off":
        wait_for_queue(vault, env)
        amem(vault, "server", "stop", env=env)
    out.seconds = time.perf_counter() - started
    out.missing_files = [i for i in out.acknowledged if not (vault / f"{i}.md").is_file()]
    res = amem(vault, "--no-server", "doctor", "--json", env=env)
    out.doctor = json.loads(res.stdout) if res.stdout.strip() else {"ok": False, "error": res.stderr}
    out.not_found = unfound(vault, writers, each)
    return out


def wait_for_queue(vault: Path, env: dict, timeout: float = 600) -> None:
    """Until the server's worker has done the queued work of every add."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = json.loads(amem(vault, "server", "status", "--json", env=env).stdout or "{}")
        if not status.get("queued"):
            return
        time.sleep(0.5)


def unfound(vault: Path, writers: int, each: int) -> list[str]:
    """The notes a keyword search for their own unique words does not put first."""
    from amem_cli import AgentMemory

    missing = []
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        for w in range(writers):
            for i in range(each):
                hits = mem.search(f"zq{w}x{i}w", top_k=1, mode="keyword")
                if not hits or hits[0].note.content != content(w, i):
                    missing.append(content(w, i))
    return missing


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--each", type=int, default=50, help="adds per writer")
    ap.add_argument("--server", choices=["auto", "off", "both"], default="both", help="the warm server: on, off or both runs")
    args = ap.parse_args()
    modes = ["auto", "off"] if args.server == "both" else [args.server]
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; {args.writers} writers x {args.each} adds, one searcher")
    for mode in modes:
        with tempfile.TemporaryDirectory(prefix="amem-concurrency-") as tmp:
            o = stress(Path(tmp) / "vault", args.writers, args.each, mode)
        print(f"server {'on' if mode == 'auto' else 'off'}: {len(set(o.acknowledged))} notes acknowledged in {o.seconds:.1f} s "
              f"({len(o.acknowledged) / o.seconds:.1f} adds/s); {o.searches} searches meanwhile; "
              f"failures {len(o.failures)}, search failures {len(o.search_failures)}, missing files {len(o.missing_files)}, "
              f"doctor {o.doctor.get('summary')}, not found by their words {len(o.not_found)} -> {'OK' if o.ok else 'FAILED'}")
        for line in o.failures[:3] + o.search_failures[:3]:
            print("   ", line)


if __name__ == "__main__":
    main()
