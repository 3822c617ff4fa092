"""The write path queues the model's work and the queue is a thing a user sees and
steers: `add`/`ingest` say what they queued, `amem queue` lists it, `amem queue cancel`
drops it (the notes keep what amem derives without the model), `amem process` works it
by hand, `amem status` tells the time left; large inputs say what they will do first.
In process (no server), fake embedder; `--llm fake` is a model whose work is queued."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from conftest import index_rows, internals

from amem_cli.cli import confirm
from amem_cli.markdown import parse_note

@pytest.fixture(autouse=True)
def vaults_model(monkeypatch):
    """The fake model is the vault's own (work asked of another model is done at once)."""
    monkeypatch.setenv("AMEM_LLM", "fake")


SESSION = "\n\n".join(f"{'user' if i % 2 == 0 else 'assistant'}: message {i} about walrus number {i}" for i in range(6))


def _add(run, text, *flags):
    res = run("--llm", "fake", "add", text, *flags)
    assert res.exit_code == 0, res.output
    return res


def _file(vault, note_id):
    return parse_note((vault / f"{note_id}.md").read_text(encoding="utf-8"))


def test_add_queues_the_model_work_and_says_so(run, vault):
    res = _add(run, "Otters hold hands while they sleep")
    note_id = res.stdout.strip()
    assert "queued the model's work on 1 note" in res.stderr and "amem process" in res.stderr
    assert index_rows(vault, "SELECT note_id FROM jobs") == [(note_id,)]
    assert "amem_queued" in _file(vault, note_id).metadata
    # Searchable at once, by words and by meaning (embedded before the command returned).
    for mode in ("keyword", "semantic"):
        hits = json.loads(run("search", "otters sleep", "--mode", mode, "--json").stdout)
        assert [h["id"] for h in hits] == [note_id], mode
    note = json.loads(_add(run, "Walruses sleep in the water", "--json").stdout)
    assert note["queued"] == 1
    waited = json.loads(_add(run, "Seals sleep on ice", "--wait", "--json").stdout)
    assert waited["queued"] == 0 and waited["keywords"] and "amem_queued" not in waited["metadata"]
    res = run("--llm", "none", "add", "no model here", "--json")
    assert json.loads(res.stdout)["queued"] == 0 and "queued" not in res.stderr
    assert index_rows(vault, "SELECT count(*) FROM jobs") == [(2,)]


def test_ingest_says_what_it_queued(run, vault):
    res = run("--llm", "fake", "ingest", input=SESSION)
    assert res.exit_code == 0, res.output
    assert "ingested 6 notes" in res.stdout and "queued the model's work on 6 notes" in res.stderr
    res = run("--llm", "fake", "ingest", "--json", input=SESSION.replace("walrus", "seal"))
    report = json.loads(res.stdout)
    assert report["ingested"] == 6 and report["queued"] == 6
    assert index_rows(vault, "SELECT count(*) FROM jobs") == [(12,)]


def test_queue_lists_the_jobs_and_status_shows_them_with_the_time_left(run, vault, memory):
    ids = [_add(run, f"note {i} about glaciers").stdout.strip() for i in range(3)]
    listed = json.loads(run("queue", "--json").stdout)
    assert [j["id"] for j in listed["jobs"]] == ids and {j["state"] for j in listed["jobs"]} == {"queued"}
    assert listed["summary"] == {"queued": 3, "running": 0, "failed": 0, "seconds_per_job": None, "seconds_left": None}
    # The first job fails once (as a model that would not load): it goes behind the others.
    queue = internals(memory).notes.pipeline.queue
    assert queue.claim() == ids[0]
    queue.release(ids[0], "LLMError: the model file is gone")
    listed = json.loads(run("queue", "--json").stdout)
    assert [j["id"] for j in listed["jobs"]] == [ids[1], ids[2], ids[0]]
    assert listed["jobs"][2]["state"] == "failed" and listed["jobs"][2]["error"] == "LLMError: the model file is gone"
    shown = run("queue").stdout
    assert "failed 1x" in shown and "the model file is gone" in shown and "3 queued" in shown
    # Worked by hand: each job's time is kept, and the rest is estimated from it.
    res = run("--llm", "fake", "process", "--limit", "1", "--json")
    assert json.loads(res.stdout)["processed"] == [ids[1]]
    assert len(index_rows(vault, "SELECT seconds FROM job_times")) == 1
    st = json.loads(run("status", "--json").stdout)["queue"]
    assert st["queued"] == 2 and st["failed"] == 1 and st["seconds_per_job"] is not None and st["seconds_left"] is not None
    assert "queue: 2 queued, 0 running, 1 failed" in run("status").stdout


