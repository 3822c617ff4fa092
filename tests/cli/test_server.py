"""The warm server, used as a shell user uses it: `amem` processes that find (or start)
the vault's server and hand it their commands. Fake embedder, no model: fast and exact."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time

import pytest
from conftest import fake_server, index_rows, served, wait_until

from amem_cli.wire import PROTOCOL

SERVER = {"AMEM_SERVER": "auto", "AMEM_EMBEDDER": "fake"}


@pytest.fixture
def amem(run_amem, vault):
    """`amem --dir VAULT ARGS` with the server on; every server is stopped at the end."""
    yield from served(run_amem, vault, SERVER)


def _status(amem) -> dict:
    return json.loads(amem("server", "status", "--json", check=True).stdout)


def _walruses(folder, n=1500):
    lines = [json.dumps({"content": f"note {i} about walrus number {i}", "keywords": ["walrus"]}) for i in range(n)]
    (folder / "big.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "big.jsonl"


def _raw(sock_path, data: bytes) -> dict | None:
    """Send raw bytes to the server and hang up; its reply, or None when it sent nothing
    back (or reset the connection: it closes one whose request it stopped reading)."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(str(sock_path))
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:  # the server stopped reading a request it refused
            pass
        try:
            reply = s.makefile("rb").read()
        except ConnectionResetError:
            return None
    return json.loads(reply) if reply else None


