"""`amem config`: the settings in effect, each with where its value came from (default,
user config, vault, environment, flag), as text and as JSON."""

from __future__ import annotations

import json
import os

from typer.testing import CliRunner

from amem_cli.cli.app import app


def test_config_names_where_each_setting_came_from(tmp_path):
    user = tmp_path / "user.toml"
    user.write_text("link_k = 7\nmax_links = 9\n")
    vault = tmp_path / "vault"
    vault.mkdir()
    # max_links: the vault's over the user's; link_threshold: the environment's over the
    # vault's; model: not counted from an untrusted vault (the default stays).
    (vault / "amem.toml").write_text('max_links = 4\nlink_threshold = 0.4\nmodel = "/tmp/evil.gguf"\n')
    env = {**os.environ, "AMEM_CONFIG": str(user), "AMEM_LINK_THRESHOLD": "0.3", "AMEM_LLM": "none"}
    runner = CliRunner()
    res = runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "config", "--json"], env=env)
    assert res.exit_code == 0, res.output
    shown = json.loads(res.stdout)
    sources = shown["sources"]
    expected = {
        "link_k": (7, "user config", str(user)),
        "max_links": (4, "vault", str(vault / "amem.toml")),
        "link_threshold": (0.3, "environment", "AMEM_LINK_THRESHOLD"),
        "llm": ("none", "environment", "AMEM_LLM"),
        "embedder": ("fake", "flag", "--embedder"),
        "dir": (str(vault), "flag", "--dir"),
        "pagerank_iterations": (20, "default", None),
        "model": (None, "default", None),
        "embedding_model": ("all-MiniLM-L6-v2", "default", None),
    }
    for key, (value, source, where) in expected.items():
        assert (shown[key], sources[key]["source"], sources[key]["where"]) == (value, source, where), key

    res = runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "config"], env=env)
    assert res.exit_code == 0, res.output
    lines = {line.split()[0]: line for line in res.stdout.splitlines() if line.strip()}
    assert lines["link_threshold"].split() == ["link_threshold", "0.3", "environment", "(AMEM_LINK_THRESHOLD)"]
    assert lines["max_links"].split()[1:3] == ["4", "vault"] and lines["pagerank_iterations"].split()[1:] == ["20", "default"]
    assert lines["embedder"].split()[1:] == ["fake", "flag", "(--embedder)"]
