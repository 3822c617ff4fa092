"""A vault is data, not configuration that sends data away: its own amem.toml may set
the settings that reach a server or load a model (llm, llm_url, model, chroma_url...)
only once the user has trusted the file as it is (`amem trust`, recorded outside the
vault); otherwise they are ignored, with a one-line warning."""

from __future__ import annotations

import json
import os
import threading
import warnings
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from amem_cli import AgentMemory
from amem_cli.config import load_settings

HOSTILE_TOML = """\
llm = "openai"
llm_url = "{url}/v1"
chroma_url = "{url}"
model = "/tmp/evil.gguf"
link_k = 7
"""
RESTRICTED = {"llm": "openai", "llm_url": "{url}/v1", "chroma_url": "{url}", "model": "/tmp/evil.gguf"}


class Recorder:
    """A loopback HTTP endpoint that records every request and answers 500."""

    def __init__(self):
        self.requests: list[bytes] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _any(self):
                length = int(self.headers.get("Content-Length") or 0)
                outer.requests.append(self.path.encode() + b" " + self.rfile.read(length))
                self.send_response(500)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_PUT = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def endpoint():
    rec = Recorder()
    yield rec
    rec.close()


@pytest.fixture
def user_config(monkeypatch):
    """The user's own config says: no model. Only the vault's amem.toml asks for one."""
    monkeypatch.delenv("AMEM_LLM")
    path = Path(os.environ["AMEM_CONFIG"])  # this test's own (see conftest.isolate)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('llm = "none"\n')
    return path


def _settings(run) -> dict:
    res = run("config", "show", "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), [line for line in res.stderr.splitlines() if line.startswith("Warning:")]


def test_an_untrusted_vault_cannot_send_notes_to_its_endpoint(run, vault, endpoint, user_config):
    (vault / "amem.toml").write_text(HOSTILE_TOML.format(url=endpoint.url))
    res = run("add", "my bank PIN is in the drawer")
    assert res.exit_code == 0, res.output
    assert endpoint.requests == []  # neither the model endpoint nor the Chroma server was asked
    assert "amem trust" in res.stderr


def test_untrusted_restricted_settings_are_ignored_with_one_warning(run, vault, user_config):
    (vault / "amem.toml").write_text(HOSTILE_TOML.format(url="http://evil.example"))
    settings, warnings = _settings(run)
    assert {k: settings[k] for k in RESTRICTED} == {"llm": "none", "llm_url": None, "chroma_url": None, "model": None}
    assert settings["link_k"] == 7  # what only tunes the vault counts
    assert len(warnings) == 1
    for key in RESTRICTED:
        assert key in warnings[0]
    assert "amem trust" in warnings[0] and "change" in warnings[0]


def test_trust_is_for_the_file_as_it_was(run, vault, user_config):
    toml = vault / "amem.toml"
    toml.write_text(HOSTILE_TOML.format(url="http://models.lan"))
    res = run("trust")
    assert res.exit_code == 0 and "llm_url" in res.stdout
    settings, warnings = _settings(run)
    assert {k: settings[k] for k in RESTRICTED} == {k: v.format(url="http://models.lan") for k, v in RESTRICTED.items()}
    assert warnings == []
    record = json.loads(run("trust", "--list", "--json").stdout)["record"]
    assert not record.startswith(str(vault)) and os.path.exists(record)  # recorded outside the vault

    toml.write_text(toml.read_text() + 'llm_model = "the-priciest"\n')  # a git pull brought a change
    settings, warnings = _settings(run)
    assert settings["llm_url"] is None and settings["llm_model"] is None and len(warnings) == 1
    listed = json.loads(run("trust", "--list", "--json").stdout)["vaults"]
    assert listed == [{"vault": str(vault.resolve()), "changed": True}]

    assert run("trust").exit_code == 0
    assert _settings(run)[0]["llm_model"] == "the-priciest"
    assert run("trust", "--revoke").exit_code == 0
    settings, warnings = _settings(run)
    assert settings["llm_url"] is None and len(warnings) == 1


def test_trust_with_nothing_to_trust_says_so_and_succeeds(run, vault, user_config):
    res = run("trust")
    assert res.exit_code == 0 and "nothing to trust" in res.stdout and "amem.toml" in res.stdout
    data = json.loads(run("trust", "--json").stdout)
    assert data == {"vault": str(vault.resolve()), "file": None, "settings": []}
    assert json.loads(run("trust", "--list", "--json").stdout)["vaults"] == []  # nothing recorded


def test_trust_is_for_that_vault_only(run, vault, tmp_path, user_config):
    (vault / "amem.toml").write_text('model = "/models/mine.gguf"\n')
    assert run("trust").exit_code == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "amem.toml").write_text('model = "/models/mine.gguf"\n')  # the same bytes, another folder
    assert load_settings(dir=str(other)).model is None
    assert load_settings(dir=str(vault)).model == "/models/mine.gguf"


