"""Parsing and normalising the timestamps notes carry."""

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
        dt = dt.astimezone()  # interpret as local time
    return dt


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


def utc_key(dt: datetime | None) -> str | None:
    """A sortable UTC string for the index."""
    if dt is None:
        return None
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
