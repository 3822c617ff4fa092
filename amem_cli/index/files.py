"""What the index knows of each note file: its size, time and hash when last indexed,
the note it holds, or why it holds none (`Indexer.sync` compares these with the disk)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..vault import FileStat
from .connection import Connection


@dataclass(frozen=True)
class FileRow:
    path: str
    mtime_ns: int
    size: int
    hash: str
    note_id: str | None
    error: str | None


class FileStore:
    def __init__(self, conn: Connection):
        self.conn = conn
        self.db = conn.db

    def of(self, paths: Iterable[str] | None = None) -> dict[str, FileRow]:
        """What the index knows of every file, or of the `paths` given."""
        sql = "SELECT path, mtime_ns, size, hash, note_id, error FROM files"
        if paths is None:
            return {r[0]: FileRow(*r) for r in self.db.execute(sql)}
        return {r[0]: FileRow(*r) for r in self.conn.rows_in(sql + " WHERE path {in}", paths)}

    def set(self, path: str, stat: FileStat, hash_: str, note_id: str | None, error: str | None) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO files(path, mtime_ns, size, hash, note_id, error) VALUES (?,?,?,?,?,?)",
            [path, stat.mtime_ns, stat.size, hash_, note_id, error],
        )

    def remove(self, path: str) -> None:
        self.db.execute("DELETE FROM files WHERE path = ?", [path])

    def errors(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT error FROM files WHERE error IS NOT NULL ORDER BY path")]
