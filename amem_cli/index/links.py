"""Links and the graph they make: what each note names, resolved to the notes (see
`amem_cli.links` for how a name is read), who refers to a note, and each note's
neighbours for graph search."""

from __future__ import annotations

from collections.abc import Iterable

import sqlite_utils

from .. import links as link_names
from ..models import Note
from .connection import Connection, rows_in


class LinkStore:
    def __init__(self, conn: Connection):
        self.conn = conn
        self.db = conn.db

    def index(self, note: Note, path: str) -> None:
        index_links(self.db, note, path)

    def forget(self, note_id: str) -> None:
        forget_links(self.db, note_id)

    def resolve(self, written: Iterable[str]) -> dict[str, str]:
        """{link as written: id of the note it names} for those that name a note."""
        targets = {w: link_names.target(w) for w in written}
        found = _candidates(self.db, {link_names.key(t) for t in targets.values() if t})
        out = {}
        for w, t in targets.items():
            note_id = link_names.best(found.get(link_names.key(t), ()), t) if t else None
            if note_id is not None:
                out[w] = note_id
        return out

    def linked_from(self, ids: Iterable[str]) -> dict[str, list[str]]:
        """{note: the notes whose frontmatter links name it}, for each given note."""
        out: dict[str, list[str]] = {}
        sql = "SELECT dst, src FROM links WHERE kind = 'link' AND dst {in} AND src != dst ORDER BY dst, src"
        for dst, src in self.conn.rows_in(sql, ids):
            out.setdefault(dst, []).append(src)
        return out

    def pointing(self, note_id: str, kind: str) -> list[str]:
        """The other notes whose sequence pointer `kind` (previous, next) names this one."""
        sql = "SELECT src FROM links WHERE kind = ? AND dst = ? AND src != dst ORDER BY src"
        return [r[0] for r in self.db.execute(sql, [kind, note_id])]

    def referrers(self, note_id: str) -> set[str]:
        """The other notes that name this one: by a link (in frontmatter or text) or a
        sequence pointer, however written, and by its id in their backlinks, which the
        links table does not hold (the pipeline writes a backlink as the id; ASCII case
        aside, as a person may write it)."""
        # LIKE first: only backlinks whose text holds the id are parsed (a text scan is ~3x
        # cheaper than json_each on every note; an id's `_`, a LIKE wildcard, only lets more through).
        sql = ("SELECT src FROM links WHERE dst = ?1 AND src != ?1 UNION "
               "SELECT notes.id FROM notes, json_each(notes.backlinks) WHERE notes.backlinks LIKE '%' || ?1 || '%' "
               "AND json_each.value = ?1 COLLATE NOCASE AND notes.id != ?1")
        return {r[0] for r in self.db.execute(sql, [note_id])}

    def all(self) -> list[tuple[str, str, str]]:
        """(source, target, kind) of every link and sequence pointer that names a note,
        each once, in order. Kind: `link` (frontmatter), `text`, `previous`, `next`,
        `supersedes` or `superseded_by`."""
        sql = "SELECT DISTINCT src, dst, kind FROM links WHERE dst IS NOT NULL ORDER BY src, dst, kind"
        return [tuple(r) for r in self.db.execute(sql)]

    def pairs(self) -> dict[str, set[frozenset[str]]]:
        """The pairs of notes joined by a link ("link": either way, in frontmatter or text,
        once however many records hold it) and by a sequence ("sequence": previous and
        next), a note's link to itself left out: what `status`, `stats` and `graph` count."""
        out: dict[str, set[frozenset[str]]] = {"link": set(), "sequence": set()}
        for src, dst, kind in self.all():
            if src != dst:
                out["sequence" if kind in ("previous", "next") else "link"].add(frozenset((src, dst)))
        return out

    def adjacency(self, ids: Iterable[str]) -> dict[str, set[str]]:
        """Each given note's linked notes, both directions, sequence links included."""
        ids = list(dict.fromkeys(ids))
        out: dict[str, set[str]] = {i: set() for i in ids}
        sql = "SELECT src, dst FROM links WHERE src {in} AND dst IS NOT NULL UNION SELECT dst, src FROM links WHERE dst {in}"
        for a, b in self.conn.rows_in(sql, ids):
            if a != b:
                out.setdefault(a, set()).add(b)
        return out


def index_links(db: sqlite_utils.Database, note: Note, path: str) -> None:
    """Record the names a note answers to and the links it makes (in its frontmatter and
    in its text), each resolved to the note it names, or to none yet. Other notes' links
    naming one of its old or new names are resolved again: a note added, renamed or given
    a title moves them."""
    names = link_names.names(note.id, path, note.extra)
    old = dict(db.execute("SELECT name, rank FROM note_names WHERE note_id = ?", [note.id]).fetchall())
    if old != names:
        db.execute("DELETE FROM note_names WHERE note_id = ?", [note.id])
        db.conn.executemany("INSERT INTO note_names(name, rank, note_id) VALUES (?, ?, ?)",
                            [(name, rank, note.id) for name, rank in names.items()])
        _resolve_again(db, set(old) | set(names))
    written = [(w, "link") for w in note.links] + [(w, "text") for w in link_names.body_links(note.content)]
    written += [(w, kind) for w, kind in ((note.previous, "previous"), (note.next, "next")) if w]
    written += [(w, "supersedes") for w in note.supersedes] + [(w, "superseded_by") for w in note.superseded_by]
    rows: dict[tuple[str, str], str] = {}
    for w, kind in written:
        if aim := link_names.target(w):
            rows.setdefault((link_names.key(aim), kind), aim)
    stored = db.execute("SELECT key, kind, target FROM links WHERE src = ?", [note.id]).fetchall()
    if {(k, kind): aim for k, kind, aim in stored} == rows:
        return  # the same links (a backlink added, the usual rewrite): their `dst` is kept current above
    db.execute("DELETE FROM links WHERE src = ?", [note.id])
    found = _candidates(db, {k for k, _ in rows})
    db.conn.executemany(
        "INSERT INTO links(src, key, kind, target, dst) VALUES (?, ?, ?, ?, ?)",
        [(note.id, k, kind, aim, link_names.best(found.get(k, ()), aim)) for (k, kind), aim in rows.items()],
    )


def forget_links(db: sqlite_utils.Database, note_id: str) -> None:
    """A note leaves: its links go, and links that named it are resolved again."""
    old = [r[0] for r in db.execute("SELECT name FROM note_names WHERE note_id = ?", [note_id])]
    db.execute("DELETE FROM note_names WHERE note_id = ?", [note_id])
    db.execute("DELETE FROM links WHERE src = ?", [note_id])
    _resolve_again(db, set(old))


def _candidates(db: sqlite_utils.Database, keys: Iterable[str]) -> dict[str, list[tuple[int, str]]]:
    """{name key: [(rank, note id)]} of the notes answering to each key."""
    out: dict[str, list[tuple[int, str]]] = {}
    for name, rank, note_id in rows_in(db, "SELECT name, rank, note_id FROM note_names WHERE name {in}", keys):
        out.setdefault(name, []).append((rank, note_id))
    return out


def _resolve_again(db: sqlite_utils.Database, keys: set[str]) -> None:
    found = _candidates(db, keys)
    rows = rows_in(db, "SELECT rowid, key, target, dst FROM links WHERE key {in}", keys)
    changed = [(dst, rowid) for rowid, k, aim, old in rows if (dst := link_names.best(found.get(k, ()), aim)) != old]
    db.conn.executemany("UPDATE links SET dst = ? WHERE rowid = ?", changed)
