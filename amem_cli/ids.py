"""Note ids: unique, file-name safe, sortable by creation time.

An id is letters and digits of any script (in NFC), '.', '_' and '-': it starts with a
letter or digit and never holds '..', a separator, a space, punctuation or a control or
format character, so it names no path outside the vault, fits `[[links]]`, URLs and the
vector store, and reads the same everywhere. A file without an `id:` gets one from its
name (`id_from_stem`); where two files would get the same, `settle_ids` decides.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import secrets
import threading
import unicodedata
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import PurePosixPath

from .errors import UsageError
from .timeutil import UTC_MAX, to_utc

MAX_CHARS = 128
# `ID.md` and the temp file a write makes beside it (`.ID.md.xxxxxxxx.tmp`) within the
# 255 bytes a file name may have.
MAX_BYTES = 200
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
    if note_id.isascii():  # the usual case, and the one a regex can say
        return bool(_ID_RE.match(note_id)) and ".." not in note_id
    return (
        len(note_id) <= MAX_CHARS
        and len(note_id.encode("utf-8", "surrogatepass")) <= MAX_BYTES
        and unicodedata.category(note_id[0])[0] in "LN"
        and all(_id_char(c) for c in note_id)
        and ".." not in note_id
        and unicodedata.is_normalized("NFC", note_id)
    )


def _id_char(c: str) -> bool:
    """Letters (with their combining marks) and digits of any script, '.', '_', '-'."""
    return c in "._-" or unicodedata.category(c)[0] in "LMN"


def check_id(note_id: str) -> str:
    """An id from the user (in NFC); never one that could name a path outside the vault."""
    normal = unicodedata.normalize("NFC", note_id)
    if not is_valid_id(normal):
        raise UsageError(
            f"not a valid note id: {note_id!r}",
            hint="ids use letters, digits, '.', '_' and '-'; see `amem list` for the ids",
        )
    return normal


def id_from_stem(stem: str) -> str:
    """An id for a file a person dropped into the vault without one: its name (in NFC),
    each run of what an id cannot hold (spaces, punctuation) turned into one '-'. A name
    with no letter or digit at all (`!!!.md`, `🎉.md`) gets `note-` and a hash of it."""
    stem = unicodedata.normalize("NFC", stem)
    if is_valid_id(stem):
        return stem
    slug = "".join(("".join(run) if ok else "-") for ok, run in itertools.groupby(stem, _id_char))
    slug = re.sub(r"\.{2,}", ".", slug)
    start = next((i for i, c in enumerate(slug) if unicodedata.category(c)[0] in "LN"), len(slug))
    slug = _fit(slug[start:].rstrip("-."))
    return slug if is_valid_id(slug) else f"note-{_digest(stem)}"


def collision_id(wanted: str, path: str) -> str:
    """The id of a file whose name gives the id another file has: `wanted` and a hash of
    the file's path, so the same file gets the same one on every run."""
    return collision_prefix(wanted) + _digest(path)


def collision_prefix(wanted: str) -> str:
    """What every `collision_id` of `wanted` starts with."""
    return f"{_fit(wanted, 9)}-"


def settle_ids(claims: Mapping[str, tuple[str, bool]]) -> dict[str, str | None]:
    """The id each file gets ({path: (the id it wants, whether its frontmatter names
    it)}) where several want one: a named id before one from a file name, a file name that
    is the id as it is before one made into it (`My-Note.md` before `My Note.md`), then
    the file nearer the root, then the path. The others get `collision_id`; one that
    names the id itself gets None (it cannot be given another). Pure: the same files
    get the same ids, whatever order they were found in."""
    wanting: dict[str, list[str]] = {}
    for path, (wanted, _) in claims.items():
        wanting.setdefault(wanted, []).append(path)
    out: dict[str, str | None] = {}
    for wanted, paths in wanting.items():
        first, *others = sorted(paths, key=lambda p: _rank(p, *claims[p]))
        out[first] = wanted
        for path in others:
            out[path] = None if claims[path][1] else collision_id(wanted, path)
    return out


def _rank(path: str, wanted: str, named: bool) -> tuple:
    made = unicodedata.normalize("NFC", PurePosixPath(path).stem) != wanted
    return (not named, made, path.count("/"), path)


def _fit(text: str, room: int = 0) -> str:
    """`text` cut (at a character) to leave `room` of an id's characters and bytes."""
    text = text[: MAX_CHARS - room]
    while len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES - room:
        text = text[:-1]
    return text


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
