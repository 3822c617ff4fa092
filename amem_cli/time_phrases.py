"""The times a note's text states: "yesterday", "last Tuesday", "two days ago", "next
month", "8 May 2023". A relative one is resolved against the note's own date, so a note
written on 8 May 2023 saying "yesterday" states 7 May 2023. What is found is derived text
for the index only (`notes.stated`: a question about time favours the notes that state
one); the note itself is never changed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from .timeutil import date_words

_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3}
_DAYS_OFF = {"yesterday": -1, "last night": -1, "today": 0, "tonight": 0, "this morning": 0,
             "this afternoon": 0, "this evening": 0, "tomorrow": 1}
_STEP = {"last": -1, "past": -1, "this": 0, "next": 1, "coming": 1}

# Whole names and the usual short forms ("Tues", "Sept"): "marketing" is no month.
_WEEKDAY = r"(?P<weekday>(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?)"
_MONTH = (r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_PHRASES = re.compile(
    r"\b(?:"
    rf"(?P<days_off>{'|'.join(_DAYS_OFF)})"
    rf"|(?P<count>\d{{1,2}}|{'|'.join(sorted(_COUNTS, key=len, reverse=True))})\s+(?P<ago_unit>day|week|weekend|month|year)s?\s+ago"
    rf"|(?P<step>{'|'.join(_STEP)})\s+(?:{_WEEKDAY}|(?P<unit>week|weekend|month|year))"
    rf"|(?P<dm_day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(?P<dm_year>\d{{4}})"
    rf"|{_MONTH.replace('month>', 'md_month>')}\s+(?P<md_day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<md_year>\d{{4}})"
    rf"|{_MONTH.replace('month>', 'my_month>')}\s+(?P<my_year>\d{{4}})"
    r"|(?P<iso>\d{4}-\d{2}-\d{2})"
    r"|(?:in|since)\s+(?P<year>(?:19|20)\d{2})"
    r")\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class StatedTime:
    """A time a text states: a day, and how precise it is ("day", "weekend" (its Saturday),
    "week", "month", "year")."""

    day: date
    unit: str

    def words(self) -> str:
        """The time as the words a query may use for it: `2023-05-07 7 May 2023 Sunday`
        for a day, `May 2023` for a week or a month, `2023` for a year."""
        d = self.day
        if self.unit in ("day", "weekend"):
            return date_words(d)
        if self.unit in ("week", "month"):
            return f"{d:%B} {d.year}"
        return str(d.year)

    def span(self) -> tuple[date, date]:
        """The first and last day the time covers: a week is the seven days around its
        day ("four weeks ago" is no calendar week), a month or a year the calendar's."""
        d = self.day
        if self.unit == "weekend":
            return d, d + timedelta(days=1)
        if self.unit == "week":
            return d - timedelta(days=3), d + timedelta(days=3)
        if self.unit == "month":
            following = date(d.year + d.month // 12, d.month % 12 + 1, 1)
            return d.replace(day=1), following - timedelta(days=1)
        if self.unit == "year":
            return date(d.year, 1, 1), date(d.year, 12, 31)
        return d, d


def stated_times(text: str, written: datetime | None) -> list[StatedTime]:
    """The times `text` states, each once, in order; relative ones ("last week") only when
    the text's own date (`written`) is known."""
    anchor = written.date() if written else None
    found = (_resolve(m, anchor) for m in _PHRASES.finditer(text))
    return list(dict.fromkeys(t for t in found if t is not None))


def stated_words(text: str, written: datetime | None) -> str:
    """The times `text` states, in words (see `StatedTime.words`); '' when none."""
    return " ".join(t.words() for t in stated_times(text, written))


def named_times(text: str, now: datetime) -> tuple[list[StatedTime], str]:
    """The times a question names relative to when it is asked (`now`): "four weeks ago",
    "last Tuesday", "this month"; and the question without the phrases that name them.
    "that postgres thing from last week" names the week before `now` and asks about "that
    postgres thing from". A date written out ("8 May 2023") is not among them: its words
    are the note's date words too, and find it as words."""
    found: list[StatedTime] = []
    rest, end = [], 0
    for m in _PHRASES.finditer(text):
        if _resolve(m, None) is None and (time := _resolve(m, now.date())) is not None:
            found.append(time)
            rest.append(text[end : m.start()])
            end = m.end()
    rest.append(text[end:])
    return list(dict.fromkeys(found)), " ".join("".join(rest).split())


def _resolve(m: re.Match, anchor: date | None) -> StatedTime | None:
    g = {k: v.lower() for k, v in m.groupdict().items() if v}
    try:
        if "dm_day" in g:
            return StatedTime(date(int(g["dm_year"]), _month(g["month"]), int(g["dm_day"])), "day")
        if "md_day" in g:
            return StatedTime(date(int(g["md_year"]), _month(g["md_month"]), int(g["md_day"])), "day")
        if "my_year" in g:
            return StatedTime(date(int(g["my_year"]), _month(g["my_month"]), 1), "month")
        if "iso" in g:
            return StatedTime(date.fromisoformat(g["iso"]), "day")
    except ValueError:  # 31 February
        return None
    if "year" in g:
        return StatedTime(date(int(g["year"]), 1, 1), "year")
    if anchor is None:
        return None
    if "days_off" in g:
        return StatedTime(anchor + timedelta(days=_DAYS_OFF[g["days_off"]]), "day")
    if "ago_unit" in g:
        count = int(g["count"]) if g["count"].isdigit() else _COUNTS[g["count"]]
        return _shifted(anchor, g["ago_unit"], -count)
    if "weekday" in g:
        return StatedTime(_weekday(anchor, _WEEKDAYS.index(g["weekday"][:3]), _STEP[g["step"]]), "day")
    return _shifted(anchor, g["unit"], _STEP[g["step"]])


def _month(name: str) -> int:
    return _MONTHS.index(name[:3]) + 1


def _weekday(anchor: date, weekday: int, step: int) -> date:
    """"last Friday" (step -1): the Friday before; "next Friday" (1): the one after;
    "this Friday" (0): the one in the same week (Monday to Sunday)."""
    if step < 0:
        return anchor - timedelta(days=(anchor.weekday() - weekday - 1) % 7 + 1)
    if step > 0:
        return anchor + timedelta(days=(weekday - anchor.weekday() - 1) % 7 + 1)
    return anchor + timedelta(days=weekday - anchor.weekday())


def _shifted(anchor: date, unit: str, steps: int) -> StatedTime:
    """The day, week, weekend, month or year `steps` of them from the anchor's."""
    if unit == "day":
        return StatedTime(anchor + timedelta(days=steps), "day")
    if unit == "week":
        return StatedTime(anchor + timedelta(weeks=steps), "week")
    if unit == "weekend":  # its Saturday: this week's is five days after its Monday
        return StatedTime(anchor + timedelta(days=5 - anchor.weekday(), weeks=steps), "weekend")
    if unit == "month":
        year, month = divmod(anchor.year * 12 + anchor.month - 1 + steps, 12)
        return StatedTime(date(year, month + 1, 1), "month")
    return StatedTime(date(anchor.year + steps, 1, 1), "year")
