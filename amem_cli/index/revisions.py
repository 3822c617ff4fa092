"""amem's changes to notes (evolution; fields derived again after an edit): each keeps
the file as it was, byte for byte, for `amem history` and `amem undo`."""

from __future__ import annotations

from .connection import Connection


class RevisionStore:
    def __init__(self, conn: Connection):
        self.db = conn.db

    def add(self, revision: dict) -> int:
        """Record a revision; returns its seq."""
        return self.db["revisions"].insert(revision).last_pk

    def of(self, note_id: str) -> list[dict]:
        """The note's revisions, oldest first."""
        rows = self.db.execute("SELECT * FROM revisions WHERE note_id = ? ORDER BY seq", [note_id])
        names = [c[0] for c in rows.description]
        return [dict(zip(names, r)) for r in rows.fetchall()]

    def last(self) -> list[tuple[str, int, bytes, str]]:
        """(note id, seq, old bytes, new hash) of each note's latest revision."""
        return [tuple(r) for r in self.db.execute(
            "SELECT note_id, seq, old_bytes, new_hash FROM revisions WHERE seq IN (SELECT max(seq) FROM revisions GROUP BY note_id)")]

    def drop(self, seq: int) -> None:
        self.db.execute("DELETE FROM revisions WHERE seq = ?", [seq])

    def drop_note(self, note_id: str) -> None:
        """Forget a removed note's revisions: they hold its text, and cannot be undone."""
        self.db.execute("DELETE FROM revisions WHERE note_id = ?", [note_id])