def test_cancel_drops_jobs_and_the_notes_keep_their_deterministic_fields(run, vault):
    ids = [_add(run, f"The {w} migration locked the users table").stdout.strip() for w in ("Postgres", "MySQL", "SQLite")]
    res = run("--llm", "fake", "queue", "cancel", ids[0])  # a model is there: it is not asked
    assert res.exit_code == 0 and "cancelled the model's work on 1 note" in res.stdout
    note = _file(vault, ids[0])
    assert "amem_queued" not in note.metadata and note.keywords and note.tags and note.boxes
    assert "amem_generated" not in note.metadata  # the deterministic methods' fields (still amem's: an edit derives them again)
    assert [r[0] for r in index_rows(vault, "SELECT note_id FROM jobs")] == ids[1:]
    assert json.loads(run("queue", "cancel", "--all", "--json").stdout)["cancelled"] == ids[1:]
    assert index_rows(vault, "SELECT count(*) FROM jobs") == [(0,)]
    assert all("amem_queued" not in _file(vault, i).metadata for i in ids)
    assert run("doctor").exit_code == 0  # the files and the queue agree: no work owed, none queued
    res = run("queue", "cancel", ids[0])
    assert res.exit_code == 2 and "no queued work" in res.stderr
    assert run("queue", "cancel").exit_code == 2  # neither ids nor --all


def test_cancel_leaves_a_job_in_a_workers_hands(run, vault, memory):
    note_id = _add(run, "a note in hand").stdout.strip()
    assert internals(memory).notes.pipeline.queue.claim() == note_id  # this process holds it, as a worker would
    result = json.loads(run("queue", "cancel", "--all", "--json").stdout)
    assert result == {"cancelled": [], "running": [note_id], "not_queued": []}
    assert json.loads(run("queue", "--json").stdout)["jobs"][0]["state"] == "running"


def test_process_limit_and_until(run, vault):
    for i in range(3):
        _add(run, f"note {i} about moraines")
    res = run("--llm", "fake", "process", "--until", "0s", "--json")
    assert json.loads(res.stdout) == {"processed": [], "queued": 3}  # no job started after the deadline
    assert len(json.loads(run("--llm", "fake", "process", "-n", "2", "--json").stdout)["processed"]) == 2
    res = run("--llm", "fake", "process", "--until", "23:59")
    assert res.exit_code == 0 and "Processed 1 notes; 0 still queued." in res.stdout
    res = run("process", "--until", "soon")
    assert res.exit_code == 2 and "--until" in res.stderr


class Answer(io.StringIO):
    """A person's terminal that answers `text` (what amem writes to it is not read back)."""

    def write(self, text: str) -> int:
        return len(text)


@pytest.fixture
def small_limits(monkeypatch):
    monkeypatch.setattr(confirm, "LARGE_NOTES", 3)


def test_a_large_input_asks_first_in_a_terminal(run, vault, small_limits, monkeypatch):
    monkeypatch.setattr(confirm, "_terminal", lambda: Answer("n\n"))
    res = run("--llm", "fake", "ingest", input=SESSION)
    assert res.exit_code == 1 and "nothing was stored" in res.stderr
    assert "up to 6 notes" in res.stderr and "queued" in res.stderr
    assert not list(vault.glob("*.md"))
    monkeypatch.setattr(confirm, "_terminal", lambda: Answer("y\n"))
    res = run("--llm", "fake", "ingest", "--json", input=SESSION)
    assert res.exit_code == 0 and json.loads(res.stdout)["ingested"] == 6, res.output
    lines = "".join(json.dumps({"content": f"imported walrus {i}"}) + "\n" for i in range(5))
    monkeypatch.setattr(confirm, "_terminal", lambda: pytest.fail("--yes asks nothing"))
    res = run("import", "-", "--yes", input=lines)
    assert res.exit_code == 0 and "imported 5 notes" in res.stdout, res.output


def test_a_large_input_in_a_script_goes_on_and_says_what_it_queued(run, vault, small_limits):
    res = run("--llm", "fake", "ingest", "--json", input=SESSION)  # CliRunner: no terminal
    assert res.exit_code == 0 and json.loads(res.stdout)["queued"] == 6
    assert "up to 6 notes" in res.stderr and "amem queue cancel --all" in res.stderr
    res = run("ingest", input="user: one seal\n\nassistant: two seals\n")  # small enough: not a word about it
    assert res.exit_code == 0 and "up to" not in res.stderr


def test_a_large_input_without_a_model_neither_asks_nor_warns(run, vault, small_limits, monkeypatch):
    """With `--llm none` nothing long is queued: the notes are simply stored."""
    monkeypatch.setattr(confirm, "_terminal", lambda: pytest.fail("nothing to ask about"))
    res = run("--llm", "none", "ingest", "--json", input=SESSION)
    assert res.exit_code == 0 and json.loads(res.stdout)["ingested"] == 6, res.output
    assert "up to" not in res.stderr and "queued" not in res.stderr


def test_server_status_loads_neither_the_services_nor_typer(vault):
    """`amem server status` finds the vault as the client does (building the services cost
    ~0.4 s of its 0.7 s) and is read without Typer (~0.1 s), as the everyday commands are."""
    code = ("import sys; from amem_cli.cli.entry import main; sys.argv[1:] = ['--dir', sys.argv[1], 'server', 'status']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('amem_cli.container', 'typer') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code, str(vault)], capture_output=True, text=True, env=os.environ, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [f"no server runs for {vault}", "[]"]
