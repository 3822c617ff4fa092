"""Commands whose settings differ from the warm server's: one that asks for no model is
served by the server without one (nothing queued for a model); those it cannot honour
run in the command's own process, and the server serves on; a server whose own settings
changed (a config edit) stops, as before."""

from __future__ import annotations

import json

import pytest
from conftest import index_rows, served, wait_until

# The server's model: the scripted fake (fast); the test process's own AMEM_LLM is "none".
SERVER = {"AMEM_SERVER": "auto", "AMEM_EMBEDDER": "fake", "AMEM_LLM": "fake"}


@pytest.fixture
def amem(run_amem, vault):
    yield from served(run_amem, vault, SERVER)


def _status(amem) -> dict:
    return json.loads(amem("server", "status", "--json", check=True).stdout)


def test_a_command_without_a_model_is_served_by_the_server_and_queues_nothing(amem, vault):
    amem("add", "Otters hold hands while they sleep", check=True)
    before = _status(amem)
    note_id = amem("--llm", "none", "add", "Sea otters keep a favourite stone in a pouch of skin", check=True).stdout.strip()
    after = _status(amem)
    assert after["pid"] == before["pid"] and after["requests"] == before["requests"] + 1  # the server did it
    text = (vault / f"{note_id}.md").read_text(encoding="utf-8")
    assert "keywords:\n- " in text and "amem_queued" not in text  # built on the spot, by the method
    assert "amem_generated" not in text
    assert index_rows(vault, f"SELECT count(*) FROM jobs WHERE note_id = '{note_id}'") == [(0,)]


def test_a_command_without_a_model_starts_the_server_the_next_plain_command_uses(amem, vault):
    amem("--llm", "none", "add", "Walruses use their tusks to haul out onto ice", check=True)
    first = _status(amem)
    assert first["running"]  # with the vault's model, not the command's --llm none
    amem("add", "Walrus calves stay with their mothers for two years", check=True)
    after = _status(amem)
    assert after["pid"] == first["pid"] and after["requests"] == first["requests"] + 1  # it served the plain add


def test_settings_the_server_cannot_honour_run_here_and_the_server_serves_on(amem, vault, tmp_path):
    amem("add", "a note about puffins", check=True)
    before = _status(amem)
    other_model = amem("--llm", "llama", "--model", str(tmp_path / "other.gguf"), "search", "puffins", check=True)
    other_search = amem("search", "puffins", env={"AMEM_FUSION": "rrf"}, check=True)
    assert "puffins" in other_model.stdout and "puffins" in other_search.stdout
    after = _status(amem)
    assert after["running"] and after["pid"] == before["pid"]
    assert after["requests"] == before["requests"]  # both worked in their own process


def test_a_server_whose_config_changed_stops(amem, vault):
    amem("add", "a note about terns", check=True)
    (vault / "amem.toml").write_text('fusion = "rrf"\n', encoding="utf-8")
    assert "terns" in amem("search", "terns", check=True).stdout
    assert wait_until(lambda: not _status(amem)["running"], timeout=10)
