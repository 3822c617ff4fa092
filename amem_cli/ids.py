"""Note ids: unique, file-name safe, sortable by creation time."""

from __future__ import annotations

import re
import secrets
import threading
from datetime import datetime, timedelta

from .errors import UsageError
from .timeutil import UTC_MAX, to_utc

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_lock = threading.Lock()
_last_stamp: datetime | None = None
_MS = timedelta(milliseconds=1)


def new_id(created: datetime) -> str:
    """`YYYYMMDDTHHMMSSmmm-xxxx` in UTC. Within a process ids are strictly increasing
    for notes given the same creation time, so a batch keeps its order."""
    global _last_stamp
    stamp = to_utc(created)
    stamp = stamp.replace(microsecond=stamp.microsecond // 1000 * 1000)
    with _lock:
        # Differences, not sums: `_last_stamp - 1 s` does not exist at the year 1.
        if _last_stamp is not None and timedelta(0) <= _last_stamp - stamp < timedelta(seconds=1):
            stamp = _last_stamp + _MS if _last_stamp < UTC_MAX - _MS else _last_stamp
        _last_stamp = stamp
    return f"{stamp.year:04d}{stamp:%m%dT%H%M%S}{stamp.microsecond // 1000:03d}-" + secrets.token_hex(2)


def is_valid_id(note_id: str) -> bool:
    return bool(_ID_RE.match(note_id)) and ".." not in note_id


def check_id(note_id: str) -> str:
    """An id from the user; never one that could name a path outside the vault."""
    if not is_valid_id(note_id):
        raise UsageError(
            f"not a valid note id: {note_id!r}",
            hint="ids use letters, digits, '.', '_' and '-'; see `amem list` for the ids",
        )
    return note_id


def id_from_stem(stem: str) -> str:
    """An id for a file a person dropped into the vault without one."""
    if is_valid_id(stem):
        return stem
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-.") or "note"
    return slug.replace("..", ".")[:128]
