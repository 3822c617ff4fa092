from __future__ import annotations

import os
from pathlib import Path

import pytest

# No test may reach a hub or phone home.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["ANONYMIZED_TELEMETRY"] = "False"


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory, monkeypatch):
    """Tests never read the developer's own config or vault."""
    cfg = tmp_path_factory.mktemp("config") / "config.toml"
    monkeypatch.setenv("AMEM_CONFIG", str(cfg))
    for key in list(os.environ):
        if key.startswith("AMEM_") and key != "AMEM_CONFIG":
            monkeypatch.delenv(key)


@pytest.fixture
def vault(tmp_path) -> Path:
    path = tmp_path / "vault"
    path.mkdir()
    return path


@pytest.fixture
def memory(vault):
    """An AgentMemory on a temp vault with the fake embedder (real SQLite, real local Chroma)."""
    from amem_cli import AgentMemory

    mem = AgentMemory(vault, embedder="fake")
    yield mem
    mem.close()
