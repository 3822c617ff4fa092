"""A crash harness: SIGKILL `amem` at random moments during add, evolve, import and
reindex; after each kill `amem doctor` must find the vault consistent, or `amem doctor
--fix` must make it so, every acknowledged note must be on disk with its exact text,
and a search by meaning must still find one.

Used by tests/reliability/test_crash.py (a bounded run in CI) and benchmarks/crash.py
(any number of kills).

Each `amem` runs as a real process (`--no-server`, the fake embedder, a scripted LLM),
forked from a *zygote*: a process that has imported amem and chromadb and built the
Typer app's command once, so a command costs its own work, not 3 s of imports.
Forking before any store is opened is safe; the child then runs the command with its
argv as `amem --no-server` does (the same Typer app, standalone mode, exit code as
`amem` exits). The zygote, being the parent, does the killing: a child that is not yet
reaped cannot have its pid reused, so the kill never hits another process.
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

OPS = ("add", "evolve", "import", "reindex")
WORDS = ("glacier ice moraine summer melt valley river stone snow slope field crevasse "
         "climber rope tent storm wind sun map camp").split()
IMPORT_LINES = 4
PRELOAD = ("chromadb", "chromadb.api.rust", "chromadb_rust_bindings", "amem_cli.container", "amem_cli.embed.fake",
           "amem_cli.services.doctor", "amem_cli.services.importer", "amem_cli.services.pipeline", "amem_cli.index.vectors",
           "rich.console", "rich.progress", "rich.markup", "sqlite_utils", "frontmatter", "dateutil.parser")


# -- the scripted model --------------------------------------------------------------------


def eager_reply(messages, schema):
    """A model that always says yes: links every candidate shown and gives each linked
    note a new context (its own words and the new note's) and a tag, so a run of add or
    evolve writes as many files as the pipeline allows. Anything else: the smallest
    valid reply (the pipeline's fallbacks)."""
    from amem_cli.llm import prompts
    from amem_cli.llm.fake import evolution_reply, schema_example

    props = schema.get("properties", {})
    user = str(messages[-1].get("content", "")) if messages else ""
    if set(props) == {"links"}:
        return {"links": props["links"]["items"]["enum"][: props["links"]["maxItems"]]}
    if set(props) == {"notes"}:
        new = user.split("New note: ", 1)[-1].split()[:3]

        def evolve(older: str) -> dict:
            old = older.replace(prompts.FENCE_OPEN, " ").split()[:6]
            return {"context": " ".join([*reversed(old), *new]), "tags": [w.strip(".,:") for w in old[:1]]}

        return evolution_reply(messages, schema, evolve)
    return schema_example(messages, schema)


# -- the zygote ----------------------------------------------------------------------------


def zygote_main() -> None:
    """Read requests (JSON lines) on stdin; fork one `amem` per request; reply on stdout."""
    import typer.main

    import amem_cli.llm
    from amem_cli.cli.app import app
    from amem_cli.llm.fake import ScriptedLLM

    import importlib

    # What the children would import on first use (chromadb alone costs 1.6 s).
    for module in PRELOAD:
        importlib.import_module(module)
    command = typer.main.get_command(app)  # 0.3 s a run otherwise

    def main() -> None:
        command.main(args=sys.argv[1:], prog_name="amem", standalone_mode=True)

    real_make_llm = amem_cli.llm.make_llm
    amem_cli.llm.make_llm = lambda kind, **kw: (
        ScriptedLLM(default=eager_reply) if kind == "fake" else real_make_llm(kind, **kw))

    replies = os.fdopen(os.dup(1), "w")
    for line in sys.stdin:
        req = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(main, req)
        replies.write(json.dumps(_watch(pid, req.get("kill_after"))) + "\n")
        replies.flush()


def _child(main, req) -> None:
    code = 70
    try:
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, req["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            os.dup2(os.open(path, flags, 0o600), fd)
        sys.argv = ["amem", *req["argv"]]
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _watch(pid: int, kill_after: float | None) -> dict:
    start = time.monotonic()
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], kill_after)
    finally:
        os.close(fd)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return {"code": code, "killed": code == -signal.SIGKILL, "elapsed": time.monotonic() - start}


class Zygote:
    def __init__(self, env: dict[str, str]):
        src = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import crashes; crashes.zygote_main()"
        self.proc = subprocess.Popen([sys.executable, "-c", src], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env)
        self.tmp = Path(tempfile.mkdtemp(prefix="amem-zygote-"))

    def run(self, argv: list[str], kill_after: float | None = None) -> "Run":
        out, err = self.tmp / "out", self.tmp / "err"
        self.proc.stdin.write(json.dumps({"argv": argv, "out": str(out), "err": str(err), "kill_after": kill_after}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the zygote died")
        reply = json.loads(line)
        return Run(reply["code"], reply["killed"], reply["elapsed"], out.read_text(errors="replace"),
                   err.read_text(errors="replace"))

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        shutil.rmtree(self.tmp, ignore_errors=True)


@dataclass
class Run:
    code: int
    killed: bool
    elapsed: float
    stdout: str
    stderr: str


# -- one lane: a vault, a zygote, a seeded sequence of kills -------------------------------


@dataclass
class Stats:
    kills: Counter = field(default_factory=Counter)  # per operation
    completed: Counter = field(default_factory=Counter)  # runs that finished before their kill
    needed_fix: Counter = field(default_factory=Counter)  # kills after which doctor was not consistent
    problems: Counter = field(default_factory=Counter)  # kinds doctor found
    acknowledged: int = 0  # notes whose add or import exited 0
    lost: list[str] = field(default_factory=list)  # acknowledged notes missing or changed: must stay empty
    failures: list[str] = field(default_factory=list)  # anything else that went wrong: must stay empty

    def merge(self, other: "Stats") -> None:
        for name in ("kills", "completed", "needed_fix", "problems"):
            getattr(self, name).update(getattr(other, name))
        self.acknowledged += other.acknowledged
        self.lost += other.lost
        self.failures += other.failures


class Lane:
    def __init__(self, vault: Path, seed: int, env: dict[str, str]):
        self.vault, self.rng = vault, random.Random(seed)
        self.name = f"L{seed}"
        self.zygote = Zygote(env)
        self.stats = Stats()
        self.acked: dict[str, str] = {}  # note id -> its exact text
        self.duration = {op: 1.0 for op in OPS}  # how long each op takes when left alone (measured)
        self.count = 0
        self.tmp = Path(tempfile.mkdtemp(prefix="amem-crash-"))

    def amem(self, *args: str) -> list[str]:
        return ["--no-server", "--dir", str(self.vault), "--embedder", "fake", "--llm", "fake", *args]

    def setup(self) -> None:
        self._expect_ok(self.zygote.run(self.amem("init")), "init")
        for op in ("import", *OPS):  # measure each op once, unkilled, to spread the kills over its run
            run = self.zygote.run(self.amem(*self._args(op)))
            self._acknowledge(op, run)
            self.duration[op] = max(run.elapsed, 0.05)

    def _content(self) -> str:
        self.count += 1
        return f"{self.name}-{self.count} " + " ".join(self.rng.choice(WORDS) for _ in range(8))

    def _args(self, op: str) -> list[str]:
        if op == "add":
            self._pending = [self._content()]
            return ["add", self._pending[0]]
        if op == "evolve":
            return ["evolve", self.rng.choice(sorted(self.acked)), "--json"]
        if op == "import":
            self._pending = [self._content() for _ in range(IMPORT_LINES)]
            path = self.tmp / f"import-{self.count}.jsonl"
            path.write_text("".join(json.dumps({"content": c}) + "\n" for c in self._pending), encoding="utf-8")
            return ["import", str(path), "--json"]
        return ["reindex", "--quiet"]

    def _acknowledge(self, op: str, run: Run) -> None:
        """Record the notes an operation that finished says it stored."""
        if not self._expect_ok(run, op):
            return
        if op == "add":
            self.acked[run.stdout.strip()] = self._pending[0]
        elif op == "import":
            ids = json.loads(run.stdout)["ids"]
            self.acked.update(zip(ids, self._pending, strict=True))
        else:
            return
        self.stats.acknowledged += 1 if op == "add" else IMPORT_LINES

    def _expect_ok(self, run: Run, what: str) -> bool:
        if run.code != 0:
            self.stats.failures.append(f"{self.name} {what} exited {run.code}: {run.stderr.strip()[-800:]}")
        return run.code == 0

    def attempt(self, op: str) -> None:
        """Run `op`, killing it at a random moment of its usual run; then doctor, and check every acknowledged note."""
        args = self._args(op)
        run = self.zygote.run(self.amem(*args), kill_after=self.rng.uniform(0, 1.25 * self.duration[op]))
        if run.killed:
            self.stats.kills[op] += 1
        else:
            self.stats.completed[op] += 1
            self._acknowledge(op, run)
            self.duration[op] = max(run.elapsed, 0.05)  # the vault grows: so do reindex and evolve
        self.doctor(op if run.killed else None)
        self.check_acknowledged()
        self.check_found()

    def doctor(self, killed_op: str | None) -> None:
        run = self.zygote.run(self.amem("doctor", "--json"))
        if run.code == 0:
            return
        if run.code != 8:
            self.stats.failures.append(f"{self.name} doctor exited {run.code}: {run.stderr.strip()[-800:]}")
            return
        report = json.loads(run.stdout)
        self.stats.problems.update(p["kind"] for p in report["problems"])
        if killed_op is None:
            self.stats.failures.append(f"{self.name} inconsistent with no kill: {report['summary']}")
        else:
            self.stats.needed_fix[killed_op] += 1
        fixed = self.zygote.run(self.amem("doctor", "--fix", "--json"))
        if fixed.code != 0:
            self.stats.failures.append(f"{self.name} doctor --fix exited {fixed.code}: {fixed.stdout[-800:]} {fixed.stderr[-800:]}")

    def check_acknowledged(self) -> None:
        from amem_cli.markdown import parse_note

        for note_id, text in self.acked.items():
            path = self.vault / f"{note_id}.md"
            try:
                content = parse_note(path.read_text(encoding="utf-8")).content
            except (OSError, ValueError) as exc:
                content = f"<{exc}>"
            if content != text and note_id not in self.stats.lost:
                self.stats.lost.append(note_id)

    def check_found(self) -> None:
        """The vector store still answers after the kill: an acknowledged note's own text
        finds it first by meaning (the fake embedder gives equal texts equal vectors)."""
        note_id = self.rng.choice(sorted(self.acked))
        run = self.zygote.run(self.amem("search", self.acked[note_id], "--mode", "semantic", "--json", "--limit", "1"))
        if self._expect_ok(run, "search") and [h["id"] for h in json.loads(run.stdout)] != [note_id]:
            self.stats.failures.append(f"{self.name} search by its own text did not find {note_id}: {run.stdout[:300]}")

    def close(self) -> None:
        self.zygote.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def run_crashes(root: Path, *, kills: int, lanes: int = 2, seed: int = 7, env: dict[str, str] | None = None) -> Stats:
    """At least `kills` kills in all, spread evenly over the operations, in `lanes`
    vaults at once (one thread and one zygote each)."""
    env = {**os.environ, "AMEM_SERVER": "off", "AMEM_LINK_THRESHOLD": "0", **(env or {})}
    per_lane = -(-kills // lanes)
    results: list[Stats] = []

    def work(n: int) -> None:
        lane = Lane(root / f"vault{n}", seed + n, env)
        try:
            lane.setup()
            while sum(lane.stats.kills.values()) < per_lane and len(lane.stats.failures) < 5:
                op = min(OPS, key=lambda o: (lane.stats.kills[o], OPS.index(o)))  # the op with the fewest kills
                lane.attempt(op)
        except Exception as exc:  # the harness itself broke: say so in the figures
            lane.stats.failures.append(f"{lane.name} harness: {exc.__class__.__name__}: {exc}")
        finally:
            lane.close()
            results.append(lane.stats)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(lanes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = Stats()
    for stats in results:
        total.merge(stats)
    return total
