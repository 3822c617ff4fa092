"""Note ids: unique, file-name safe, sortable by creation time."""

from __future__ import annotations

import re
import secrets
import threading
from datetime import datetime, timedelta, timezone

from .errors import UsageError

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_lock = threading.Lock()
_last_stamp: datetime | None = None


def new_id(created: datetime) -> str:
    """`YYYYMMDDTHHMMSSmmm-xxxx` in UTC. Within a process ids are strictly increasing
    for notes given the same creation time, so a batch keeps its order."""
    global _last_stamp
    stamp = created.astimezone(timezone.utc).replace(microsecond=created.microsecond // 1000 * 1000)
    with _lock:
        if _last_stamp is not None and _last_stamp - timedelta(seconds=1) < stamp <= _last_stamp:
            stamp = _last_stamp + timedelta(milliseconds=1)
        _last_stamp = stamp
    return stamp.strftime("%Y%m%dT%H%M%S") + f"{stamp.microsecond // 1000:03d}-" + secrets.token_hex(2)


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
