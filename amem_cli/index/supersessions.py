"""Which notes are current: the supersessions the notes state (links of the kinds
`supersedes` and `superseded_by`, either note's word counts), and the pairs the detector
was unsure of (`amem supersede --suggest`: hints kept in the index only, which a reindex
forgets)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .connection import Connection


class SupersessionStore:
    def __init__(self, conn: Connection):
        self.conn = conn
        self.db = conn.db

    def of(self, ids: Iterable[str]) -> dict[str, dict[str, list[str]]]:
        """{note: {"supersedes": older notes, "superseded_by": newer notes}} for each given
        note in a supersession, whichever of the two notes states it."""
        out: dict[str, dict[str, list[str]]] = {}
        sql = ("SELECT src, dst, kind FROM links WHERE kind IN ('supersedes', 'superseded_by') AND src != dst "
               "AND (src {in} OR dst {in}) ORDER BY src, dst")
        for src, dst, kind in self.conn.rows_in(sql, dict.fromkeys(ids)):
            if dst is None:
                continue
            newer, older = (src, dst) if kind == "supersedes" else (dst, src)
            out.setdefault(newer, {}).setdefault("supersedes", []).append(older)
            out.setdefault(older, {}).setdefault("superseded_by", []).append(newer)
        return {n: {k: list(dict.fromkeys(v)) for k, v in d.items()} for n, d in out.items()}

    # -- the pairs the detector was unsure of ---------------------------------
    def suggest(self, new: str, reasons: Mapping[str, str]) -> None:
        """Record that `new` may supersede each older note of `reasons` ({old: why})."""
        self.db.conn.executemany("INSERT OR REPLACE INTO suggestions(new, old, reason) VALUES (?, ?, ?)",
                                 [(new, old, why) for old, why in reasons.items()])

    def suggestions(self) -> list[tuple[str, str, str]]:
        """(new, old, why) of every pair recorded by `suggest`, the newest note first."""
        sql = ("SELECT s.new, s.old, s.reason FROM suggestions s JOIN notes n ON n.id = s.new "
               "ORDER BY n.created_utc DESC, s.new, s.old")
        return [tuple(r) for r in self.db.execute(sql)]

    def drop_suggestion(self, new: str, old: str) -> bool:
        """Forget a pair (confirmed or dismissed); whether there was one."""
        return self.db.execute("DELETE FROM suggestions WHERE new = ? AND old = ?", [new, old]).rowcount > 0

    def forget(self, note_id: str) -> None:
        """A note leaves: the pairs it is in go."""
        self.db.execute("DELETE FROM suggestions WHERE new = ?1 OR old = ?1", [note_id])