def _gone(pid: int) -> bool:
    """The process has exited (a zombie its parent has not reaped yet counts)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _queued(vault) -> int:
    return index_rows(vault, "SELECT count(*) FROM jobs")[0][0]


def test_add_starts_the_server_and_its_worker_completes_the_note(amem, vault):
    assert _status(amem)["running"] is False
    res = amem("add", "Otters hold hands while they sleep so they do not drift apart", check=True)
    note_id = res.stdout.strip()
    assert (vault / f"{note_id}.md").exists()  # acknowledged: the file is there
    status = _status(amem)
    assert status["running"] and status["pid"] != os.getpid()
    # Built at once (no model: nothing to queue); with a model the worker builds and links it after the reply.
    assert wait_until(lambda: _queued(vault) == 0)
    shown = json.loads(amem("show", note_id, "--json", check=True).stdout)
    assert shown["keywords"] and shown["tags"] and shown["context"] == ""  # an otter fact tells no kind: no context
    assert "amem_fallbacks" not in (vault / f"{note_id}.md").read_text()  # no model: the method, not a fallback
    hits = json.loads(amem("search", "sleeping otters", "--json", "--mode", "semantic", check=True).stdout)
    assert hits[0]["id"] == note_id
    assert _status(amem)["requests"] >= 3  # show and search went through the server too


def test_output_errors_exit_codes_and_stdin_pass_through(amem, vault, amem_cmd):
    amem("add", "first note", check=True)
    res = amem("show", "20990101T000000000-dead")
    assert res.returncode == 3 and "no note with the id" in res.stderr and res.stdout == ""
    res = amem("search", "x", "--mode", "sideways")
    assert res.returncode == 2 and "sideways" in res.stderr
    piped = subprocess.run(
        [*amem_cmd, "add"], input="A piped note about walruses", capture_output=True, text=True,
        env={**os.environ, **SERVER, "AMEM_DIR": str(vault)}, timeout=60,
    )
    assert piped.returncode == 0, piped.stderr
    assert "walruses" in (vault / f"{piped.stdout.strip()}.md").read_text()
    assert _status(amem)["requests"] >= 4


def test_a_server_started_by_a_command_takes_its_global_options(amem, vault):
    env = {"AMEM_EMBEDDER": ""}  # the embedder given only as a flag
    note_id = amem("--embedder", "fake", "add", "a note about flags", env=env, check=True).stdout.strip()
    assert _status(amem)["running"]
    res = amem("--embedder", "fake", "search", "flags", "--json", env=env, check=True)
    assert json.loads(res.stdout)[0]["id"] == note_id
    assert _status(amem)["running"]  # the same settings: the same server answered


def test_no_server_and_other_settings_work_in_process(amem, vault):
    amem("add", "a note", check=True)
    before = _status(amem)["requests"]
    assert amem("--no-server", "list", check=True).stdout.count("a note") == 1
    assert _status(amem)["requests"] == before  # `server status` itself is not a command run
    # Other settings than the server's: the command runs here, and the server serves on
    # (tests/cli/test_server_settings.py has the rest).
    res = amem("search", "note", env={"AMEM_FUSION": "rrf"}, check=True)
    assert "a note" in res.stdout
    assert _status(amem)["running"] and _status(amem)["requests"] == before


def test_queued_work_of_a_killed_server_is_done_by_the_next(amem, vault):
    def amem(*args, _amem=amem, **kw):  # with a model: without one no work is queued
        return _amem(*args, env={"AMEM_LLM": "fake"}, **kw)

    ids = [amem("--no-server", "add", "--defer", f"note {i} about glaciers", check=True).stdout.strip() for i in range(3)]
    assert _queued(vault) == 3
    amem("search", "glaciers", check=True)  # starts a server, whose worker resumes the queue
    assert wait_until(lambda: _queued(vault) == 0)
    for note_id in ids:
        assert json.loads(amem("show", note_id, "--json", check=True).stdout)["keywords"]
    # SIGKILL right after an acknowledged add: the note is on disk, its job done or queued.
    pid = _status(amem)["pid"]
    note_id = amem("add", "a note about moraines", check=True).stdout.strip()
    os.kill(pid, signal.SIGKILL)
    assert "moraines" in (vault / f"{note_id}.md").read_text()
    amem("search", "moraines", check=True)  # a new server (the dead one's socket is replaced)
    assert wait_until(lambda: _queued(vault) == 0)
    assert json.loads(amem("show", note_id, "--json", check=True).stdout)["keywords"]


def test_idle_timeout_socket_permissions_and_bad_requests(amem, vault, amem_cmd):
    proc = subprocess.Popen([*amem_cmd, "--dir", str(vault), "serve", "--idle-timeout", "2"],
                            env={**os.environ, **SERVER}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        sock = vault / ".amem" / "server.sock"
        assert wait_until(lambda: sock.exists())
        assert stat.S_IMODE(sock.stat().st_mode) & 0o077 == 0  # owner only
        assert stat.S_IMODE((vault / ".amem").stat().st_mode) & 0o077 == 0
        for bad in (b"not json\n", b'{"op": "search", "args": "a string"}\n', b'{"op": "launch"}\n', b"[1, 2]\n"):
            assert "error" in _raw(sock, bad)
        assert _raw(sock, b'{"op": "ping"}\n') == {"ok": True}  # still up (asked at once: it idles out in 2 s)
        assert proc.wait(timeout=30) == 0  # then stops by itself when idle
        assert not sock.exists()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_import_through_the_server_reads_relative_paths_and_stdin(amem, vault, amem_cmd, tmp_path):
    (tmp_path / "talk.jsonl").write_text('{"content": "walruses sleep in the water"}\nnot json\n', encoding="utf-8")
    res = subprocess.run([*amem_cmd, "import", "talk.jsonl"], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, **SERVER, "AMEM_DIR": str(vault)}, timeout=60)
    assert res.returncode == 1 and "talk.jsonl:2: not JSON" in res.stderr
    assert res.stdout.strip() == "imported 1 note, skipped 1 (see above)"
    piped = subprocess.run([*amem_cmd, "import", "-", "--json"], input='{"content": "a piped walrus"}\n',
                           capture_output=True, text=True, env={**os.environ, **SERVER, "AMEM_DIR": str(vault)}, timeout=60)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["imported"] == 1
    assert _status(amem)["requests"] >= 2


def test_a_search_does_not_wait_for_a_long_import_to_end(amem, vault, amem_cmd, tmp_path):
    """The import gives its turn up between batches: a search is answered meanwhile, in
    its own working folder, and the import still reads its relative path."""
    _walruses(tmp_path)
    amem("add", "the first walrus", check=True)  # the server is up and warm
    server = _status(amem)["pid"]
    importing = subprocess.Popen([*amem_cmd, "--dir", str(vault), "import", "big.jsonl", "--batch", "25"],
                                 cwd=tmp_path, env={**os.environ, **SERVER}, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: len(list(vault.glob("*.md"))) > 100, timeout=120)  # well into the import
        found = amem("search", "first walrus", "--limit", "1", "--json", check=True)
        assert importing.poll() is None, "the search waited for the whole import"
        assert json.loads(found.stdout)[0]["content"] == "the first walrus"
        out, err = importing.communicate(timeout=600)
    finally:
        if importing.poll() is None:
            importing.kill()
    assert importing.returncode == 0, err
    assert out.strip() == "imported 1500 notes"
    assert _status(amem)["pid"] == server  # both ran in the one server


def test_a_server_busy_longer_than_its_idle_timeout_does_not_stop(amem, vault, amem_cmd, tmp_path):
    """Idle counts from the end of the last command: a server given a 1 s timeout runs a
    longer import to its end. (It used to stop under the import; the client then did the
    import again in its own process, and reported only the notes of that second run.)"""
    big = _walruses(tmp_path)
    server = subprocess.Popen([*amem_cmd, "--dir", str(vault), "serve", "--idle-timeout", "1"],
                              env={**os.environ, **SERVER}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: (vault / ".amem" / "server.json").exists())
        t0 = time.monotonic()
        res = amem("import", str(big), "--batch", "25", check=True)
        assert time.monotonic() - t0 > 3, "the import was too quick to outlast the idle timeout"
        assert res.stdout.strip() == "imported 1500 notes"
        assert server.wait(timeout=30) == 0  # and idles out afterwards
    finally:
        if server.poll() is None:
            server.kill()
    log = (vault / ".amem" / "server.log").read_text() if (vault / ".amem" / "server.log").exists() else ""
    assert "Traceback" not in log, log[-2000:]


def test_stopping_the_server_ends_an_import_between_batches_and_the_same_import_resumes(amem, vault, amem_cmd, tmp_path):
    big = _walruses(tmp_path)
    amem("add", "the first walrus", check=True)  # the server is up
    importing = subprocess.Popen([*amem_cmd, "--dir", str(vault), "import", str(big), "--batch", "25"],
                                 env={**os.environ, **SERVER}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: len(list(vault.glob("*.md"))) > 100, timeout=120)
        amem("server", "stop", check=True)
        out, err = importing.communicate(timeout=300)
    finally:
        if importing.poll() is None:
            importing.kill()
    assert importing.returncode == 1, (out, err)
    assert "the import stopped because the server was stopped" in err
    assert "Traceback" not in err
    stored = len(list(vault.glob("*.md")))
    assert 100 < stored < 1501
    again = amem("import", str(big), check=True)  # starts a server again
    assert again.stdout.strip() == f"imported {1501 - stored} notes, skipped {stored - 1} already imported"
    assert len(list(vault.glob("*.md"))) == 1501
    assert index_rows(vault, "SELECT count(*) FROM notes") == [(1501,)]


def test_a_server_that_dies_before_it_answers_leaves_an_add_to_the_user(amem, vault):
    """The server took the command and sent nothing back: an `add` may have been done, so
    it is not done again here (a second note); the user is told. A search is just redone."""
    with fake_server(vault / ".amem" / "server.sock", lambda request: None):  # takes requests and dies
        res = amem("add", "A note that must not be added twice.")
        assert res.returncode == 1
        assert "`add` may or may not have been done" in res.stderr and "Traceback" not in res.stderr
        assert not list(vault.glob("*.md"))
        assert amem("search", "note", check=True).returncode == 0


@pytest.mark.integration
def test_output_survives_the_bundled_model_working_in_the_background(amem, vault):
    """llama-cpp-python points sys.stdout at /dev/null while a model loads: the server
    loads it before taking commands, so a search's output never vanishes."""
    env = {"AMEM_LLM": ""}  # the bundled model
    amem("add", "Kestrels hover over the motorway verge", env=env, check=True)
    for _ in range(3):  # while the worker runs the model on that note
        res = amem("search", "kestrels", "--limit", "1", env=env, check=True)
        assert "Kestrels hover" in res.stdout


