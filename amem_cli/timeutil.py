"""Parsing and normalising the timestamps notes carry.

Every date Python can hold can be stored and sorted: a date is kept as written (with its
offset), and where it must become UTC (the index's sort key, a new note's id) an instant
past the ends of Python's calendar, such as `9999-12-31T23:30:00-05:00` (in UTC the
year 10000), becomes the end it passed.
"""

from __future__ import annotations

from datetime import date, datetime, timezone

from .errors import UsageError

# Formats accepted besides ISO 8601; LoCoMo writes "1:56 pm on 8 May, 2023".
_FORMATS = (
    "%I:%M %p on %d %B, %Y",
    "%I:%M %p on %d %b, %Y",
    "%d %B %Y",
    "%d %B, %Y",
    "%B %d, %Y",
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d",
)


def now() -> datetime:
    return datetime.now(timezone.utc).astimezone().replace(microsecond=0)


def to_datetime(value: object) -> datetime:
    """A datetime, date or date-time string as an aware datetime (naive means local time)."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        dt = _parse_string(value.strip())
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


def _parse_string(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        pass
    for fmt in _FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    raise UsageError(
        f"cannot read the date {text!r}",
        hint="use ISO 8601 (2024-05-08 or 2024-05-08T13:56:00) or '1:56 pm on 8 May, 2023'",
    )


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
