"""Parsing and normalising the timestamps notes carry.

Every date Python can hold can be stored and sorted: a date is kept as written (with its
offset), and where it must become UTC (the index's sort key, a new note's id) an instant
past the ends of Python's calendar, such as `9999-12-31T23:30:00-05:00` (in UTC the
year 10000), becomes the end it passed.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

from .errors import UsageError

# Formats with month names accepted besides ISO 8601; LoCoMo writes "1:56 pm on 8 May, 2023".
_FORMATS = (
    "%I:%M %p on %d %B, %Y",
    "%I:%M %p on %d %b, %Y",
    "%d %B %Y",
    "%d %B, %Y",
    "%B %d, %Y",
)


# How a slashed or dashed date whose first two numbers could each be the day
# (`05/08/2024`) is read: "day-first", "month-first", or "auto" (such a date is refused
# with a hint, rather than read as the wrong day). The `date_order` setting, handed to
# whatever reads dates a person wrote (`to_datetime`'s `order`). A dotted date
# (`29.12.2023`) is day-first everywhere.
DATE_ORDERS = ("auto", "day-first", "month-first")

# 29.12.2023, 00:51:12 · 12/29/23, 12:51 AM · 2024/05/08 13:56 · [29.12.23, 00:51:12]
_NUMERIC = re.compile(
    r"\[?(?P<a>\d{1,4})(?P<sep>[./-])(?P<b>\d{1,2})(?P=sep)(?P<c>\d{2}|\d{4})\.?"
    r"(?:(?:,\s*|\s+|T)(?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:[.,](?P<f>\d{1,6}))?)?"
    r"\s*(?P<ampm>[AaPp]\.?\s?[Mm]\.?)?)?"
    r"\s*(?P<tz>Z|UTC|GMT|[+-]\d{2}:?\d{2})?\]?")
# Unix time, in seconds (9-10 digits: 1973-2286) or milliseconds (12-13 digits).
_EPOCH = re.compile(r"-?(\d{9,10}|\d{12,13})(\.\d+)?")
# More than the microseconds Python keeps (`...:00.123456789Z`, as Go and JavaScript write).
_LONG_FRACTION = re.compile(r"(\.\d{6})\d+")


def now() -> datetime:
    return datetime.now(timezone.utc).astimezone().replace(microsecond=0)


def to_datetime(value: object, order: str = "auto") -> datetime:
    """A datetime, date or date-time string as an aware datetime (naive means local time).
    `order`: how a slashed date that reads both ways is read (`DATE_ORDERS`)."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        dt = _parse_string(value.strip(), order)
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and _EPOCH.fullmatch(f"{abs(value):.0f}"):
        dt = _from_epoch(float(value))
    else:
        raise UsageError(f"not a date or time: {value!r}", hint="use ISO 8601, e.g. 2024-05-08T13:56")
    if dt.tzinfo is None:
        dt = _local(dt)
    return dt


def _local(naive: datetime) -> datetime:
    """A naive date-time as local time. Python cannot look up the local offset of the
    first or last day of its calendar: those take the offset of the nearest day it can."""
    try:
        return naive.astimezone()
    except (OverflowError, ValueError, OSError):
        nearest = min(max(naive, datetime(1, 1, 2)), datetime(9999, 12, 30))
        return naive.replace(tzinfo=nearest.astimezone().tzinfo)


def _parse_string(text: str, order: str) -> datetime:
    iso = _LONG_FRACTION.sub(r"\1", text)
    try:
        return datetime.fromisoformat(iso[:-1] + "+00:00" if iso.endswith("Z") else iso)
    except ValueError:
        pass
    if _EPOCH.fullmatch(text):
        return _from_epoch(float(text))
    numeric = _NUMERIC.fullmatch(text)
    if numeric:
        return _numeric(numeric, text, order)
    for fmt in _FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    try:
        from email.utils import parsedate_to_datetime  # RFC 2822: Wed, 08 May 2024 13:56:00 +0200

        return parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        pass
    raise _unreadable(text)


def _unreadable(text: str) -> UsageError:
    return UsageError(
        f"cannot read the date {text!r}",
        hint="use ISO 8601 (2024-05-08 or 2024-05-08T13:56:00) or '1:56 pm on 8 May, 2023'",
    )


def _from_epoch(seconds: float) -> datetime:
    if abs(seconds) >= 1e11:
        seconds /= 1000  # milliseconds
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=seconds)


