from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

# No test may reach a hub or phone home.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["ANONYMIZED_TELEMETRY"] = "False"


# Set for the whole session by `_model_cache` (or by CI for the tests); isolation keeps them.
KEPT = ("AMEM_CONFIG", "AMEM_CACHE_DIR", "AMEM_REQUIRE_CHROMIUM")


def isolate(mp: pytest.MonkeyPatch, config: Path) -> None:
    """No test reads the developer's own config or vault. The pipeline runs on its
    deterministic fallbacks (fast and exact); tests of a real or scripted model ask for theirs."""
    mp.setenv("AMEM_CONFIG", str(config))
    for key in [k for k in os.environ if k.startswith("AMEM_") and k not in KEPT]:
        mp.delenv(key)
    mp.setenv("AMEM_LLM", "none")
    mp.setenv("AMEM_SERVER", "off")  # no test leaves a background server behind; server tests ask for one


# Files that take minutes without a real model (many processes, servers started and killed;
# measured with --durations): handed out first, with the files of `integration` tests.
SLOW_FILES = {"test_concurrency.py", "test_crash.py", "test_read_only_vault.py", "test_edit_race.py",
              "test_server.py"}


def pytest_collection_modifyitems(config, items):
    """The slow files first, so that under `pytest -n` (`make test`) they run while the
    other workers go through the quick ones, instead of one worker finishing alone with
    them (the suite once sat at 33 % for 20 minutes)."""
    slow = {item.path for item in items if item.get_closest_marker("integration") or item.path.name in SLOW_FILES}
    items.sort(key=lambda item: item.path not in slow)  # stable: each file keeps its order


@pytest.fixture(scope="session", autouse=True)
def _model_cache(tmp_path_factory):
    """The ONNX export of the model: made once per test run, never in the developer's cache.
    The workers of `pytest -n` share the run's folder (an export is written under a name of
    its process's own, then renamed, so two at once cannot clash)."""
    mp = pytest.MonkeyPatch()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        cache = tmp_path_factory.getbasetemp().parent / "model-cache"
        cache.mkdir(exist_ok=True)
    else:
        cache = tmp_path_factory.mktemp("cache")
    mp.setenv("AMEM_CACHE_DIR", str(cache))
    yield
    mp.undo()


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory, monkeypatch):
    isolate(monkeypatch, tmp_path_factory.mktemp("config") / "config.toml")


# -- no network: a test may talk to loopback and Unix sockets, nothing else ------------

_LOOPBACK_NAMES = {"localhost", "ip6-localhost", "ip6-loopback"}


def _is_loopback(host) -> bool:
    import ipaddress

    host = host.decode() if isinstance(host, bytes) else str(host)
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False  # a name other than localhost would need DNS: that is the network too


class NetworkAttempt(ConnectionRefusedError):
    """Raised in place of a connection off this machine (an OSError, as no network gives)."""


@pytest.fixture(autouse=True)
def network_attempts(monkeypatch):
    """Every AF_INET/AF_INET6 connect to a non-loopback address is refused and recorded,
    and the test fails at teardown even if the code under test swallowed the error
    (telemetry does). A test of the guard itself clears the list it is handed."""
    import socket

    attempts: list[str] = []

    def guard(connect):
        def checked(sock, address, *args, **kwargs):
            if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
                attempts.append(f"{address!r}")
                raise NetworkAttempt(f"tests may not use the network: connect to {address!r}")
            return connect(sock, address, *args, **kwargs)

        return checked

    monkeypatch.setattr(socket.socket, "connect", guard(socket.socket.connect))
    monkeypatch.setattr(socket.socket, "connect_ex", guard(socket.socket.connect_ex))
    yield attempts
    if attempts:
        pytest.fail("network connection attempted: " + ", ".join(attempts), pytrace=False)


def free_port() -> int:
    """A free TCP port on loopback, for a server a test starts."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout: float = 30.0) -> bool:
    """Whether `predicate()` came true within `timeout` seconds (asked every 0.1 s)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


@contextlib.contextmanager
def fake_server(sock: Path, answer):
    """A stand-in for the warm server listening on `sock`: each request (one line of
    JSON) is handed to `answer`, and what it returns is sent back; None sends nothing and
    hangs up."""
    import json
    import socket
    import threading

    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(sock))
    listener.listen()

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                reply = answer(json.loads(conn.makefile("rb").readline()))
                if reply is not None:
                    conn.sendall(json.dumps(reply).encode() + b"\n")

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield
    finally:
        listener.close()


@contextlib.contextmanager
def read_only_view(folder: Path, view: Path):
    """`folder` seen at `view` through a read-only bind mount (root only: skips elsewhere)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a read-only bind mount needs root")
    view.mkdir()
    if subprocess.run(["mount", "--bind", str(folder), str(view)], capture_output=True).returncode != 0:
        pytest.skip("cannot bind-mount here")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], check=True, capture_output=True)
        yield view
    finally:
        subprocess.run(["umount", "-l", str(view)], capture_output=True)


@pytest.fixture
def vault(tmp_path) -> Path:
    path = tmp_path / "vault"
    path.mkdir()
    return path


def index_rows(vault: Path, sql: str, *params) -> list[tuple]:
    """Rows of the vault's SQLite index, read as a separate connection would."""
    import sqlite3

    con = sqlite3.connect(vault / ".amem" / "index.db")
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


