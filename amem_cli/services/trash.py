"""Removed notes, kept so `amem undo ID` can bring them back: `.amem/trash/`.

Each removal leaves two files there, named by the note's id and the moment it was
removed (`ID@NANOSECONDS`: no id holds an '@'): `.md`, its file's bytes as they were, and
`.json`, where it was (its path in the vault) and which notes linked to it (`rm` takes
those links out of them; undo puts them back). An id used again and removed again adds a
version; none replaces another. Versions go for good after `trash_days` days (looked at
on each removal), or at once with `amem rm --purge`. `amem trash` lists them, newest
first; `ID@1` is the newest version of ID, `ID@2` the one before.

Beside the index, not in it: the index holds no byte of a removed note's text (issue 24:
SQLite keeps freed pages, FTS5 keeps old segments), and the trash is plain files that a
purge unlinks like the note file itself. Nothing here is opened through a symlink: a
vault could carry one that names a file outside it (see `vault.refuse_links`).
"""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..vault import link_refused

DAY = 86400.0
VERSION = "@"  # between a note's id and the time it was removed, in an entry's name


@dataclass
class Removed:
    """A removed note: its file's bytes, where it goes back, who linked to it."""

    id: str
    path: str  # in the vault
    data: bytes
    linked_from: dict[str, list[str]] = field(default_factory=dict)  # {"links": ids, "backlinks": ids}
    removed: float = 0.0  # when (seconds since the epoch)
    entry: str = ""  # its name in the trash, without the suffix


class Trash:
    def __init__(self, folder: Path, days: float):
        self.folder = folder
        self.days = days

    def put(self, removed: Removed) -> None:
        """Keep a removed note as a new version (unless nothing is to be kept:
        `trash_days` 0); versions past their time go."""
        self.expire()
        if self.days <= 0:
            return
        removed.removed = time.time()
        removed.entry = f"{removed.id}{VERSION}{time.time_ns()}"
        info = {"id": removed.id, "path": removed.path, "removed": removed.removed, "linked_from": removed.linked_from}
        with self._opened(create=True) as fd:
            _write(fd, f"{removed.entry}.md", removed.data)
            _write(fd, f"{removed.entry}.json", json.dumps(info, ensure_ascii=False).encode("utf-8"))

    def versions(self, note_id: str | None = None) -> list[Removed]:
        """The removed notes kept (of one id, or all), newest first."""
        out = []
        with self._opened() as fd:
            if fd is None:
                return []
            for entry in _entries(fd):
                if note_id is not None and entry.partition(VERSION)[0] != note_id:
                    continue
                if (removed := self._read(fd, entry)) is not None and (note_id is None or removed.id == note_id):
                    out.append(removed)
        return sorted(out, key=lambda r: r.removed, reverse=True)

    def get(self, note_id: str, version: int = 1) -> Removed | None:
        """The removed note of this id, if the trash holds it: its `version`th newest."""
        found = self.versions(note_id)
        return found[version - 1] if 0 < version <= len(found) else None

    def take(self, removed: Removed) -> None:
        """Drop one version (it was brought back)."""
        with self._opened() as fd:
            if fd is not None:
                _unlink(fd, removed.entry)

    def purge(self, note_id: str) -> None:
        """Drop every version of the id."""
        with self._opened() as fd:
            if fd is not None:
                for entry in _entries(fd):
                    if entry.partition(VERSION)[0] == note_id:
                        _unlink(fd, entry)

    def expire(self) -> None:
        """Purge what was removed more than `trash_days` ago."""
        cutoff = time.time() - self.days * DAY
        with self._opened() as fd:
            if fd is None:
                return
            for entry in _entries(fd):
                removed = self._read(fd, entry)
                if removed is not None and removed.removed < cutoff:
                    _unlink(fd, entry)

    @contextmanager
    def _opened(self, create: bool = False) -> Iterator[int | None]:
        """The trash folder, opened without following a link (None: there is none)."""
        if create:
            self.folder.mkdir(mode=0o700, exist_ok=True)
        try:
            fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except FileNotFoundError:
            yield None
            return
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise link_refused(self.folder) from None
            raise
        try:
            yield fd
        finally:
            os.close(fd)

    def _read(self, fd: int, entry: str) -> Removed | None:
        """The entry, or None when it is not one of ours (left alone)."""
        try:
            info = json.loads(_read(fd, f"{entry}.json", self.folder))
            data = _read(fd, f"{entry}.md", self.folder)
            return Removed(info["id"], info["path"], data, info.get("linked_from") or {}, float(info["removed"]), entry)
        except (FileNotFoundError, ValueError, KeyError, TypeError):
            return None


def _entries(fd: int) -> list[str]:
    """The names of the trash's entries (an entry is NAME.json and NAME.md)."""
    return sorted(name[: -len(".json")] for name in os.listdir(fd) if name.endswith(".json") and not name.startswith("."))


def _read(fd: int, name: str, folder: Path) -> bytes:
    try:
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise link_refused(folder / name) from None
        raise
    with os.fdopen(handle, "rb") as fh:
        return fh.read()


def _write(fd: int, name: str, data: bytes) -> None:
    """Whole or not at all: a temp file, flushed, renamed over (a rename replaces a link
    itself, never what it names)."""
    tmp = f".{name}.tmp"
    try:
        os.unlink(tmp, dir_fd=fd)  # left by a killed write
    except FileNotFoundError:
        pass
    handle = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=fd)
    try:
        with os.fdopen(handle, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=fd)
        except FileNotFoundError:
            pass
        raise


def _unlink(fd: int, entry: str) -> None:
    for suffix in (".md", ".json"):
        try:
            os.unlink(entry + suffix, dir_fd=fd)
        except FileNotFoundError:
            pass