def _numeric(m: re.Match, text: str, order: str) -> datetime:
    a, b, c = int(m["a"]), int(m["b"]), int(m["c"])
    if len(m["a"]) >= 3:
        year, month, day_ = a, b, c
    else:
        year = c if len(m["c"]) == 4 else c + (2000 if c < 69 else 1900)  # (strptime's %y)
        if m["sep"] == "." or a > 12:
            day_, month = a, b
        elif b > 12 or a == b:
            month, day_ = a, b
        elif order == "day-first":
            day_, month = a, b
        elif order == "month-first":
            month, day_ = a, b
        else:
            raise UsageError(f"the date {text!r} could be day {a} of month {b} or day {b} of month {a}",
                             hint="write it as ISO 8601 (2024-05-08), or set date_order to 'day-first' or 'month-first'")
    hour, minute, second = int(m["H"] or 0), int(m["M"] or 0), int(m["S"] or 0)
    if m["ampm"]:
        if not 1 <= hour <= 12:
            raise _unreadable(text)
        hour = hour % 12 + (12 if m["ampm"][0] in "Pp" else 0)
    zone = None
    if m["tz"]:
        offset = m["tz"].replace(":", "")
        zone = timezone.utc if offset in ("Z", "UTC", "GMT") else timezone(
            (1 if offset[0] == "+" else -1) * timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])))
    try:
        return datetime(year, month, day_, hour, minute, second, int((m["f"] or "0").ljust(6, "0")), tzinfo=zone)
    except ValueError:
        raise _unreadable(text) from None


UTC_MIN = datetime.min.replace(tzinfo=timezone.utc)
UTC_MAX = datetime.max.replace(tzinfo=timezone.utc)


def to_utc(dt: datetime) -> datetime:
    """An aware date-time in UTC; an instant before or after what Python can hold in UTC
    (a few hours either side of its calendar) is the first or last it can."""
    try:
        return dt.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        return UTC_MAX if dt.year > 1 else UTC_MIN


def utc_key(dt: datetime | None) -> str | None:
    """A sortable UTC string for the index (`0001-01-01T00:00:00`: the year has its four
    digits, which strftime drops before the year 1000)."""
    if dt is None:
        return None
    return to_utc(dt).replace(tzinfo=None).isoformat(timespec="seconds")


def day(dt: datetime) -> str:
    """`2024-05-08`, with the year's four digits whatever the year."""
    return dt.date().isoformat()


def date_words(d: date) -> str:
    """A date as the words a query may use for it: `2023-05-08 8 May 2023 Monday`."""
    return f"{d.isoformat()} {d.day} {d:%B} {d.year} {d:%A}"


_DURATION = re.compile(r"(\d+)\s*(s|m|min|h|d|w)", re.IGNORECASE)
_DURATION_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


def duration(text: str) -> timedelta:
    """A while as written on the command line: 90s, 20m, 12h, 30d, 2w."""
    m = _DURATION.fullmatch(str(text).strip())
    if not m or int(m[1]) == 0:
        raise UsageError(f"not a while: {text!r}", hint="for example 30d, 12h, 2w (s, m, h, d, w)")
    return timedelta(seconds=int(m[1]) * _DURATION_UNITS[m[2].lower()])


# -- the bounds a person types (`--since`, `--until`) ---------------------------------

# `7d`, `2w`, `12h`, `3 days ago`: that long before now.
_AGO = re.compile(r"(\d+)\s*(h|d|w|hours?|days?|weeks?)(?:\s+ago)?")
_MONTH = re.compile(r"(\d{4})-(\d{1,2})")
_YEAR = re.compile(r"\d{4}")


def _month_after(d: date) -> date:
    return date(d.year + d.month // 12, d.month % 12 + 1, 1)


def span(text: str, now: datetime | None = None) -> tuple[datetime, datetime] | None:
    """The first and last instants a relative or partial date names, in the local
    timezone (`now`: when it is said): `7d`, `2w`, `12h` (an instant that long ago),
    `today`, `yesterday`, `this week`, `last week` (weeks start on Monday), `this month`,
    `last month`, `2025-03`, `2025`. None for anything else (a date `to_datetime` reads)."""
    try:
        return _span(text, now)
    except (ValueError, OverflowError):  # past the ends of the calendar: not a date amem reads
        return None


def _span(text: str, now: datetime | None) -> tuple[datetime, datetime] | None:
    now = (now or datetime.now(timezone.utc)).astimezone()
    words = " ".join(text.lower().split())
    if m := _AGO.fullmatch(words):
        instant = now - timedelta(seconds=int(m.group(1)) * _DURATION_UNITS[m.group(2)[0]])
        return instant, instant
    today = now.date()
    week = today - timedelta(days=today.weekday())
    month = today.replace(day=1)
    days = {
        "today": (today, today + timedelta(days=1)),
        "yesterday": (today - timedelta(days=1), today),
        "this week": (week, week + timedelta(weeks=1)),
        "last week": (week - timedelta(weeks=1), week),
        "this month": (month, _month_after(month)),
        "last month": ((month - timedelta(days=1)).replace(day=1), month),
    }.get(words)
    if days is None and (m := _MONTH.fullmatch(words)) and 1 <= int(m.group(2)) <= 12:
        first = date(int(m.group(1)), int(m.group(2)), 1)
        days = first, _month_after(first)
    if days is None and _YEAR.fullmatch(words):
        days = date(int(words), 1, 1), date(int(words) + 1, 1, 1)
    if days is None:
        return None
    start, after = (_local(datetime(d.year, d.month, d.day)) for d in days)
    return start, after - timedelta(seconds=1)  # the index keeps whole seconds