def test_malformed_requests_get_errors_and_the_server_serves_on(amem, vault):
    from amem_cli.server.daemon import MAX_REQUEST

    note_id = amem("add", "Puffins mate for life and return to the same burrow", check=True).stdout.strip()
    pid = _status(amem)["pid"]
    sock = vault / ".amem" / "server.sock"
    env = {**{k: v for k, v in os.environ.items() if k.startswith("AMEM_")}, **SERVER}  # as the CLI sends it
    settings = {"flags": {}, "env": env, "dir": str(vault)}
    valid = json.dumps({"op": "show", "args": {"id": note_id}, "settings": settings, "protocol": PROTOCOL}).encode() + b"\n"
    bad = {
        "garbage bytes": bytes(range(256)) * 4 + b"\n",
        "not UTF-8": b'{"op": "\xff\xfe"}\n',
        "truncated frame": b'{"op": "list", "args": {"limit": 5',
        "a length prefix, as some protocols have": (2**31 - 1).to_bytes(4, "big") + b'{"op": "ping"}',
        "a line longer than the limit": b"[" * (MAX_REQUEST + 1024),
        "deeply nested JSON": b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "a JSON list": b'["op", "list"]\n',
        "a JSON string": b'"ping"\n',
        "op of the wrong type": b'{"op": 5}\n',
        "nothing at all": b"",
    }
    # Well-formed but for one field (the rest as the CLI sends it, so the server gets that far).
    base = {"op": "list", "args": {}, "settings": settings, "protocol": PROTOCOL}
    for what, change in {
        "args not an object": {"args": ["list"]},
        "an argument of the wrong type": {"args": {"limit": "ten"}},
        "an argument the operation does not take": {"args": {"argv": ["list"]}},
        "an argument missing": {"op": "show", "args": {}},
        "settings not an object": {"settings": "AMEM_LLM=none"},
        "env not an object": {"settings": {**settings, "env": "AMEM_LLM=none"}},
        "dir of the wrong type": {"settings": {**settings, "dir": 7}},
        "a flag the CLI has not": {"settings": {**settings, "flags": {"--dir": str(vault)}}},
        "a command that would take the server over": {"op": "serve"},
        "a command that would serve MCP on the server's stdio": {"op": "mcp"},
        "a command that would open an editor in the server": {"op": "edit_note", "args": {"id": note_id}},
        "an operation done in the command's own process": {"op": "init", "args": {}},
    }.items():
        bad[what] = json.dumps({**base, **change}).encode() + b"\n"
    for what, data in bad.items():
        reply = _raw(sock, data)
        if reply is None:  # refused unread: the only request the server may cut off
            assert what == "a line longer than the limit"
        else:
            assert "error" in reply and "result" not in reply, (what, reply)
            assert reply["error"]["exit_code"] == 2 and reply["error"]["message"], (what, reply)
        # The next well-formed request is served, by the same server.
        ok = _raw(sock, valid)
        assert ok["result"]["id"] == note_id, what
    # A client that connects and hangs up at once, and one that connects and says nothing.
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock))
    idle = socket.socket(socket.AF_UNIX)
    idle.connect(str(sock))
    try:
        assert amem("show", note_id, check=True).stdout
        status = _status(amem)
        assert status["pid"] == pid and status["running"]
    finally:
        idle.close()
    log = (vault / ".amem" / "server.log").read_text()
    assert "Traceback" not in log, log[-2000:]