@pytest.fixture
def run(vault):
    """`amem --dir VAULT --embedder fake ARGS` through Typer's CliRunner (in process)."""
    from typer.testing import CliRunner

    from amem_cli.cli.app import app

    runner = CliRunner()

    def invoke(*args, input=None):
        return runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", *map(str, args)], input=input)

    return invoke


@pytest.fixture
def memory(vault):
    """An AgentMemory on a temp vault with the fake embedder (real SQLite, real local Chroma)."""
    from amem_cli import AgentMemory

    mem = AgentMemory(vault, embedder="fake")
    yield mem
    mem.close()


# Note text no view of the graph may let through as markup: quotes, tags, a closing
# script tag, Mermaid's and DOT's special characters, a control character, a newline.
HOSTILE = 'Say "hi" </script><script>document.body.dataset.pwned = 1</script> <b>#1</b> & [x] `c` \\ \x01\nnext line'


@pytest.fixture
def graph_vault(vault) -> Path:
    """A vault of note files: a and b link each other, b links c, c -> d is a sequence,
    e stands alone with HOSTILE text and a box named in markup. Commands index them on first use."""
    from datetime import datetime, timezone

    from amem_cli.markdown import render_note
    from amem_cli.models import Note

    notes = [
        Note("a", "Alpha", links=["b"], tags=["x"], boxes=["one"]),
        Note("b", "Beta", links=["a", "c"], boxes=["two"]),
        Note("c", "Gamma", tags=["x"], next="d"),
        Note("d", "Delta", previous="c"),
        Note("e", HOSTILE, tags=["x", "odd"], boxes=["<i>box</i>", "one"]),
    ]
    for day, note in enumerate(notes, 1):
        note.created_at = datetime(2025, 1, day, tzinfo=timezone.utc)
        (vault / f"{note.id}.md").write_text(render_note(note), encoding="utf-8")
    return vault


# -- helpers for tests that run amem in other processes ---------------------

# Runs the Typer app the way the `amem` console script does, with this interpreter
# (so the tests do not depend on the venv's bin folder being on PATH).
AMEM_MAIN = "import sys; from amem_cli.cli.entry import main; sys.argv[0] = 'amem'; main()"


@pytest.fixture
def amem_cmd() -> list[str]:
    """The argv prefix that runs `amem` in a new process: `[*amem_cmd, '--dir', V, 'list']`."""
    import sys

    return [sys.executable, "-c", AMEM_MAIN]


@pytest.fixture
def run_amem(amem_cmd):
    """Run `amem ARGS...` in a new process; returns the CompletedProcess (text mode)."""
    import subprocess

    def run(*args: str, env: dict | None = None, timeout: float = 300, check: bool = False):
        full_env = {**os.environ, **(env or {})}
        res = subprocess.run(
            [*amem_cmd, *map(str, args)], capture_output=True, text=True, env=full_env, timeout=timeout
        )
        if check and res.returncode != 0:
            raise AssertionError(f"amem {' '.join(map(str, args))} exited {res.returncode}:\n{res.stdout}\n{res.stderr}")
        return res

    return run



def served(run_amem, vault: Path, server_env: dict[str, str]):
    """The body of a fixture: `amem --dir VAULT ARGS` with the warm server on (its
    environment `server_env`); every server is stopped at the end."""
    import json
    import signal

    run_amem("--dir", vault, "init", env=server_env, check=True)

    def run(*args, env=None, **kw):
        return run_amem("--dir", vault, *args, env={**server_env, **(env or {})}, **kw)

    yield run
    run("server", "stop")
    info = vault / ".amem" / "server.json"
    if info.exists():  # a server that would not stop
        os.kill(json.loads(info.read_text())["pid"], signal.SIGKILL)


# -- reaching what a vault keeps -----------------------------------------------------


def queued(mem) -> list[str]:
    """The notes whose model work an `AgentMemory` has queued, in the order it is done."""
    return [job.id for job in mem.queue().jobs]


def internals(holder):
    """The one seam into the services behind an `AgentMemory` or an `operations.Facade`
    (its container), for the tests of a part no operation shows: a service's own method,
    the queue's claims, a write a person's save races with (monkeypatched there).
    Everything else goes through the API, or reads the index as another process would
    (`index_rows`)."""
    facade = getattr(holder, "_facade", holder)
    return facade._services()


def facade_on(vault: Path, **settings):
    """An `operations.Facade` on `vault` (made if missing), with the fake embedder and no
    model unless `settings` say otherwise: what the MCP server's tools are built on."""
    from amem_cli.config import load_settings
    from amem_cli.operations import Facade

    return Facade(load_settings(dir=str(vault), **{"embedder": "fake", "llm": "none", **settings}), create=True)


@pytest.fixture
def small_vaults_file(monkeypatch):
    """Topics form as notes come in a vault of any size (not only from MIN_VAULT notes)."""
    monkeypatch.setattr("amem_cli.services.boxes.MIN_VAULT", 0)
