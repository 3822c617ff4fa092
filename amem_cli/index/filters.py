"""Which notes a search or a listing may return, and the SQL that lets them through."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..timeutil import to_datetime, utc_key


@dataclass(frozen=True)
class NoteFilter:
    """The notes with every tag and box given, created within `since`..`until` (either
    end open)."""

    tags: tuple[str, ...] = ()
    boxes: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None

    def __bool__(self) -> bool:
        """Whether it narrows anything (the empty filter lets every note through)."""
        return bool(self.tags or self.boxes or self.since is not None or self.until is not None)

    def where(self) -> tuple[str, list]:
        """A WHERE clause (or '') over `notes` for the filter, and its parameters."""
        clauses: list[str] = []
        params: list = []
        for tag in self.tags:
            clauses.append("notes.id IN (SELECT note_id FROM note_tags WHERE tag = ?)")
            params.append(tag.lstrip("#"))
        for box in self.boxes:
            clauses.append("notes.id IN (SELECT note_id FROM note_boxes WHERE box = ?)")
            params.append(box)
        if self.since is not None:
            clauses.append("notes.created_utc >= ?")
            params.append(utc_key(to_datetime(self.since)))
        if self.until is not None:
            clauses.append("notes.created_utc <= ?")
            params.append(utc_key(to_datetime(self.until)))
        return ("WHERE " + " AND ".join(clauses) if clauses else ""), params