def test_secrets_reach_no_byte_of_the_vault_or_the_server_log(amem, vault, tmp_path):
    """add, ingest and import through the warm server (its model the fake one): no secret
    in the files, the index, the vectors or the server's log."""
    from secret_corpus import secrets

    corpus = secrets()
    sentences = [sentence for _, _, sentence in corpus]
    env = {"AMEM_LLM": "fake", "AMEM_LINK_THRESHOLD": "-1"}
    amem("add", "\n".join(sentences[:80]), env=env, check=True)
    (tmp_path / "talk.txt").write_text("\n\n".join(f"user: {s}" for s in sentences[80:160]))
    res = amem("ingest", str(tmp_path / "talk.txt"), "--json", env=env)
    assert res.returncode == 0 and json.loads(res.stdout)["redactions"] == 80, res.stderr
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps({"content": s}) for s in sentences[160:]) + "\n")
    amem("import", str(tmp_path / "a.jsonl"), env=env, check=True)
    assert wait_until(lambda: _queued(vault) == 0)
    pid = _status(amem)["pid"]
    assert amem("server", "stop", check=True).stdout.strip() == "stopped"
    assert _gone(pid)  # once `stop` returns: its files are final
    assert not (vault / ".amem" / "server.json").exists()
    files = [p for p in vault.rglob("*") if p.is_file()]
    assert any(p.name == "server.log" for p in files) and any("chroma" in p.parts for p in files)
    data = b"".join(p.read_bytes() for p in files)
    assert [kind for kind, value, _ in corpus if value.encode() in data] == []


def test_servers_started_at_once_leave_exactly_one(amem, vault, amem_cmd):
    """Commands that find no server each start one: the others give way at once."""
    procs = [subprocess.Popen([*amem_cmd, "--dir", str(vault), "serve"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env={**os.environ, **SERVER}) for _ in range(4)]
    try:
        assert wait_until(lambda: sum(p.poll() is not None for p in procs) == 3, timeout=120)
        for p in (p for p in procs if p.poll() is not None):
            _, err = p.communicate()
            assert p.returncode == 4 and "another amem server is serving this vault" in err, err
        assert wait_until(lambda: _status(amem)["running"], timeout=120)  # the one left is up once warm
        assert amem("search", "anything", "--json", check=True).returncode == 0
    finally:
        amem("server", "stop")
        for p in procs:
            p.wait(timeout=60)


def test_the_search_and_show_clients_load_no_pipeline_or_service_module(amem, vault):
    """The process a shell user waits on only asks the server and prints: it never loads
    the note pipeline (`amem_cli.steps` costs ~58 ms to import) or the services."""
    note_id = amem("add", "The walrus sleeps on the ice floe", check=True).stdout.strip()
    probe = ("import sys; from amem_cli.cli.entry import main; sys.argv = ['amem', *sys.argv[1:]]\n"
             "try: main()\nexcept SystemExit: pass\n"
             "print('LOADED=' + ' '.join(sorted(m for m in sys.modules if m.startswith(('amem_cli.steps', 'amem_cli.services')))))")
    for args in (["search", "walrus sleeps"], ["show", note_id]):
        res = subprocess.run([sys.executable, "-c", probe, "--dir", str(vault), *args], capture_output=True, text=True,
                             env={**os.environ, **SERVER}, timeout=120)
        assert "walrus" in res.stdout, res.stderr
        assert res.stdout.rstrip().rsplit("\n", 1)[-1] == "LOADED=", args
