"""A person editing a note while the warm server rewrites it: is any save lost?

    .venv/bin/python benchmarks/edit_race.py                 # 300 adds
    .venv/bin/python benchmarks/edit_race.py --adds 40 --pause 0.003 --ways renamed

One note, the hub, is open in an "editor": a thread that, every few milliseconds, reads
the file, writes the next number of its save counter into the note's text and saves it,
at random either as `sed -i` and vim do (a temp file renamed over the note), in place
(truncate and write, as many editors and `echo >` do), or in two steps (truncate and
close, then open again and append: the file is empty for a moment). Meanwhile notes that
link to the hub are added through the vault's warm server, whose worker writes each
one's backlink into the hub's file. The editor saves until the server's queue is empty.

A save is lost when amem replaces the file with bytes made from an older version: the
editor then reads back a counter lower than the one it saved last (checked before each
save, and once at the end); a read that finds two frontmatter blocks (amem wrote into the
emptied file, the editor appended to it) is counted apart. After the race `amem doctor`
must find the vault consistent without `--fix`: a save from the editor's copy, read
just before amem wrote a backlink into the hub, undoes that backlink, and the next sync
must notice and mend it. Printed: saves made, saves lost, reads with two frontmatters,
amem's rewrites of the hub the editor saw (its backlinks growing under its counter),
the server's jobs put off because the editor kept saving (each done later), adds done,
added notes linked to the hub (fewer with saves in place: the index may read the hub
half-saved, and then it is not near), and what doctor found. The test suite
(tests/reliability/test_edit_race.py) runs the same race smaller. Fake embedder and no
model: the point is the writes, not the model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

AMEM = [sys.executable, "-c", "import sys; from amem_cli.cli.entry import main; sys.argv[0] = 'amem'; main()"]
ENV = {"AMEM_SERVER": "auto", "AMEM_EMBEDDER": "fake", "AMEM_LLM": "none"}
HUB = "The lighthouse keeper's log of the weather, the tides and the ships that pass the rocks."
COUNTER = re.compile(rb"save counter (\d+)")
WAYS = ("renamed", "in place", "in two steps")  # how the editor saves: each save one of these, at random
# Seconds the editor goes on saving once the adds are in, while the server links them. An
# editor saving every few ms may beat each of the worker's tries (it puts the job off and
# tries again): the race must end.
LINGER = 10.0


def added(i: int) -> str:
    """The text of the i-th added note: the hub's words and a dozen of its own, so that
    the hub, not another added note, is among the nearest (the fake embedder hashes words)."""
    letters = hashlib.sha256(str(i).encode()).hexdigest() * 2
    return HUB + " " + " ".join("".join(chr(97 + int(c, 16)) for c in letters[k:k + 5]) for k in range(0, 60, 5)) + "."


@dataclass
class Outcome:
    adds: int = 0  # acknowledged by the server
    linked: int = 0  # added notes that link the hub
    saves: int = 0  # by the editor
    lost: list[str] = field(default_factory=list)  # "save N: read back M"
    doubled: int = 0  # the editor's reads that found two frontmatter blocks
    doctor: list[str] = field(default_factory=list)  # what `amem doctor` found after the race
    amem_rewrites: int = 0  # times the editor found amem's backlinks added on top of its save
    put_off: int = 0  # jobs the server's worker gave up on for a while: the note kept changing
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.lost and not self.failures and not self.doubled and not self.doctor


def amem(vault: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*AMEM, "--dir", str(vault), *args], capture_output=True, text=True,
                          env={**os.environ, **ENV}, timeout=timeout)


class Editor(threading.Thread):
    """Saves the hub again and again, each time with the next counter, until stopped."""

    def __init__(self, path: Path, out: Outcome, pause: float, seed: int, ways: tuple[str, ...] = WAYS):
        super().__init__(name="editor", daemon=True)
        self.path, self.out, self.pause, self.ways = path, out, pause, ways
        self.random = random.Random(seed)
        self.stopping = threading.Event()
        self.last = 0  # the counter of the editor's last save
        self.backlinks = 0
        self.how = ""  # the last save's way

    def run(self) -> None:
        while not self.stopping.is_set():
            data = self.check()
            self.last += 1
            self.save(COUNTER.sub(f"save counter {self.last}".encode(), data))
            self.out.saves += 1
            time.sleep(self.random.uniform(0, 2 * self.pause))
        self.check()

    def check(self) -> bytes:
        """The file as it is now; a counter below the last one saved is a save lost."""
        data = self.path.read_bytes()
        end = data.find(b"\n---\n", 3)  # of the frontmatter
        if data[end + 5:].lstrip(b"\n").startswith(b"---\n"):
            self.out.doubled += 1
        found = COUNTER.search(data, end)
        if found is None:  # the person's text is gone altogether
            self.out.lost.append(f"after save {self.last}: no counter in {data[:200]!r}")
            return data + b"\nsave counter 0\n"
        if int(found[1]) < self.last:
            self.out.lost.append(f"save {self.last} ({self.how}): read back {int(found[1])}")
        backlinks = data.count(b"[[", 0, end)
        if backlinks > self.backlinks:
            self.out.amem_rewrites += 1
        self.backlinks = backlinks
        return data

    def save(self, data: bytes) -> None:
        self.how = self.random.choice(self.ways)
        if self.how == "renamed":  # as sed -i and vim do: a new file renamed over the old
            fd, tmp = tempfile.mkstemp(prefix="sed", dir=self.path.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, self.path)
        elif self.how == "in place":
            with open(self.path, "r+b") as fh:
                fh.truncate(0)
                fh.write(data)
        else:  # in two steps: emptied and closed, then opened again and written
            open(self.path, "wb").close()
            time.sleep(self.random.uniform(0, self.pause))
            with open(self.path, "ab") as fh:
                fh.write(data)


def race(vault: Path, adds: int, pause: float = 0.003, seed: int = 0, ways: tuple[str, ...] = WAYS) -> Outcome:
    """Add `adds` notes through the warm server while the editor saves the hub."""
    from amem_cli.server.client import call
    from amem_cli.server.protocol import request_line
    from amem_cli.wire.notes import Add

    out = Outcome()
    amem(vault, "init")
    res = amem(vault, "add", f"{HUB}\n\nsave counter 0")  # starts the server
    if res.returncode != 0:
        out.failures.append(f"adding the hub: {res.stderr.strip()[-500:]}")
        return out
    hub = res.stdout.strip()
    index_dir = vault / ".amem"
    env = {k: v for k, v in {**os.environ, **ENV}.items() if k.startswith("AMEM_")}  # as `amem` sends them
    started = time.perf_counter()
    wait_for_queue(index_dir)
    editor = Editor(vault / f"{hub}.md", out, pause, seed, ways)
    editor.start()
    ids = []
    try:
        try:
            for i in range(adds):  # as `amem add` sends it, without starting a Python each time
                reply = call(index_dir, request_line(Add(added(i)), {}, env, str(vault)))
                if "result" not in reply:
                    out.failures.append(f"add {i}: {reply}")
                    continue
                ids.append(reply["result"]["id"])
            wait_for_queue(index_dir, timeout=LINGER)  # the linking under way, raced as well
        finally:
            editor.stopping.set()
            editor.join()
        if left := wait_for_queue(index_dir, timeout=60):  # jobs a save in every try put off: done now, undisturbed
            out.failures.append(f"{left} jobs still queued a minute after the editor stopped")
    finally:
        amem(vault, "server", "stop")
    out.seconds = time.perf_counter() - started
    out.adds = len(ids)
    res = amem(vault, "--no-server", "list", "--json", "--limit", str(adds + 10))  # the first look at the last saves
    notes = {n["id"]: n for n in json.loads(res.stdout)} if res.returncode == 0 else {}
    amem(vault, "--no-server", "search", "lighthouse keeper")  # embeds the hub's last text, as any search does
    res = amem(vault, "--no-server", "doctor", "--json")
    try:
        out.doctor = [f"{p['kind']}: {p['detail']}" for p in json.loads(res.stdout)["problems"]]
    except (ValueError, KeyError):
        out.doctor = [f"doctor exited {res.returncode}: {res.stdout[-300:]} {res.stderr[-300:]}"]
    out.linked = sum(hub in notes.get(i, {}).get("links", []) for i in ids)
    log = index_dir / "server.log"
    out.put_off = sum("changed on disk" in line or "is being saved" in line
                      for line in (log.read_text(errors="replace").splitlines() if log.exists() else []))
    return out


def wait_for_queue(index_dir: Path, timeout: float = 600) -> int:
    """Until the server's worker has done the queued work of every add; the jobs left."""
    from amem_cli.server.client import call
    from amem_cli.server.protocol import request_line
    from amem_cli.wire.notes import Add

    deadline = time.monotonic() + timeout
    while (left := call(index_dir, {"op": "status"}).get("queued")) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left or 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--adds", type=int, default=300)
    ap.add_argument("--pause", type=float, default=0.003, help="the editor's mean pause between saves (s)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--ways", default=",".join(WAYS), help=f"how the editor saves, one or both of: {', '.join(WAYS)}")
    args = ap.parse_args()
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; {args.adds} adds linking the hub, "
          f"the editor saving it every ~{args.pause * 1000:g} ms ({args.ways})")
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="amem-edit-race-") as tmp:
            vault = Path(tmp) / "vault"
            o = race(vault, args.adds, args.pause, seed=run, ways=tuple(args.ways.split(",")))
        print(f"run {run + 1}: {o.saves} saves made, {len(o.lost)} lost, {o.doubled} reads with two frontmatters; "
              f"{o.amem_rewrites} rewrites of the note by amem seen; {o.put_off} jobs put off; {o.adds} adds done, "
              f"{o.linked} linked to the note; doctor: {len(o.doctor)} problems; {o.seconds:.1f} s -> {'OK' if o.ok else 'FAILED'}")
        for line in (o.lost + o.failures + o.doctor)[:8]:
            print("   ", line)


if __name__ == "__main__":
    main()
