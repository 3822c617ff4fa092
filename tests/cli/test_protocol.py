"""The warm server's protocol (`server/protocol.py`): every operation of the façade
round-trips through a real server's socket, its request and result of the types of
`amem_cli.wire`; a bad request gets an error reply, never a crash; an import streams its
progress; and serving needs neither Typer nor the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import fake_server, wait_until

from amem_cli.records import decode, encode
from amem_cli.server.client import call
from amem_cli.wire import PROTOCOL, load_all
from amem_cli.wire.intake import Import, Ingest
from amem_cli.wire.current import Consolidate, ForgetExpired, Supersede, SupersedeSuggestions
from amem_cli.wire.editing import AddMany, AddNote, Edit, Edited, Evolve, History, NoteFile, Remove, Trash, Undo
from amem_cli.wire.notes import Add, Block, ListNotes, Search, Show
from amem_cli.wire.queue import CancelQueued, Process, Queue
from amem_cli.wire.vault import Boxes, Doctor, Graph, RebuildBoxes, Reindex, Stats, Sync, VaultStatus

# A server in a process of its own that never imported the CLI; when it stops it prints
# which of the CLI's modules serving made it import. (Not click or rich: chromadb imports
# those itself.)
SERVE = """
import json, sys
from amem_cli.config import load_settings
from amem_cli.server.daemon import Server
Server(load_settings(dir=sys.argv[1])).run()
print(json.dumps(sorted(m for m in sys.modules if m == "typer" or m.startswith(("typer.", "amem_cli.cli")))))
"""
ENV = {"AMEM_EMBEDDER": "fake", "AMEM_LLM": "none", "AMEM_SERVER": "auto"}


class Served:
    def __init__(self, vault):
        self.vault = vault
        self.proc = subprocess.Popen([sys.executable, "-c", SERVE, str(vault)], env={**os.environ, **ENV},
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert wait_until(lambda: (vault / ".amem" / "server.json").exists() or self.proc.poll() is not None, timeout=120)
        assert self.proc.poll() is None, self.proc.communicate()

    def ask(self, op: str, args, events: list | None = None, protocol: int | None = PROTOCOL) -> dict:
        """The raw reply to a request of `op` with the JSON `args`, as the CLI sends it."""
        env = {k: v for k, v in {**os.environ, **ENV}.items() if k.startswith("AMEM_")}
        request = {"op": op, "args": args, "settings": {"flags": {}, "env": env, "dir": str(self.vault)}, "protocol": protocol}
        return call(self.vault / ".amem", request, timeout=60, on_event=None if events is None else events.append)

    def result(self, request):
        """The result of a typed request, read into its type."""
        reply = self.ask(request.op, encode(request))
        assert "result" in reply, (request, reply)
        return decode(request.result, reply["result"])

    def stop(self) -> list[str]:
        """The modules of the CLI the server imported."""
        if self.proc.poll() is None:
            call(self.vault / ".amem", {"op": "stop"}, timeout=10)
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0 and "Traceback" not in err, err
        return json.loads(out.splitlines()[-1])


@pytest.fixture
def served(vault):
    (vault / ".amem").mkdir(mode=0o700)
    server = Served(vault)
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait()


def test_every_operation_round_trips_through_the_socket(served, tmp_path):
    added = served.ask("add", encode(Add("Walruses sleep in the water", tags=["sea"], boxes=["animals"])))
    note_id = added["result"]["id"]
    assert added["warnings"] == [] and added["protocol"] == PROTOCOL and (served.vault / f"{note_id}.md").exists()
    (tmp_path / "more.jsonl").write_text('{"content": "an imported walrus"}\n', encoding="utf-8")
    # Each operation's request as the CLI sends it, and what its result (read into its type) must show.
    checks = [
        (Add, None),  # above
        (Show(note_id), lambda r: r.id == note_id and r.tags == ["sea"] and r.related is None),
        (ListNotes(limit=5), lambda r: [n.id for n in r] == [note_id]),
        (NoteFile(note_id), lambda r: r.startswith("---\n") and "Walruses sleep in the water" in r),
        (Edit(note_id), lambda r: r == str(served.vault.resolve() / f"{note_id}.md")),
        (Edited(note_id), lambda r: r.id == note_id),
        (Search("walruses", mode="keyword"), lambda r: r[0].id == note_id and r[0].score > 0),
        (Block("walruses", max_tokens=500), lambda r: r.notes == [note_id] and "Walruses" in r.context),
        (Boxes(), lambda r: [(b.box, b.notes) for b in r] == [("animals", 1)]),
        (RebuildBoxes(), lambda r: (r.filed, r.moved, r.kept, r.boxes) == (0, 0, 1, [])),  # the person's box stays
        (History(note_id), lambda r: r == []),
        (Evolve(note_id, dry_run=True), lambda r: r.note == note_id and r.dry_run is True),
        (Process(), lambda r: r.processed == [] and r.queued == 0),
        (Queue(), lambda r: r.jobs == [] and r.summary.queued == 0),
        (CancelQueued(), lambda r: (r.cancelled, r.running, r.not_queued) == ([], [], [])),
        (Stats(), lambda r: r.notes == 1),
        (Graph(format="json"), lambda r: r.notes == 1 and json.loads(r.text)),
        (VaultStatus(), lambda r: r.status.notes == 1 and r.read_only is False),
        (Doctor(), lambda r: r.report.ok and r.for_a_person is False),
        (Sync(), lambda r: r.errors == []),
        (Ingest([["talk.txt", "user: walruses again, at length\n"]]), lambda r: r[0].name == "talk.txt" and len(r[0].ids) == 1),
        (Import(str(tmp_path / "more.jsonl")), lambda r: len(r.ids) == 1 and r.skipped == 0),
        (AddMany([{"content": "a walrus pup"}, {"content": "its mother"}]), lambda r: r[0].next == r[1].id),
        (AddNote({"id": "hand-built", "content": "a walrus built in Python"}), lambda r: r.id == "hand-built"),
        (Reindex(), lambda r: r.notes == 6 and r.errors == []),
        (SupersedeSuggestions(), lambda r: r == []),
        (Supersede(note_id, note_id), "cannot supersede itself"),  # an error reply, below
        (Consolidate(dry_run=True), lambda r: (r.groups, r.dry_run) == ([], True)),
        (ForgetExpired(dry_run=True), lambda r: (r.removed, r.dry_run) == ([], True)),
        (Undo(note_id), "no revision"),  # an error reply, below
        (Remove([note_id]), lambda r: (r.removed, r.recoverable) == ([note_id], True)),
        (Trash(), lambda r: [t.version for t in r] == [f"{note_id}@1"]),
    ]
    served_ops = {request.op for request, _ in checks}
    assert served_ops == {op for op, kind in load_all().items() if kind.served}, "an operation the server serves is not tested here"
    for request, check in checks:
        if check is None and request is Add:
            continue
        if isinstance(check, str):  # the error the operation must reply
            reply = served.ask(request.op, encode(request))
            assert reply["error"]["exit_code"] == 2 and check in reply["error"]["message"], reply
            continue
        assert check(served.result(request)), request
    assert not (served.vault / f"{note_id}.md").exists()
    assert served.ask("show", {"id": note_id})["error"]["exit_code"] == 3


def test_a_client_of_another_version_is_told_to_work_alone(served):
    """A client from before versions (or of another one) is answered with a retry: it
    does the command in its own process, and stops this server; nothing is done here."""
    for protocol in (None, PROTOCOL + 1):
        reply = served.ask("add", {"content": "a note from another amem"}, protocol=protocol)
        assert reply == {"protocol": PROTOCOL, "retry": "settings", "warnings": []}
    assert not list(served.vault.glob("*.md"))


def test_unknown_operations_and_bad_arguments_get_error_replies(served):
    for op, args, said in [
        ("launch", {}, "unknown operation"),
        ("serve", {}, "unknown operation"),  # the CLI's own commands are no operations
        ("search", {"query": 5}, "'query' cannot be 5"),
        ("search", {"query": "x", "floor": "yes"}, "'floor' cannot be 'yes'"),
        ("search", {"query": "x", "limit": True}, "'limit' cannot be True"),
        ("list", {"tags": "sea"}, "'tags' cannot be 'sea'"),
        ("show", {}, "needs 'id'"),
        ("show", {"id": "x", "argv": ["show"]}, "takes no argument 'argv'"),
        ("add", ["a note"], "a JSON object"),
    ]:
        reply = served.ask(op, args)
        assert reply["error"]["exit_code"] == 2 and said in reply["error"]["message"], (op, args, reply)
    assert not list(served.vault.glob("*.md"))  # nothing was done
    assert call(served.vault / ".amem", {"op": "ping"}, timeout=10) == {"ok": True}


def test_an_import_streams_its_progress_before_the_reply(served, tmp_path):
    lines = [json.dumps({"content": f"walrus number {i}"}) for i in range(60)]
    (tmp_path / "walruses.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    events: list[dict] = []
    reply = served.ask("import", {"path": str(tmp_path / "walruses.jsonl"), "batch": 10}, events)
    assert reply["result"]["imported"] == 60
    assert len(events) >= 6 and all(e["event"] == "progress" for e in events)
    done = [e["done"] for e in events]
    assert done == sorted(done) and done[-1] == 60 and events[-1]["total"] == 60


def test_serving_operations_imports_neither_typer_nor_the_cli(served):
    note_id = served.ask("add", {"content": "a note about puffins"})["result"]["id"]
    for request in [Show(note_id), Search("puffins"), Graph(format="html"), Doctor(), VaultStatus(), Stats(), Reindex()]:
        assert served.result(request) is not None, request
    assert served.ask("launch", {})["error"]
    assert served.stop() == []


def test_a_server_of_an_older_amem_is_stopped_and_the_command_done_here(vault, run_amem):
    """After an upgrade the old server may still run: it knows no operations (it answered
    the 'run' of whole command lines, its errors text). The command is done here, once,
    and the old server asked to stop."""
    (vault / ".amem").mkdir(mode=0o700)
    asked: list[dict] = []

    def old_server(request: dict) -> dict:
        asked.append(request)
        return {"ok": True} if request["op"] in ("ping", "stop") else {"error": f"unknown request {request['op']!r}"}

    with fake_server(vault / ".amem" / "server.sock", old_server):
        res = run_amem("--dir", vault, "add", "a note after an upgrade", env=ENV)
    assert res.returncode == 0 and "internal error" not in res.stderr, res.stderr
    assert len(list(vault.glob("*.md"))) == 1
    assert [r["op"] for r in asked] == ["add", "stop"]


def test_a_bad_setting_is_reported_as_without_a_server(served, run_amem):
    """The server cannot build settings from the client's (AMEM_LINK_THRESHOLD=high): the
    client's own process says what is wrong, in its own words; the server serves on."""
    env = {**ENV, "AMEM_LINK_THRESHOLD": "high"}
    through = run_amem("--dir", served.vault, "search", "walruses", env=env)
    alone = run_amem("--dir", served.vault, "--no-server", "search", "walruses", env=env)
    assert (through.returncode, through.stdout, through.stderr) == (alone.returncode, alone.stdout, alone.stderr)
    assert alone.returncode == 2 and "must be a number" in alone.stderr
    assert served.ask("list", {})["result"] == []  # still serving
