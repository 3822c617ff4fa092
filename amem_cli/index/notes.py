"""The notes as indexed (`notes`, with their keywords, tags and boxes), kept with their
links (`LinkStore`), full text (`FullText`) and supersessions (`SupersessionStore`), and
which of them the vector store owes a vector."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import date, datetime

from .. import links as link_names
from ..models import Note
from ..timeutil import to_datetime, utc_key
from ..vault import content_hash
from .connection import Connection
from .filters import NoteFilter
from .fulltext import FullText
from .links import LinkStore
from .supersessions import SupersessionStore

NOTE_COLS = "id, content, keywords, tags, context, created, updated, links, backlinks, boxes, metadata, extra, previous, next"
# With the columns later migrations added (an earlier migration reads NOTE_COLS only).
ALL_NOTE_COLS = NOTE_COLS + ", supersedes, superseded_by, expires"
# The columns whose change changes a note's full-text row or its keywords, tags and boxes.
SEARCHED = ("content", "keywords", "tags", "context", "boxes", "created", "previous", "next")
LABELS = (("note_keywords", "keyword", "keywords"), ("note_tags", "tag", "tags"), ("note_boxes", "box", "boxes"))


class NoteStore:
    def __init__(self, conn: Connection, links: LinkStore, fulltext: FullText, supersessions: SupersessionStore):
        self.conn = conn
        self.db = conn.db
        self.links = links
        self.fulltext = fulltext
        self.supersessions = supersessions

    # -- writes -----------------------------------------------------------
    def upsert(self, note: Note, path: str) -> None:
        """Index a note (replacing what was indexed under its id)."""
        text = self.fulltext.fields.embedding_source(note)
        row = {
            "id": note.id,
            "path": path,
            "content": note.content,
            "context": note.context,
            **{name: json.dumps(getattr(note, name), ensure_ascii=False)
               for name in ("keywords", "tags", "links", "backlinks", "boxes")},
            "metadata": json.dumps(note.metadata, ensure_ascii=False, default=str),
            "extra": json.dumps(note.extra, ensure_ascii=False, default=str),
            "created": note.created_at.isoformat() if note.created_at else None,
            "updated": note.updated_at.isoformat() if note.updated_at else None,
            "created_utc": utc_key(note.created_at),
            "text_hash": content_hash(text.encode("utf-8")),
            "previous": note.previous,
            "next": note.next,
            "supersedes": json.dumps(note.supersedes, ensure_ascii=False),
            "superseded_by": json.dumps(note.superseded_by, ensure_ascii=False),
            "expires": note.expires.isoformat() if note.expires else None,
            "expires_utc": utc_key(note.expires),
            "content_key": content_key(note.content),
            **self.fulltext.fields.features(note),
        }
        db = self.db
        old = db.execute(
            f"SELECT embedded_hash, text_hash, own_words, {', '.join(SEARCHED)} FROM notes WHERE id = ?", [note.id]
        ).fetchone()
        row["embedded_hash"] = old[0] if old else None
        # The deterministic method's fields stand while what they were made from does
        # (`mark_embedded` makes them again with the note's vectors).
        row["own_words"] = old[2] if old and old[1] == row["text_hash"] else None
        db.execute(f"INSERT OR REPLACE INTO notes({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
        self.links.index(note, path)
        if old is not None and tuple(old[3:]) == tuple(row[c] for c in SEARCHED):
            return  # only links changed (the pipeline's usual write): the searched text stands
        for table, col, field in LABELS:
            db.execute(f"DELETE FROM {table} WHERE note_id = ?", [note.id])
            db.conn.executemany(f"INSERT OR IGNORE INTO {table}(note_id, {col}) VALUES (?, ?)",
                                [(note.id, v) for v in getattr(note, field)])
        self.fulltext.put_text(note.id, note.content)
        # The note's full-text row carries its neighbours' text, and theirs carry its text.
        for nid in (note.id, note.previous, note.next):
            if nid:
                self.fulltext.refresh(nid)

    def delete(self, note_id: str) -> None:
        db = self.db
        row = db.execute("SELECT previous, next FROM notes WHERE id = ?", [note_id]).fetchone()
        for table, _, _ in LABELS:
            db.execute(f"DELETE FROM {table} WHERE note_id = ?", [note_id])
        self.links.forget(note_id)
        self.supersessions.forget(note_id)
        self.fulltext.drop(note_id)
        db.execute("DELETE FROM notes WHERE id = ?", [note_id])
        self.conn.deleted()
        self.queue_vector_deletes([note_id])
        for neighbour in row or ():
            if neighbour:
                self.fulltext.refresh(neighbour)

    # -- reads ------------------------------------------------------------
    def path_of(self, note_id: str) -> str | None:
        row = self.db.execute("SELECT path FROM notes WHERE id = ?", [note_id]).fetchone()
        return row[0] if row else None

    def with_prefix(self, prefix: str) -> list[tuple[str, str]]:
        """(id, path) of the notes whose ids start with `prefix` (a range of the id index:
        every such id sorts from `prefix` to `prefix` with its last character's successor)."""
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        return self.db.execute("SELECT id, path FROM notes WHERE id >= ? AND id < ?", [prefix, end]).fetchall()

    def get(self, note_id: str) -> Note | None:
        row = self.db.execute(f"SELECT {ALL_NOTE_COLS} FROM notes WHERE id = ?", [note_id]).fetchone()
        return self._resolved([note_from_row(row)])[0] if row else None

    def get_many(self, ids: Iterable[str], *, links: bool = True) -> dict[str, Note]:
        """The notes of these ids; `links=False`: their links left as written, for callers
        that read only the notes' text (resolving a hub's hundreds of backlinks costs)."""
        rows = self.conn.rows_in(f"SELECT {ALL_NOTE_COLS} FROM notes WHERE id {{in}}", dict.fromkeys(ids))
        out = {row[0]: note_from_row(row) for row in rows}
        if links:
            self._resolved(list(out.values()))
        return out

    def _resolved(self, notes: list[Note]) -> list[Note]:
        """The notes with each link, backlink, sequence pointer and supersession as the id
        of the note it names (as written, when it names none). A supersession either note
        states is in both: a newer note's `supersedes` shows in the older one's
        `superseded_by` (which amem does not write into a pinned or hand-edited file), and
        the other way round."""
        written = {w for n in notes for w in (*n.links, *n.backlinks, n.previous, n.next, *n.supersedes, *n.superseded_by) if w}
        ids = self.links.resolve(written)

        def one(w: str) -> str:
            return ids.get(w) or link_names.target(w) or w

        for n in notes:
            n.links = list(dict.fromkeys(one(w) for w in n.links))
            n.backlinks = list(dict.fromkeys(one(w) for w in n.backlinks))
            n.previous, n.next = (one(w) if w else None for w in (n.previous, n.next))
            n.supersedes = list(dict.fromkeys(one(w) for w in n.supersedes))
            n.superseded_by = list(dict.fromkeys(one(w) for w in n.superseded_by))
        stated = self.supersessions.of(n.id for n in notes)
        for n in notes:
            n.supersedes = list(dict.fromkeys([*n.supersedes, *stated.get(n.id, {}).get("supersedes", [])]))
            n.superseded_by = list(dict.fromkeys([*n.superseded_by, *stated.get(n.id, {}).get("superseded_by", [])]))
        return notes

    def existing(self, ids: Iterable[str]) -> set[str]:
        return {r[0] for r in self.conn.rows_in("SELECT id FROM notes WHERE id {in}", ids)}

    def by_metadata(self, key: str) -> dict[str, str]:
        """{value: note id} for the notes whose metadata holds a string under `key`."""
        path = '$."' + key.replace('"', "") + '"'
        sql = "SELECT json_extract(metadata, ?), id FROM notes WHERE json_type(metadata, ?) = 'text'"
        return dict(self.db.execute(sql, [path, path]).fetchall())

    def metadata_values(self, *keys: str) -> list[tuple]:
        """(value of each key..., note id) for the notes whose metadata holds a string under every key."""
        paths = ['$."' + k.replace('"', "") + '"' for k in keys]
        cols = ", ".join("json_extract(metadata, ?)" for _ in paths)
        where = " AND ".join("json_type(metadata, ?) = 'text'" for _ in paths)
        return self.db.execute(f"SELECT {cols}, id FROM notes WHERE {where}", [*paths, *paths]).fetchall()

    def same_content(self, key: str) -> list[str]:
        """The notes whose text is `key` (`content_key`), oldest first."""
        return [r[0] for r in self.db.execute("SELECT id FROM notes WHERE content_key = ? ORDER BY created_utc, id", [key])]

    def expired(self, at: datetime) -> set[str]:
        """The notes whose `expires` is at or before `at`."""
        return {r[0] for r in self.db.execute("SELECT id FROM notes WHERE expires_utc IS NOT NULL AND expires_utc <= ?",
                                              [utc_key(at)])}

    def texts(self, ids: Iterable[str]) -> dict[str, tuple[str, datetime | None]]:
        """{note: (its text, when it was created)} for the given notes that exist: what
        a supersession is judged by, without a whole note's fields."""
        rows = self.conn.rows_in("SELECT id, content, created FROM notes WHERE id {in}", dict.fromkeys(ids))
        return {i: (text, to_datetime(c) if c else None) for i, text, c in rows}

    def described(self, ids: Iterable[str]) -> dict[str, tuple[str, str, list[str]]]:
        """{note: (its text, context, keywords)} for the given notes that exist: what a
        link is chosen by, without a whole note's fields."""
        rows = self.conn.rows_in("SELECT id, content, context, keywords FROM notes WHERE id {in}", dict.fromkeys(ids))
        return {i: (text, context or "", json.loads(keywords)) for i, text, context, keywords in rows}

    def created(self, ids: Iterable[str]) -> dict[str, datetime | None]:
        """{note: when it was created} for the given notes that exist."""
        rows = self.conn.rows_in("SELECT id, created FROM notes WHERE id {in}", dict.fromkeys(ids))
        return {i: to_datetime(c) if c else None for i, c in rows}

    def ids(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT id FROM notes ORDER BY id")]

    def ids_matching(self, filters: NoteFilter) -> set[str]:
        """The ids of the notes the filter lets through."""
        where, params = filters.where()
        return {r[0] for r in self.db.execute(f"SELECT id FROM notes {where}", params)}

    def paths(self) -> dict[str, str]:
        """{note id: its file's path} of every indexed note."""
        return dict(self.db.execute("SELECT id, path FROM notes").fetchall())

    def count(self) -> int:
        return self.db.execute("SELECT count(*) FROM notes").fetchone()[0]

    def list(self, *, tags: list[str] | None = None, boxes: list[str] | None = None, since: datetime | None = None,
             until: datetime | None = None, limit: int | None = None, newest_first: bool = True) -> list[Note]:
        where, params = NoteFilter(tuple(tags or ()), tuple(boxes or ()), since, until).where()
        sql = f"SELECT {ALL_NOTE_COLS} FROM notes {where} ORDER BY created_utc {'DESC' if newest_first else 'ASC'}, id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return self._resolved([note_from_row(r) for r in self.db.execute(sql, params)])

    def boxes(self) -> list[tuple[str, int]]:
        return [tuple(r) for r in self.db.execute("SELECT box, count(*) FROM note_boxes GROUP BY box ORDER BY 2 DESC, 1")]

    def box_notes(self, boxes: Iterable[str]) -> dict[str, list[str]]:
        """{box: the ids of its notes} for these boxes (none for a box no note is in)."""
        out: dict[str, list[str]] = {}
        for box, note_id in self.conn.rows_in("SELECT box, note_id FROM note_boxes WHERE box {in} ORDER BY note_id", boxes):
            out.setdefault(box, []).append(note_id)
        return out

    def sequence_neighbours(self, ids: Iterable[str]) -> dict[str, set[str]]:
        """Each given note's previous and next notes (those it has)."""
        rows = self.conn.rows_in("SELECT id, previous, next FROM notes WHERE id {in}", dict.fromkeys(ids))
        return {i: {n for n in (prev, nxt) if n} for i, prev, nxt in rows}

    # -- what search ranks by (`Fields.features`) --------------------------
    def speakers(self) -> dict[str, str]:
        """Known speakers, lower-cased name -> name."""
        rows = self.db.execute("SELECT DISTINCT speaker FROM notes WHERE speaker IS NOT NULL")
        return {r[0].lower(): r[0] for r in rows}

    def conversation_speakers(self) -> set[str]:
        """The speakers of conversations: those a note answers and who answer it again in
        the next (a sequence's turns A, B, A). A label that only heads notes ("Postgres:
        ...", "TODO: ...") is not one."""
        rows = self.db.execute(
            "SELECT DISTINCT a.speaker, b.speaker FROM notes a JOIN notes b ON b.id = a.previous "
            "JOIN notes c ON c.id = b.previous WHERE a.speaker = c.speaker AND b.speaker != a.speaker"
        )
        return {name for row in rows for name in row}

    def speaker_notes(self, names: list[str], ids: Iterable[str]) -> set[str]:
        """Which of `ids` were said by one of `names`."""
        if not names:
            return set()
        sql = f"SELECT id FROM notes WHERE id {{in}} AND lower(speaker) IN ({','.join('?' * len(names))})"
        return {r[0] for r in self.conn.rows_in(sql, ids, *(n.lower() for n in names))}

    def stating_times(self, ids: Iterable[str]) -> set[str]:
        """Which of `ids` state a time in their text ("yesterday", "8 May 2023")."""
        return {r[0] for r in self.conn.rows_in("SELECT id FROM notes WHERE id {in} AND stated != ''", ids)}

    def dated_within(self, ids: Iterable[str], spans: Iterable[tuple[date, date]]) -> set[str]:
        """Which of `ids` were created on a day within one of the spans (first and last
        day, both included), the day as the note's own date says it (its time zone's)."""
        spans = list(spans)
        if not spans:
            return set()
        within = " OR ".join("substr(created, 1, 10) BETWEEN ? AND ?" for _ in spans)
        days = [d.isoformat() for span in spans for d in span]
        return {r[0] for r in self.conn.rows_in(f"SELECT id FROM notes WHERE id {{in}} AND ({within})", ids, *days)}

    # -- which notes the vector store owes a vector -------------------------
    def unembedded(self) -> list[str]:
        rows = self.db.execute("SELECT id FROM notes WHERE embedded_hash IS NULL OR embedded_hash != text_hash")
        return [r[0] for r in rows]

    def embedded_before(self, ids: Iterable[str]) -> set[str]:
        """Which of `ids` have had vectors made (of their text now or an earlier one)."""
        return {r[0] for r in self.conn.rows_in("SELECT id FROM notes WHERE id {in} AND embedded_hash IS NOT NULL", ids)}

    def embedded_count(self) -> int:
        return self.db.execute("SELECT count(*) FROM notes WHERE embedded_hash = text_hash").fetchone()[0]

    def mark_embedded(self, ids: list[str], deterministic: Mapping[str, Note] | None = None) -> None:
        """These notes' vectors are those of their text now. `deterministic`: {id: the
        note as the deterministic method makes it}, for the notes a model wrote fields of,
        whose full-text row takes those fields in place of the model's (kept in the
        column `own_words`, its name from before the glossary)."""
        self.db.conn.executemany("UPDATE notes SET embedded_hash = text_hash WHERE id = ?", [(i,) for i in ids])
        for note_id, note in (deterministic or {}).items():
            words = json.dumps(self.fulltext.fields.deterministic_words(note), ensure_ascii=False)
            self.db.execute("UPDATE notes SET own_words = ? WHERE id = ?", [words, note_id])
            self.fulltext.refresh(note_id)

    def clear_embedded(self) -> None:
        self.db.execute("UPDATE notes SET embedded_hash = NULL")

    def forget_embedded(self, ids: list[str]) -> None:
        """These notes' vectors are missing or wrong: the next flush embeds them again."""
        self.db.conn.executemany("UPDATE notes SET embedded_hash = NULL WHERE id = ?", [(i,) for i in ids])

    def queue_vector_deletes(self, ids: list[str]) -> None:
        self.db.conn.executemany("INSERT OR IGNORE INTO vector_deletes(id) VALUES (?)", [(i,) for i in ids])

    def vector_deletes(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT id FROM vector_deletes")]

    def clear_vector_deletes(self, ids: list[str] | None = None) -> None:
        """These deletes are done (None: all of them, the store having been emptied)."""
        if ids is None:
            self.db.execute("DELETE FROM vector_deletes")
        else:
            self.db.conn.executemany("DELETE FROM vector_deletes WHERE id = ?", [(i,) for i in ids])


def content_key(content: str) -> str:
    """What two notes' texts are compared by for an exact duplicate: the words, whitespace
    aside (case and punctuation count: "Deploy on Friday" is not "deploy on friday?")."""
    return content_hash(" ".join(content.split()).encode("utf-8"))


def note_from_row(row) -> Note:
    """A note as indexed (its links as written; `NoteStore.get` resolves them)."""
    return Note(
        id=row[0],
        content=row[1],
        keywords=json.loads(row[2]),
        tags=json.loads(row[3]),
        context=row[4] or "",
        created_at=to_datetime(row[5]) if row[5] else None,
        updated_at=to_datetime(row[6]) if row[6] else None,
        links=json.loads(row[7]),
        backlinks=json.loads(row[8]),
        boxes=json.loads(row[9]),
        metadata=json.loads(row[10]),
        extra=json.loads(row[11]),
        previous=row[12],
        next=row[13],
        supersedes=json.loads(row[14]) if len(row) > 14 else [],
        superseded_by=json.loads(row[15]) if len(row) > 15 else [],
        expires=to_datetime(row[16]) if len(row) > 16 and row[16] else None,
    )
