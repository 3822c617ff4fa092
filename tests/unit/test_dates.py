"""Dates in the forms real exports write (issue 22: a day-first chat export could not be
imported at all). Each case is a form some tool writes, with the instant it means."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from amem_cli.errors import UsageError
from amem_cli.timeutil import to_datetime

UTC = timezone.utc


def local(*args) -> datetime:
    return datetime(*args).astimezone()


@pytest.mark.parametrize("text, meant", [
    ("2023-12-29T00:51:12", local(2023, 12, 29, 0, 51, 12)),  # Telegram's JSON export
    ("2023-12-29T00:51:12.123000+00:00", datetime(2023, 12, 29, 0, 51, 12, 123000, UTC)),  # Discord
    ("2023-12-29T00:51:12.123456789Z", datetime(2023, 12, 29, 0, 51, 12, 123456, UTC)),  # Go, nanoseconds
    ("2023-12-29 00:51:12+01:00", datetime(2023, 12, 28, 23, 51, 12, tzinfo=UTC)),
    ("Fri, 29 Dec 2023 00:51:12 +0100", datetime(2023, 12, 28, 23, 51, 12, tzinfo=UTC)),  # e-mail (RFC 2822)
    ("29 Dec 2023 00:51:12 GMT", datetime(2023, 12, 29, 0, 51, 12, tzinfo=UTC)),
    ("1703811072", datetime(2023, 12, 29, 0, 51, 12, tzinfo=UTC)),  # Unix seconds (Telegram's date_unixtime)
    ("1703811072.000200", datetime(2023, 12, 29, 0, 51, 12, 200, UTC)),  # Slack's ts
    ("1703811072123", datetime(2023, 12, 29, 0, 51, 12, 123000, UTC)),  # JavaScript's Date.now()
    ("29.12.2023, 00:51:12", local(2023, 12, 29, 0, 51, 12)),  # WhatsApp, German Android
    ("[29.12.23, 00:51:12]", local(2023, 12, 29, 0, 51, 12)),  # WhatsApp, German iPhone
    ("01.02.2024 09:05", local(2024, 2, 1, 9, 5)),  # dotted: day first, even where either could be
    ("12/29/23, 12:51 AM", local(2023, 12, 29, 0, 51)),  # WhatsApp, US
    ("12/29/23, 12:51 PM", local(2023, 12, 29, 12, 51)),
    ("29/12/2023, 00:51", local(2023, 12, 29, 0, 51)),  # WhatsApp, UK
    ("2023/12/29 00:51", local(2023, 12, 29, 0, 51)),
    ("07/07/2023", local(2023, 7, 7)),  # both the same: no doubt
    ("1:56 pm on 8 May, 2023", local(2023, 5, 8, 13, 56)),  # LoCoMo
])
def test_the_forms_exports_write(text, meant):
    assert to_datetime(text) == meant


@pytest.mark.parametrize("number, meant", [
    (1703811072, datetime(2023, 12, 29, 0, 51, 12, tzinfo=UTC)),
    (1703811072123, datetime(2023, 12, 29, 0, 51, 12, 123000, UTC)),
    (1703811072.5, datetime(2023, 12, 29, 0, 51, 12, 500000, UTC)),
])
def test_numbers_are_unix_time(number, meant):
    assert to_datetime(number) == meant


@pytest.mark.parametrize("value", ["2024", 2024, True, "yesterday", "31.02.2024", "12/29/23, 13:51 PM", "29.12.2023 25:00",
                                   "1/2/3"])
def test_what_is_not_a_date_is_refused(value):
    with pytest.raises(UsageError):
        to_datetime(value)


def test_a_slashed_date_that_reads_both_ways_is_refused_until_the_order_is_set():
    with pytest.raises(UsageError) as refused:
        to_datetime("05/08/2024")
    assert "date_order" in refused.value.hint
    assert to_datetime("05/08/2024", "day-first").date() == datetime(2024, 8, 5).date()
    assert to_datetime("12/29/23", "day-first").date() == datetime(2023, 12, 29).date()  # no doubt: the order is not asked
    assert to_datetime("05/08/2024", "month-first").date() == datetime(2024, 5, 8).date()
    assert to_datetime("05.08.2024", "month-first").date() == datetime(2024, 8, 5).date()  # dotted: day first whatever the order


def test_each_vault_reads_dates_in_its_own_order(tmp_path):
    """Two vaults open in one process, each with its own `date_order`: each reads a new
    note's date, and a date a person wrote into a note file, its own way."""
    from amem_cli import AgentMemory

    (tmp_path / "us").mkdir()
    (tmp_path / "uk").mkdir()
    us = AgentMemory(tmp_path / "us", embedder="fake", llm="none", date_order="month-first")
    uk = AgentMemory(tmp_path / "uk", embedder="fake", llm="none", date_order="day-first")
    try:
        for mem, day in ((us, datetime(2024, 5, 8).date()), (uk, datetime(2024, 8, 5).date())):
            assert mem.add("Dentist at nine", created_at="05/08/2024 09:00").created_at.date() == day
            (mem.path / "by-hand.md").write_text("---\ncreated: 05/08/2024\n---\nWritten by hand.\n", encoding="utf-8")
            mem.sync()
            assert mem.get("by-hand").created_at.date() == day
    finally:
        us.close()
        uk.close()
    with pytest.raises(UsageError, match="date_order"):
        AgentMemory(tmp_path / "us", embedder="fake", llm="none", date_order="sideways")


def test_offsets_are_kept_as_written():
    assert to_datetime("29/12/2023 00:51 +01:00").utcoffset() == timedelta(hours=1)
