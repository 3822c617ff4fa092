"""The times a note's text states, relative ones resolved against the note's date."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from amem_cli.time_phrases import StatedTime, named_times, stated_times, stated_words

WRITTEN = datetime(2023, 5, 8, 13, 56)  # a Monday


@pytest.mark.parametrize(
    "text, day, unit",
    [
        ("I went to a support group yesterday", date(2023, 5, 7), "day"),
        ("We stayed up late last night", date(2023, 5, 7), "day"),
        ("I'm painting today", date(2023, 5, 8), "day"),
        ("The recital is tomorrow", date(2023, 5, 9), "day"),
        ("I went there two days ago", date(2023, 5, 6), "day"),
        ("a couple of days ago", date(2023, 5, 6), "day"),
        ("I ran a charity race last Saturday", date(2023, 5, 6), "day"),
        ("I joined the group last Tues.", date(2023, 5, 2), "day"),
        ("last Monday", date(2023, 5, 1), "day"),  # said on a Monday: the one before
        ("next Monday", date(2023, 5, 15), "day"),
        ("this Friday", date(2023, 5, 12), "day"),
        ("We went camping last weekend", date(2023, 5, 6), "weekend"),  # its Saturday
        ("this weekend", date(2023, 5, 13), "weekend"),
        ("two weekends ago", date(2023, 4, 29), "weekend"),
        ("my school event last week", date(2023, 5, 1), "week"),
        ("three weeks ago", date(2023, 4, 17), "week"),
        ("We're going camping next month", date(2023, 6, 1), "month"),
        ("3 months ago", date(2023, 2, 1), "month"),
        ("a book I read last year", date(2022, 1, 1), "year"),
        ("a friend made it ten years ago", date(2013, 1, 1), "year"),
        ("on 8 May, 2023", date(2023, 5, 8), "day"),
        ("on the 3rd of July 2022", date(2022, 7, 3), "day"),
        ("on May 9th, 2023", date(2023, 5, 9), "day"),
        ("Sept. 1, 2021", date(2021, 9, 1), "day"),
        ("in June 2023", date(2023, 6, 1), "month"),
        ("2023-01-02", date(2023, 1, 2), "day"),
        ("I moved here in 2019", date(2019, 1, 1), "year"),
    ],
)
def test_each_phrase_resolves_against_the_date_written(text, day, unit):
    assert stated_times(text, WRITTEN) == [StatedTime(day, unit)]


def test_a_month_ago_crosses_the_year():
    assert stated_times("two months ago", datetime(2023, 1, 20)) == [StatedTime(date(2022, 11, 1), "month")]
    assert stated_times("next month", datetime(2023, 12, 20)) == [StatedTime(date(2024, 1, 1), "month")]


@pytest.mark.parametrize("text", ["the marketing 2023 plan", "I sat down", "31 February 2023", "we talked for days",
                                  "last but not least", "at 10 am"])
def test_no_time_where_none_is_stated(text):
    assert stated_times(text, WRITTEN) == []


def test_a_relative_time_needs_the_date_written():
    assert stated_times("yesterday, and on 8 May 2023", None) == [StatedTime(date(2023, 5, 8), "day")]


def test_the_words_a_query_may_use():
    text = "Yesterday, then last week; next month; last year; yesterday again"
    assert stated_words(text, WRITTEN) == "2023-05-07 7 May 2023 Sunday May 2023 June 2023 2022"
    assert stated_words("nothing dated", WRITTEN) == ""


def test_a_question_names_times_relative_to_when_it_is_asked():
    """The relative phrases are read against `now` and taken out of the words searched; a
    date written out stays a date and stays in the words (the note's date words find it)."""
    times, topic = named_times("that postgres thing from last week", WRITTEN)
    assert times == [StatedTime(date(2023, 5, 1), "week")] and topic == "that postgres thing from"
    times, topic = named_times("What did I buy four weeks ago, and yesterday?", datetime(2023, 5, 29, 9))
    assert times == [StatedTime(date(2023, 5, 1), "week"), StatedTime(date(2023, 5, 28), "day")]
    assert topic == "What did I buy , and ?"
    assert named_times("the trip on 8 May 2023", WRITTEN) == ([], "the trip on 8 May 2023")


@pytest.mark.parametrize(
    "time, first, last",
    [
        (StatedTime(date(2023, 5, 7), "day"), date(2023, 5, 7), date(2023, 5, 7)),
        (StatedTime(date(2023, 5, 6), "weekend"), date(2023, 5, 6), date(2023, 5, 7)),
        (StatedTime(date(2023, 5, 1), "week"), date(2023, 4, 28), date(2023, 5, 4)),  # around its day
        (StatedTime(date(2023, 12, 1), "month"), date(2023, 12, 1), date(2023, 12, 31)),
        (StatedTime(date(2024, 2, 1), "month"), date(2024, 2, 1), date(2024, 2, 29)),
        (StatedTime(date(2019, 1, 1), "year"), date(2019, 1, 1), date(2019, 12, 31)),
    ],
)
def test_the_days_a_time_covers(time, first, last):
    assert time.span() == (first, last)
