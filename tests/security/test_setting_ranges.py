"""Every numeric setting has a range, checked wherever it is read (round 3). On bae2764 a
vault's own amem.toml, which needs no trust for search settings, could set
`pagerank_iterations = 2000000000` and every search in it hung; any number was taken.
A value outside its range is refused in one line that names where it came from."""

from __future__ import annotations

import dataclasses
import math

import pytest

from amem_cli.config import RANGES, Settings, load_settings
from amem_cli.errors import UsageError

NUMERIC = [f.name for f in dataclasses.fields(Settings) if f.type in ("int", "float", int, float)]


def test_every_numeric_setting_has_a_range():
    assert sorted(RANGES) == sorted(NUMERIC)
    for name, (low, high) in RANGES.items():
        assert low <= getattr(Settings(dir="."), name) <= high, name  # the default lies within


def _outside(name: str) -> list:
    low, high = RANGES[name]
    return [low - 1, high * 10 + 1, "nan", "inf"]


@pytest.mark.parametrize("name", NUMERIC)
def test_out_of_range_in_a_vault_config_is_refused_naming_the_file(tmp_path, name):
    for value in _outside(name):
        (tmp_path / "amem.toml").write_text(f"{name} = {value if not isinstance(value, str) else repr(value)}\n")
        with pytest.raises(UsageError) as info:
            load_settings(environ={}, dir=str(tmp_path))
        assert str(tmp_path / "amem.toml") in info.value.message and name in info.value.message, info.value.message
        assert "between" in info.value.message or "whole number" in info.value.message  # (NaN for a count)


@pytest.mark.parametrize("name", NUMERIC)
def test_out_of_range_in_the_user_config_the_environment_and_arguments_is_refused(tmp_path, name):
    value = _outside(name)[1]
    config = tmp_path / "config.toml"
    config.write_text(f"{name} = {value}\n")
    with pytest.raises(UsageError, match=str(config).replace(".", r"\.")):
        load_settings(environ={"AMEM_CONFIG": str(config)}, dir=str(tmp_path))
    with pytest.raises(UsageError, match=f"AMEM_{name.upper()}"):
        load_settings(environ={f"AMEM_{name.upper()}": str(value)}, dir=str(tmp_path))
    with pytest.raises(UsageError, match=name):
        load_settings(environ={}, dir=str(tmp_path), **{name: value})
    with pytest.raises(UsageError, match=name):
        Settings(dir=tmp_path, **{name: value})


@pytest.mark.parametrize("name", NUMERIC)
def test_the_ends_of_a_range_are_taken(tmp_path, name):
    for end in RANGES[name]:
        assert getattr(load_settings(environ={f"AMEM_{name.upper()}": str(end)}, dir=str(tmp_path)), name) == end


def test_a_whole_number_setting_refuses_a_fraction_and_a_boolean(tmp_path):
    for value in ("2.5", "true"):
        (tmp_path / "amem.toml").write_text(f"link_k = {value}\n")
        with pytest.raises(UsageError, match="whole number"):
            load_settings(environ={}, dir=str(tmp_path))


def test_the_python_api_refuses_too(tmp_path):
    from amem_cli import AgentMemory

    with pytest.raises(UsageError, match="pagerank_iterations"):
        AgentMemory(tmp_path, embedder="fake", llm="none", pagerank_iterations=2_000_000_000)
    with pytest.raises(UsageError, match="min_similarity"):
        AgentMemory(tmp_path, embedder="fake", llm="none", min_similarity=math.nan)


def test_an_untrusted_vault_cannot_hang_a_search(run_amem, vault):
    """The attack of the issue, end to end: refused at once, in one line naming the file."""
    for i in range(3):
        run_amem("--dir", vault, "--embedder", "fake", "add", f"note {i} about the tides", check=True)
    (vault / "amem.toml").write_text("pagerank_iterations = 2000000000\n")
    res = run_amem("--dir", vault, "--embedder", "fake", "search", "tides", timeout=60)
    assert res.returncode == 2
    lines = res.stderr.splitlines()
    assert len(lines) == 2 and str(vault / "amem.toml") in lines[0] and "pagerank_iterations" in lines[0], res.stderr