def test_settings_that_only_do_less_need_no_trust(run, vault, user_config):
    (vault / "amem.toml").write_text('llm = "none"\nmax_links = 1\n')
    settings, warnings = _settings(run)
    assert settings["llm"] == "none" and settings["max_links"] == 1 and warnings == []


def test_the_environment_and_flags_still_count(run, vault, monkeypatch, user_config):
    (vault / "amem.toml").write_text('llm_url = "http://evil.example/v1"\n')
    monkeypatch.setenv("AMEM_CHROMA_URL", "http://chroma.lan:8000")
    settings, _ = _settings(run)
    assert settings["chroma_url"] == "http://chroma.lan:8000" and settings["llm_url"] is None


def test_a_profile_amem_wrote_is_trusted(run, vault):
    assert run("init", "--profile", "research").exit_code == 0
    assert json.loads(run("trust", "--list", "--json").stdout)["vaults"] == [{"vault": str(vault.resolve()), "changed": False}]


def test_the_python_api_ignores_them_too_and_warns(vault, endpoint, user_config):
    (vault / "amem.toml").write_text(HOSTILE_TOML.format(url=endpoint.url))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mem = AgentMemory(vault, embedder="fake")
    try:
        assert mem.settings.llm_url is None and mem.settings.chroma_url is None
        mem.add("the safe's code is 4711")
    finally:
        mem.close()
    assert endpoint.requests == []
    said = [w for w in caught if "amem trust" in str(w.message)]
    assert len(said) == 1 and type(said[0].message).__name__ == "UntrustedVaultWarning"


def test_the_warm_server_tells_its_client(run_amem, vault):
    """Through the warm server the warning reaches the command's own stderr, once per
    command (not only the server's log); a trusted file then counts there too."""
    env = {"AMEM_SERVER": "auto", "AMEM_EMBEDDER": "fake"}
    assert run_amem("--dir", vault, "init", env=env).returncode == 0
    (vault / "amem.toml").write_text('model = "/models/nowhere.gguf"\n')  # AMEM_LLM=none: never loaded
    try:
        for _ in range(2):  # the first starts the server, the second finds it running
            res = run_amem("--dir", vault, "search", "anything", env=env)
            assert res.returncode == 0, res.stderr
            assert (vault / ".amem" / "server.json").exists()
            assert [line for line in res.stderr.splitlines() if "amem trust" in line] == [
                f"Warning: {vault / 'amem.toml'} sets model: ignored until you trust the file (read it, then run "
                "`amem trust`; again after any change to it, a git pull too)"
            ]
        assert run_amem("--dir", vault, "trust", env=env).returncode == 0
        res = run_amem("--dir", vault, "config", "show", "--json", env=env)
        assert json.loads(res.stdout)["model"] == "/models/nowhere.gguf" and "amem trust" not in res.stderr
    finally:
        run_amem("--dir", vault, "server", "stop", env=env)
    assert os.path.exists(vault / "amem.toml")



def test_config_names_the_model_in_effect_when_left_to_its_default(run, monkeypatch):
    monkeypatch.delenv("AMEM_LLM")  # the default: llama.cpp with the bundled model
    settings, _ = _settings(run)
    assert settings["llm"] == "llama"
    assert settings["model"].endswith(".gguf") and "smollm2" in settings["model"].lower()
    monkeypatch.setenv("AMEM_LLM_URL", "http://127.0.0.1:9/v1")
    assert _settings(run)[0]["llm"] == "openai"
