"""The SQLite index: its stores on one connection. Derived from the Markdown files;
`amem reindex` rebuilds it from them.

    notes       the notes, their keywords, tags and boxes, and which the vector store owes a vector
    fulltext    their words and their text as trigrams (what goes in: search's `Fields`)
    links       links and the graph they make
    supersessions  which notes supersede which, and the pairs the detector was unsure of
    files       what was indexed of each file
    jobs        the queue of deferred pipeline work
    revisions   amem's changes to notes, for history and undo
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .connection import Connection
from .files import FileStore
from .fulltext import Fields, FullText
from .jobs import JobStore
from .links import LinkStore
from .notes import NoteStore
from .revisions import RevisionStore
from .supersessions import SupersessionStore


class SqliteIndex:
    def __init__(self, path: Path, fields: Fields):
        """`fields`: the rules that make the columns search ranks by (`retrieve.fields.SearchFields`)."""
        self.path = path
        self.conn = Connection(path)
        self.db = self.conn.db
        self.links = LinkStore(self.conn)
        self.fulltext = FullText(self.conn, fields)
        self.supersessions = SupersessionStore(self.conn)
        self.notes = NoteStore(self.conn, self.links, self.fulltext, self.supersessions)
        self.files = FileStore(self.conn)
        self.jobs = JobStore(self.conn)
        self.revisions = RevisionStore(self.conn)

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction, taken at once so writers queue instead of failing."""
        with self.conn.transaction():
            yield

    def generation(self) -> tuple[int, int]:
        """Changes whenever anything is written to the index, by this connection or another."""
        return self.db.conn.total_changes, self.db.execute("PRAGMA data_version").fetchone()[0]

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.db.execute("DELETE FROM meta WHERE key = ?", [key])
        else:
            self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [key, value])

    def reset(self) -> None:
        """Forget everything indexed (the files stay; the revision log and the queue too)."""
        with self.transaction():
            for table in ("note_keywords", "note_tags", "note_boxes", "links", "note_names", "notes_fts", "notes_trigram",
                          "fts_keys", "notes", "files", "suggestions"):
                self.db.execute(f"DELETE FROM {table}")
            self.conn.deleted()

    def integrity_errors(self) -> list[str]:
        """What SQLite's own check finds wrong with the database file (nothing, normally)."""
        rows = [r[0] for r in self.db.execute("PRAGMA integrity_check")]
        return [] if rows == ["ok"] else rows
