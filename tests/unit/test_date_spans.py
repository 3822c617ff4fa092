"""Dates a person types for `--since` and `--until`: relative (`7d`, `yesterday`, `last
week`) and partial (`2025-03`), read in the local timezone, said back on stderr, and the
same through both command-line readers (the quick one and Typer)."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from amem_cli.timeutil import span

NOW = datetime(2025, 3, 12, 15, 30, tzinfo=timezone.utc)  # a Wednesday


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def at(*args) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


@pytest.mark.parametrize("text, first, last", [
    ("7d", at(2025, 3, 5, 15, 30), at(2025, 3, 5, 15, 30)),
    ("2w", at(2025, 2, 26, 15, 30), at(2025, 2, 26, 15, 30)),
    ("12h", at(2025, 3, 12, 3, 30), at(2025, 3, 12, 3, 30)),
    ("3 days ago", at(2025, 3, 9, 15, 30), at(2025, 3, 9, 15, 30)),
    ("today", at(2025, 3, 12), at(2025, 3, 12, 23, 59, 59)),
    ("Yesterday", at(2025, 3, 11), at(2025, 3, 11, 23, 59, 59)),
    ("last week", at(2025, 3, 3), at(2025, 3, 9, 23, 59, 59)),  # Monday to Sunday
    ("this week", at(2025, 3, 10), at(2025, 3, 16, 23, 59, 59)),
    ("last  month", at(2025, 2, 1), at(2025, 2, 28, 23, 59, 59)),
    ("2025-03", at(2025, 3, 1), at(2025, 3, 31, 23, 59, 59)),
    ("2024-12", at(2024, 12, 1), at(2024, 12, 31, 23, 59, 59)),
    ("2025", at(2025, 1, 1), at(2025, 12, 31, 23, 59, 59)),
])
def test_each_form_names_its_span(utc, text, first, last):
    assert span(text, NOW) == (first, last)


@pytest.mark.parametrize("text", ["2025-03-12", "2025-13", "9999", "0000", "99999999999d", "soon", "1703811072"])
def test_what_is_no_span_is_left_to_the_date_reader(utc, text):
    assert span(text, NOW) is None


def test_spans_are_read_in_the_local_timezone(monkeypatch):
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        first, last = span("yesterday", at(2025, 3, 12, 3))  # still 11 March in New York (23:00)
        assert first == at(2025, 3, 10, 4) and first.utcoffset() == timedelta(hours=-4)  # its midnight, EDT
        assert last == at(2025, 3, 11, 3, 59, 59)
    finally:
        monkeypatch.undo()
        time.tzset()


def _created(run, text: str, when: datetime) -> str:
    res = run("add", text, "--created", when.isoformat())
    assert res.exit_code == 0, res.output
    return res.stdout.strip()


def test_list_reads_relative_dates_and_says_what_they_meant(run, run_amem, vault):
    now = datetime.now(timezone.utc).replace(microsecond=0)
    old = _created(run, "a month old", now - timedelta(days=30))
    recent = _created(run, "two days old", now - timedelta(days=2))

    res = run("list", "--since", "7d", "--json")  # through Typer
    assert res.exit_code == 0, res.output
    assert [n["id"] for n in __import__("json").loads(res.stdout)] == [recent]
    assert "--since 7d means " in res.stderr

    quick = run_amem("--dir", vault, "--embedder", "fake", "list", "--until", "2w")  # the quick reader
    assert quick.returncode == 0, quick.stderr
    assert old in quick.stdout and recent not in quick.stdout
    assert "--until 2w means " in quick.stderr
