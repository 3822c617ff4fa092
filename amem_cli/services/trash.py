"""Removed notes, kept so `amem undo ID` can bring them back: `.amem/trash/`.

Each removed note leaves two files there: `ID.md`, its file's bytes as they were, and
`ID.json`, where it was (its path in the vault) and which notes linked to it (`rm` takes
those links out of them; undo puts them back). They go for good after `trash_days` days
(looked at on each removal), or at once with `amem rm --purge`.

Beside the index, not in it: the index holds no byte of a removed note's text (issue 24:
SQLite keeps freed pages, FTS5 keeps old segments), and the trash is plain files that a
purge unlinks like the note file itself.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

DAY = 86400.0


@dataclass
class Removed:
    """What `take` hands back: the note file's bytes and where it goes."""

    id: str
    path: str  # in the vault
    data: bytes
    linked_from: dict[str, list[str]] = field(default_factory=dict)  # {"links": ids, "backlinks": ids}


class Trash:
    def __init__(self, folder: Path, days: float):
        self.folder = folder
        self.days = days

    def put(self, removed: Removed) -> None:
        """Keep a removed note (unless nothing is to be kept: `trash_days` 0); older
        entries past their time go."""
        self.expire()
        if self.days <= 0:
            return
        self.folder.mkdir(mode=0o700, exist_ok=True)
        info = {"id": removed.id, "path": removed.path, "removed": time.time(), "linked_from": removed.linked_from}
        _write(self.folder / f"{removed.id}.md", removed.data)
        _write(self.folder / f"{removed.id}.json", json.dumps(info, ensure_ascii=False).encode("utf-8"))

    def get(self, note_id: str) -> Removed | None:
        """The removed note of this id, if the trash holds it."""
        try:
            info = json.loads((self.folder / f"{note_id}.json").read_text(encoding="utf-8"))
            data = (self.folder / f"{note_id}.md").read_bytes()
        except (OSError, ValueError):
            return None
        return Removed(note_id, info["path"], data, info.get("linked_from") or {})

    def purge(self, note_id: str) -> None:
        for suffix in (".md", ".json"):
            (self.folder / f"{note_id}{suffix}").unlink(missing_ok=True)

    def expire(self) -> None:
        """Purge what was removed more than `trash_days` ago."""
        if not self.folder.is_dir():
            return
        cutoff = time.time() - self.days * DAY
        for info in self.folder.glob("*.json"):
            try:
                removed = json.loads(info.read_text(encoding="utf-8"))["removed"]
            except (OSError, ValueError, KeyError, TypeError):
                continue  # not one of ours: left alone
            if removed < cutoff:
                self.purge(info.stem)


def _write(path: Path, data: bytes) -> None:
    """Whole or not at all: a temp file, flushed, renamed over."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
