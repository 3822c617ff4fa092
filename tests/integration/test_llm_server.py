"""amem's pipeline through an OpenAI-compatible endpoint: llama-cpp-python's own server
(`python -m llama_cpp.server`, via amem's wrapper) serving the bundled GGUF on loopback."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request

import pytest

from amem_cli import AgentMemory
from amem_cli.llm import LLMError, make_llm
from amem_cli.llm.llamacpp import default_model_path
from conftest import free_port, internals

pytestmark = pytest.mark.integration

START_TIMEOUT = 120.0



@pytest.fixture(scope="module")
def llm_server(tmp_path_factory):
    pytest.importorskip("uvicorn", reason="needs llama-cpp-python[server] (the test extra)")
    port = free_port()
    log_path = tmp_path_factory.mktemp("llm_server") / "server.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "amem_cli.llm.endpoint", "--model", str(default_model_path()),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "1"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the server exited with {proc.returncode}:\n{log_path.read_text()}")
            try:
                with urllib.request.urlopen(url + "/models", timeout=2) as res:
                    json.load(res)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"the server did not start in {START_TIMEOUT} s:\n{log_path.read_text()}")
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_notes_are_built_linked_and_evolved_through_the_endpoint(llm_server, tmp_path):
    with AgentMemory(tmp_path / "v", embedder="fake", llm="openai", llm_url=llm_server, link_threshold=0.0,
                     model_fields="all") as mem:  # every step through the endpoint
        assert internals(mem).llm.identity.startswith(f"openai:{llm_server}")
        a = mem.add("We run long Postgres migrations at night so that table locks never block a deploy.")
        b = mem.add("The deploy failed because the Postgres migration locked the users table.")
        stats = internals(mem).notes.pipeline.stats
        assert stats.llm_calls >= 3  # one builds each note, one lets the note b links evolve
        for note in (a, b):
            assert note.keywords and note.tags and note.boxes
            # the model's context, or none when the checks refused it (the deterministic method's adds nothing here)
            assert note.context or "context" in note.metadata["amem_fallbacks"]
        b = mem.get(b.id)
        assert all(a.id == t or mem.get(t).backlinks == [b.id] for t in b.links)


def test_a_dead_endpoint_is_one_clear_error_and_no_note_is_half_written(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1"
    with AgentMemory(tmp_path / "v", embedder="fake", llm="openai", llm_url=url, model_fields="all") as mem:
        with pytest.raises(LLMError, match="127.0.0.1"):
            mem.add("a note while the model server is down")
        assert list(mem.path.glob("*.md")) == []
    assert make_llm(None, url=url).identity.startswith("openai:")
