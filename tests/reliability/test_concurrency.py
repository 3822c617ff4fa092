"""8 `amem add` processes at once on one vault, a search process running meanwhile: with
the warm server at full size (8 x 50), and without it (each add a cold process) in a
smaller size that CI can afford; `benchmarks/concurrency.py` runs both at 8 x 50."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))

from concurrency import stress  # noqa: E402


@pytest.mark.parametrize("server, each", [("auto", 50), ("off", 5)], ids=["server", "no-server"])
def test_writers_at_once_lose_nothing_and_leave_the_vault_consistent(vault, server, each):
    o = stress(vault, writers=8, each=each, server=server)
    assert o.failures == [] and o.search_failures == []
    assert len(o.acknowledged) == len(set(o.acknowledged)) == 8 * each
    assert o.missing_files == []
    assert sorted(p.stem for p in vault.glob("*.md")) == sorted(o.acknowledged)
    assert o.doctor["ok"], o.doctor
    assert o.doctor["notes"] == 8 * each
    assert o.not_found == []
    assert o.searches > 0
