"""The warm server where things go wrong around it: its `.amem/` removed under it (the old
server used to serve on unseen, 285 MB, beside a new one with a lock of its own), and a
burst of clients at once (a listen queue of 5 turned them away as "no server")."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from amem_cli.server.client import call
from conftest import wait_until

SERVER = {"AMEM_SERVER": "auto", "AMEM_EMBEDDER": "fake"}


def _alive(pid: int) -> bool:
    """Running (a zombie its parent has not reaped yet has exited)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _servers_of(vault: Path) -> list[int]:
    """The live `amem ... serve` processes of this vault."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and os.fsencode(vault) in argv and _alive(int(entry.name)):
            found.append(int(entry.name))
    return found


@pytest.fixture
def amem(run_amem, vault):
    """`amem --dir VAULT ARGS` with the server on; every server of the vault is gone at the end."""
    run_amem("--dir", vault, "init", env=SERVER, check=True)

    def run(*args, **kw):
        return run_amem("--dir", vault, *args, env=SERVER, **kw)

    yield run
    run("server", "stop")
    for pid in _servers_of(vault):
        os.kill(pid, signal.SIGKILL)


def _server_pid(amem) -> int:
    status = json.loads(amem("server", "status", "--json", check=True).stdout)
    assert status["running"], status
    return status["pid"]


def test_a_server_whose_index_folder_was_removed_stops(amem, vault):
    amem("add", "the lighthouse keeper logs the weather", check=True)  # starts the server
    old = _server_pid(amem)
    shutil.rmtree(vault / ".amem")
    amem("search", "lighthouse", check=True)  # no .amem/: done here, which makes a new one
    assert wait_until(lambda: not _alive(old)), "the server of the removed .amem/ is still running"
    hits = json.loads(amem("search", "lighthouse", "--json", check=True).stdout)  # starts a fresh server
    assert [h["content"] for h in hits] == ["the lighthouse keeper logs the weather"]
    new = _server_pid(amem)
    assert new != old and _servers_of(vault) == [new]


def test_a_burst_of_200_clients_finds_the_one_server(amem, vault):
    amem("search", "anything", check=True)  # starts the server
    pid = _server_pid(amem)
    answers: list = []

    def client() -> None:
        try:
            answers.append(call(vault / ".amem", {"op": "status"}, timeout=60)["pid"])
        except OSError as exc:  # what made a client conclude "no server"
            answers.append(repr(exc))

    threads = [threading.Thread(target=client) for _ in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [pid] * 200, sorted(set(map(str, answers)))


def test_a_client_waits_for_room_in_a_full_queue(tmp_path, monkeypatch):
    """However the OS caps the queue: a server with room for one waiting connection,
    that starts accepting only after a while, still answers all twenty clients."""
    index_dir = tmp_path / ".amem"
    index_dir.mkdir()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(index_dir / "server.sock"))
    listener.listen(1)

    def serve() -> None:
        time.sleep(0.5)
        listener.settimeout(10)  # clients that gave up never come: no test hangs on them
        for _ in range(20):
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.makefile("rb").readline()
                conn.sendall(b'{"ok": true}\n')

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    answers: list = []

    def client() -> None:
        try:
            answers.append(call(index_dir, {"op": "ping"}, timeout=30))
        except OSError as exc:
            answers.append(repr(exc))

    threads = [threading.Thread(target=client) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    server.join(timeout=30)
    listener.close()
    assert answers == [{"ok": True}] * 20, answers
