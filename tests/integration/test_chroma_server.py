"""amem against a real Chroma server (`chroma run`), from Python and from the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import free_port

pytestmark = pytest.mark.integration

START_TIMEOUT = 60.0


def _chroma_exe() -> str | None:
    beside_python = Path(sys.executable).parent / "chroma"
    if beside_python.is_file() and os.access(beside_python, os.X_OK):
        return str(beside_python)
    return shutil.which("chroma")



@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """A real Chroma server on a free local port: yields its URL; stopped at teardown."""
    exe = _chroma_exe()
    if exe is None:
        pytest.skip("the `chroma` command (shipped with the chromadb package) is not installed")
    import chromadb
    from chromadb.config import Settings

    base = tmp_path_factory.mktemp("chroma_server")
    port = free_port()
    log = (base / "server.log").open("wb")
    proc = subprocess.Popen(
        [exe, "run", "--path", str(base / "data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"chroma run exited with {proc.returncode}:\n{(base / 'server.log').read_text()}")
            try:
                chromadb.HttpClient(
                    host="127.0.0.1", port=port, settings=Settings(anonymized_telemetry=False)
                ).heartbeat()
                break
            except Exception:
                if time.monotonic() > deadline:
                    pytest.fail(f"chroma run did not answer within {START_TIMEOUT:.0f} s")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
        log.close()


def _server_collections(url: str) -> dict[str, int]:
    import chromadb
    from chromadb.config import Settings

    host, port = url.removeprefix("http://").split(":")
    client = chromadb.HttpClient(host=host, port=int(port), settings=Settings(anonymized_telemetry=False))
    return {c.name: client.get_collection(c.name).count() for c in client.list_collections()}


def test_api_against_server(vault, chroma_server):
    from amem_cli import AgentMemory

    with AgentMemory(vault, embedder="fake", chroma_url=chroma_server) as mem:
        a = mem.add("Alice prefers green tea over coffee", tags=["people"])
        b = mem.add("The build server listens on port 8080")
        c = mem.add("Bob keeps bees in his garden", tags=["people"])
        # Vectors live on the server, not in a local store.
        assert not (vault / ".amem" / "chroma").exists()
        collections = _server_collections(chroma_server)
        mine = [name for name in collections if name.startswith("amem-")]
        assert len(mine) == 1 and collections[mine[0]] == 3

        hits = mem.search("green tea", mode="semantic")
        assert hits[0].note.id == a.id
        assert mem.search("port 8080")[0].note.id == b.id
        assert [h.note.id for h in mem.search("bees garden", tags=["people"])][0] == c.id

        mem.delete(a.id)
        assert a.id not in [h.note.id for h in mem.search("green tea", mode="semantic", top_k=10)]
        assert _server_collections(chroma_server)[mine[0]] == 2

    # Rebuild from the files: the server's collection is emptied and refilled.
    shutil.rmtree(vault / ".amem")
    with AgentMemory(vault, embedder="fake", chroma_url=chroma_server) as mem:
        report = mem.reindex()
        assert report.notes == 2 and not report.errors
        assert _server_collections(chroma_server)[mine[0]] == 2
        assert mem.search("bees", mode="semantic")[0].note.id == c.id


def test_two_vaults_share_one_server(tmp_path, chroma_server):
    from amem_cli import AgentMemory

    before = set(_server_collections(chroma_server))
    with AgentMemory(tmp_path / "one", embedder="fake", chroma_url=chroma_server) as one, \
            AgentMemory(tmp_path / "two", embedder="fake", chroma_url=chroma_server) as two:
        n1 = one.add("only in the first vault: lighthouse keeper")
        n2 = two.add("only in the second vault: submarine cook")
        assert [h.note.id for h in one.search("submarine cook lighthouse", mode="semantic", top_k=5)] == [n1.id]
        assert [h.note.id for h in two.search("submarine cook lighthouse", mode="semantic", top_k=5)] == [n2.id]
    # One collection per vault, named from the vault's path.
    new = {k: v for k, v in _server_collections(chroma_server).items() if k not in before}
    assert len(new) == 2 and all(k.startswith("amem-") for k in new) and sorted(new.values()) == [1, 1]


def test_cli_against_server(vault, chroma_server, run_amem):
    env = {"AMEM_CHROMA_URL": chroma_server}
    base = ("--dir", vault, "--embedder", "fake")
    ids = [
        run_amem(*base, "add", text, env=env, check=True).stdout.strip()
        for text in ("Alice prefers green tea", "Bob keeps bees in his garden")
    ]
    assert not (vault / ".amem" / "chroma").exists()

    res = run_amem(*base, "search", "green tea", "--mode", "semantic", "--json", env=env, check=True)
    assert json.loads(res.stdout)[0]["id"] == ids[0]

    st = json.loads(run_amem(*base, "status", "--json", env=env, check=True).stdout)
    assert st["vector_store"] == chroma_server and st["embedded"] == 2

    assert run_amem(*base, "rm", ids[0], env=env, check=True).returncode == 0
    res = run_amem(*base, "reindex", "--json", env=env, check=True)
    assert json.loads(res.stdout) == {"notes": 1, "embedded": 1, "errors": []}
    res = run_amem(*base, "search", "green tea bees", "--mode", "semantic", "--json", env=env, check=True)
    assert [h["id"] for h in json.loads(res.stdout)] == [ids[1]]


def test_unreachable_server_is_one_clear_error(vault, run_amem):
    env = {"AMEM_CHROMA_URL": f"http://127.0.0.1:{free_port()}"}
    run_amem("--dir", vault, "--embedder", "fake", "init", check=True)
    res = run_amem("--dir", vault, "--embedder", "fake", "search", "anything", "--mode", "semantic", env=env)
    assert res.returncode == 1
    assert "cannot reach the Chroma server" in res.stderr
    assert "Traceback" not in res.stderr
