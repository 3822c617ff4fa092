"""The SQLite index: notes, keywords, tags, links, boxes, files, full text.

Derived from the Markdown files; `amem reindex` rebuilds it from them.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import sqlite_utils

from .. import links as link_names
from ..models import Note
from ..time_phrases import stated_words
from ..timeutil import date_words, to_datetime, utc_key
from ..vault import FileStat, content_hash
from .migrations import migrations

JOB_TIMES = 100  # how many jobs' times are kept
IN_CHUNK = 400  # values in one `IN (...)` list of `rows_in` (a statement may hold two)


@dataclass(frozen=True)
class NoteFilter:
    """Which notes a search or listing may return: those with every tag and box given,
    created within `since`..`until` (either end open)."""

    tags: tuple[str, ...] = ()
    boxes: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None

    def __bool__(self) -> bool:
        """Whether it narrows anything (the empty filter lets every note through)."""
        return bool(self.tags or self.boxes or self.since is not None or self.until is not None)


@dataclass(frozen=True)
class FileRow:
    path: str
    mtime_ns: int
    size: int
    hash: str
    note_id: str | None
    error: str | None


class SqliteIndex:
    def __init__(self, path: Path):
        self.path = path
        conn = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
        self.db = sqlite_utils.Database(conn)
        self.db.execute("PRAGMA busy_timeout = 30000")
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")
        self.db.execute("PRAGMA foreign_keys = ON")
        # A deleted row's bytes are overwritten, not left in free space; a WAL that is
        # reset shrinks to nothing instead of keeping old page images (`_truncate_wal`).
        self.db.execute("PRAGMA secure_delete = ON")
        self.db.execute("PRAGMA journal_size_limit = 0")
        self._deleted = False  # a note was deleted since the last commit
        migrations.apply(self.db)

    def close(self) -> None:
        self.db.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction, taken at once so writers queue instead of failing."""
        conn = self.db.conn
        if conn.in_transaction:
            yield
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            if self._deleted:
                self._merge_fts()
        except BaseException:
            conn.execute("ROLLBACK")
            self._deleted = False
            raise
        conn.execute("COMMIT")
        if self._deleted:
            self._deleted = False
            self._truncate_wal()

    def _merge_fts(self) -> None:
        """Merge each full-text index into one segment. FTS5 keeps a deleted row's words in
        its old segments (behind a delete marker) until they merge; SQLite >= 3.42 has a
        'secure-delete' option for this, the SQLite Python ships here (3.40) does not."""
        for table in FTS_TABLES:
            self.db.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")

    def _truncate_wal(self) -> None:
        """Copy the WAL into the database and cut it to zero bytes: its old frames hold the
        pages as they were before the delete. Best effort: a reader in another process
        can hold it back, and `journal_size_limit = 0` cuts it at its next reset then."""
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def generation(self) -> tuple[int, int]:
        """Changes whenever anything is written to the index, by this connection or another."""
        return self.db.conn.total_changes, self.db.execute("PRAGMA data_version").fetchone()[0]

    # -- meta -------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.db.execute("DELETE FROM meta WHERE key = ?", [key])
        else:
            self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [key, value])

    # -- files ------------------------------------------------------------
    def files(self, paths: Iterable[str] | None = None) -> dict[str, FileRow]:
        """What the index knows of every file, or of the `paths` given."""
        sql = "SELECT path, mtime_ns, size, hash, note_id, error FROM files"
        if paths is None:
            return {r[0]: FileRow(*r) for r in self.db.execute(sql)}
        return {r[0]: FileRow(*r) for r in rows_in(self.db, sql + " WHERE path {in}", paths)}

    def set_file(self, path: str, stat: FileStat, hash_: str, note_id: str | None, error: str | None) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO files(path, mtime_ns, size, hash, note_id, error) VALUES (?,?,?,?,?,?)",
            [path, stat.mtime_ns, stat.size, hash_, note_id, error],
        )

    def remove_file(self, path: str) -> None:
        self.db.execute("DELETE FROM files WHERE path = ?", [path])

    def file_errors(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT error FROM files WHERE error IS NOT NULL ORDER BY path")]

    # -- notes ------------------------------------------------------------
    def upsert_note(self, note: Note, path: str) -> None:
        """Index a note (replacing what was indexed under its id)."""
        text = note.embedding_source()
        row = {
            "id": note.id,
            "path": path,
            "content": note.content,
            "context": note.context,
            "keywords": json.dumps(note.keywords, ensure_ascii=False),
            "tags": json.dumps(note.tags, ensure_ascii=False),
            "links": json.dumps(note.links, ensure_ascii=False),
            "backlinks": json.dumps(note.backlinks, ensure_ascii=False),
            "boxes": json.dumps(note.boxes, ensure_ascii=False),
            "metadata": json.dumps(note.metadata, ensure_ascii=False, default=str),
            "extra": json.dumps(note.extra, ensure_ascii=False, default=str),
            "created": note.created_at.isoformat() if note.created_at else None,
            "updated": note.updated_at.isoformat() if note.updated_at else None,
            "created_utc": utc_key(note.created_at),
            "text_hash": content_hash(text.encode("utf-8")),
            "previous": note.previous,
            "next": note.next,
            "speaker": speaker_of(note),
            "stated": stated_words(note.content, note.created_at),
        }
        db = self.db
        searched = ("content", "keywords", "tags", "context", "boxes", "created", "previous", "next")
        old = db.execute(
            f"SELECT embedded_hash, text_hash, own_words, {', '.join(searched)} FROM notes WHERE id = ?", [note.id]
        ).fetchone()
        row["embedded_hash"] = old[0] if old else None
        # The deterministic method's fields stand while what they were made from does
        # (`mark_embedded` makes them again with the note's vectors).
        row["own_words"] = old[2] if old and old[1] == row["text_hash"] else None
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        db.execute(f"INSERT OR REPLACE INTO notes({cols}) VALUES ({marks})", list(row.values()))
        index_links(db, note, path)
        if old is not None and tuple(old[3:]) == tuple(row[c] for c in searched):
            return  # only links changed (the pipeline's usual write): the searched text stands
        for table, col, values in (
            ("note_keywords", "keyword", note.keywords),
            ("note_tags", "tag", note.tags),
            ("note_boxes", "box", note.boxes),
        ):
            db.execute(f"DELETE FROM {table} WHERE note_id = ?", [note.id])
            db.conn.executemany(
                f"INSERT OR IGNORE INTO {table}(note_id, {col}) VALUES (?, ?)", [(note.id, v) for v in values]
            )
        key = self._fts_key(note.id)
        db.execute("DELETE FROM notes_trigram WHERE rowid = ?", [key])
        db.execute("INSERT INTO notes_trigram(rowid, id, content) VALUES (?, ?, ?)", [key, note.id, note.content])
        # The note's full-text row carries its neighbours' text, and theirs carry its text.
        for nid in (note.id, note.previous, note.next):
            if nid:
                self._refresh_fts(nid)

    def _refresh_fts(self, note_id: str) -> None:
        db = self.db
        row = db.execute(
            "SELECT content, keywords, tags, context, created, previous, next, metadata, own_words FROM notes WHERE id = ?",
            [note_id],
        ).fetchone()
        if row is None:
            return
        content, keywords, tags, context, created, previous, next_, metadata, own_words = row
        neighbours = [
            r[0] for r in db.execute("SELECT content FROM notes WHERE id IN (?, ?) ORDER BY created_utc", [previous, next_])
        ]
        fields = {"keywords": " ".join(json.loads(keywords)), "tags": " ".join(json.loads(tags)), "context": context}
        # The keyword index holds what a person (or the note's own words) said; fields a
        # model wrote reach search through the note's vector only. A small model's tags
        # and context ("discusses family memories") would otherwise match questions
        # across many notes and crowd out the note that says the thing. In their place
        # the deterministic method's fields (`own_words`, once the note is embedded):
        # without them a note the model labelled ranks below the same note labelled
        # without a model (LoCoMo dev recall@10 with the bundled model's vaults 0.762,
        # with them 0.772; --llm none 0.775).
        own = json.loads(own_words) if own_words else {}
        for name in Note("", "", metadata=json.loads(metadata)).generated:
            if name in fields:
                fields[name] = own.get(name, "")
        key = self._fts_key(note_id)
        db.execute("DELETE FROM notes_fts WHERE rowid = ?", [key])
        db.execute(
            "INSERT INTO notes_fts(rowid, id, content, keywords, tags, context, neighbours, dates) VALUES (?,?,?,?,?,?,?,?)",
            [
                key,
                note_id,
                content,
                fields["keywords"],
                fields["tags"],
                fields["context"],
                "\n".join(neighbours),
                date_words(to_datetime(created).date()) if created else "",
            ],
        )

    def _fts_key(self, note_id: str) -> int:
        """The note's fixed rowid in the full-text tables (made on first use)."""
        self.db.execute(
            "INSERT OR IGNORE INTO fts_keys(id, key) VALUES (?, (SELECT coalesce(max(key), 0) + 1 FROM fts_keys))", [note_id]
        )
        return self.db.execute("SELECT key FROM fts_keys WHERE id = ?", [note_id]).fetchone()[0]

    def delete_note(self, note_id: str) -> None:
        db = self.db
        row = db.execute("SELECT previous, next FROM notes WHERE id = ?", [note_id]).fetchone()
        for table in ("note_keywords", "note_tags", "note_boxes"):
            db.execute(f"DELETE FROM {table} WHERE note_id = ?", [note_id])
        forget_links(db, note_id)
        key = db.execute("SELECT key FROM fts_keys WHERE id = ?", [note_id]).fetchone()
        if key:
            db.execute("DELETE FROM notes_fts WHERE rowid = ?", key)
            db.execute("DELETE FROM notes_trigram WHERE rowid = ?", key)
            db.execute("DELETE FROM fts_keys WHERE id = ?", [note_id])
        db.execute("DELETE FROM notes WHERE id = ?", [note_id])
        self._deleted = True
        self.queue_vector_deletes([note_id])
        for neighbour in row or ():
            if neighbour:
                self._refresh_fts(neighbour)

    def path_of(self, note_id: str) -> str | None:
        row = self.db.execute("SELECT path FROM notes WHERE id = ?", [note_id]).fetchone()
        return row[0] if row else None

    def notes_with_prefix(self, prefix: str) -> list[tuple[str, str]]:
        """(id, path) of the notes whose ids start with `prefix` (a range of the id index:
        every such id sorts from `prefix` to `prefix` with its last character's successor)."""
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        return self.db.execute("SELECT id, path FROM notes WHERE id >= ? AND id < ?", [prefix, end]).fetchall()

    def get(self, note_id: str) -> Note | None:
        row = self.db.execute(f"SELECT {NOTE_COLS} FROM notes WHERE id = ?", [note_id]).fetchone()
        return self._resolved([note_from_row(row)])[0] if row else None

    def get_many(self, ids: Iterable[str], *, links: bool = True) -> dict[str, Note]:
        """The notes of these ids; `links=False`: their links left as written, for callers
        that read only the notes' text (resolving a hub's hundreds of backlinks costs)."""
        rows = rows_in(self.db, f"SELECT {NOTE_COLS} FROM notes WHERE id {{in}}", dict.fromkeys(ids))
        out = {row[0]: note_from_row(row) for row in rows}
        if links:
            self._resolved(list(out.values()))
        return out

    def _resolved(self, notes: list[Note]) -> list[Note]:
        """The notes with each link, backlink and sequence pointer as the id of the note it
        names (as written, when it names none)."""
        written = {w for n in notes for w in (*n.links, *n.backlinks, n.previous, n.next) if w}
        ids = self.resolve(written)

        def one(w: str) -> str:
            return ids.get(w) or link_names.target(w) or w

        for n in notes:
            n.links = list(dict.fromkeys(one(w) for w in n.links))
            n.backlinks = list(dict.fromkeys(one(w) for w in n.backlinks))
            n.previous, n.next = (one(w) if w else None for w in (n.previous, n.next))
        return notes

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
        for dst, src in rows_in(self.db, sql, ids):
            out.setdefault(dst, []).append(src)
        return out

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

    def links(self) -> list[tuple[str, str, str]]:
        """(source, target, kind) of every link and sequence pointer that names a note,
        each once, in order. Kind: `link` (frontmatter), `text`, `previous` or `next`."""
        sql = "SELECT DISTINCT src, dst, kind FROM links WHERE dst IS NOT NULL ORDER BY src, dst, kind"
        return [tuple(r) for r in self.db.execute(sql)]

    def existing(self, ids: Iterable[str]) -> set[str]:
        return {r[0] for r in rows_in(self.db, "SELECT id FROM notes WHERE id {in}", ids)}

    def notes_by_metadata(self, key: str) -> dict[str, str]:
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

    def ids(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT id FROM notes ORDER BY id")]

    def ids_matching(self, filters: NoteFilter) -> set[str]:
        """The ids of the notes the filter lets through."""
        where, params = _where(filters)
        return {r[0] for r in self.db.execute(f"SELECT id FROM notes {where}", params)}

    def note_paths(self) -> dict[str, str]:
        """{note id: its file's path} of every indexed note."""
        return dict(self.db.execute("SELECT id, path FROM notes").fetchall())

    def count(self) -> int:
        return self.db.execute("SELECT count(*) FROM notes").fetchone()[0]

    def list_notes(
        self,
        *,
        tags: list[str] | None = None,
        boxes: list[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
        newest_first: bool = True,
    ) -> list[Note]:
        where, params = _where(NoteFilter(tuple(tags or ()), tuple(boxes or ()), since, until))
        sql = f"SELECT {NOTE_COLS} FROM notes {where} ORDER BY created_utc {'DESC' if newest_first else 'ASC'}, id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return self._resolved([note_from_row(r) for r in self.db.execute(sql, params)])

    # -- counts -----------------------------------------------------------
    def link_count(self) -> int:
        """Links and sequence pointers that name a note."""
        return self.db.execute("SELECT count(*) FROM links WHERE dst IS NOT NULL").fetchone()[0]

    def boxes(self) -> list[tuple[str, int]]:
        return [tuple(r) for r in self.db.execute("SELECT box, count(*) FROM note_boxes GROUP BY box ORDER BY 2 DESC, 1")]

    def box_notes(self, boxes: Iterable[str]) -> dict[str, list[str]]:
        """{box: the ids of its notes} for these boxes (none for a box no note is in)."""
        out: dict[str, list[str]] = {}
        for box, note_id in rows_in(self.db, "SELECT box, note_id FROM note_boxes WHERE box {in} ORDER BY note_id", boxes):
            out.setdefault(box, []).append(note_id)
        return out

    # -- embeddings bookkeeping ------------------------------------------
    def pending_embeddings(self) -> list[str]:
        rows = self.db.execute("SELECT id FROM notes WHERE embedded_hash IS NULL OR embedded_hash != text_hash")
        return [r[0] for r in rows]

    def embedded_count(self) -> int:
        return self.db.execute("SELECT count(*) FROM notes WHERE embedded_hash = text_hash").fetchone()[0]

    def mark_embedded(self, ids: list[str], unaided: Mapping[str, Note] | None = None) -> None:
        """These notes' vectors are those of their text now. `unaided`: {id: the note as
        it would be without a model's fields}, for the notes a model wrote fields of,
        whose full-text row takes those fields in place of the model's."""
        self.db.conn.executemany("UPDATE notes SET embedded_hash = text_hash WHERE id = ?", [(i,) for i in ids])
        for note_id, note in (unaided or {}).items():
            words = {"keywords": " ".join(note.keywords), "tags": " ".join(note.tags), "context": note.context}
            self.db.execute("UPDATE notes SET own_words = ? WHERE id = ?", [json.dumps(words, ensure_ascii=False), note_id])
            self._refresh_fts(note_id)

    def clear_embedded(self) -> None:
        self.db.execute("UPDATE notes SET embedded_hash = NULL")

    def forget_embedded(self, ids: list[str]) -> None:
        """These notes' vectors are missing or wrong: the next flush embeds them again."""
        self.db.conn.executemany("UPDATE notes SET embedded_hash = NULL WHERE id = ?", [(i,) for i in ids])

    def queue_vector_deletes(self, ids: list[str]) -> None:
        self.db.conn.executemany("INSERT OR IGNORE INTO vector_deletes(id) VALUES (?)", [(i,) for i in ids])

    def pending_vector_deletes(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT id FROM vector_deletes")]

    def clear_vector_deletes(self, ids: list[str] | None = None) -> None:
        """These deletes are done (None: all of them, the store having been emptied)."""
        if ids is None:
            self.db.execute("DELETE FROM vector_deletes")
        else:
            self.db.conn.executemany("DELETE FROM vector_deletes WHERE id = ?", [(i,) for i in ids])

    # -- full text --------------------------------------------------------
    def fts_search(self, words: list[str], limit: int, filters: NoteFilter = NoteFilter()) -> list[tuple[str, float]]:
        """BM25 over a note's content, keywords, tags, context, its neighbours' text and its
        date, the note's own text weighing most. Every word is quoted, so no user text can
        change the query's meaning; notes matching more and rarer words rank higher."""
        match = " OR ".join(_phrase(w) for w in words if w)
        if not match:
            return []
        where, params = _where(filters)
        extra = f"AND notes_fts.id IN (SELECT notes.id FROM notes {where})" if where else ""
        sql = (
            f"SELECT id, bm25(notes_fts, 0, {FTS_WEIGHTS}) AS score FROM notes_fts "
            f"WHERE notes_fts MATCH ? {extra} ORDER BY score LIMIT ?"
        )
        rows = self.db.execute(sql, [match, *params, limit]).fetchall()
        return [(r[0], -float(r[1])) for r in rows]

    def uncommon(self, words: list[str], most: int) -> list[str]:
        """The words found in at most `most` notes. Counting stops at most + 1, so a word
        in half of a 100,000-note vault costs no more than a rare one."""
        kept = []
        for word in words:
            sql = "SELECT count(*) FROM (SELECT 1 FROM notes_fts WHERE notes_fts MATCH ? LIMIT ?)"
            if word and self.db.execute(sql, [_phrase(word), most + 1]).fetchone()[0] <= most:
                kept.append(word)
        return kept

    def notes_with(self, phrases: Iterable[str], without: Iterable[str] = ()) -> dict[str, int]:
        """{phrase: how many notes hold it in their text or keywords}, by the full-text
        index ("billing-api": the words billing, api one after the other); the notes
        `without` (ids) not counted."""
        without = list(without)
        out = {}
        for phrase in dict.fromkeys(p for p in phrases if p):
            match = "{content keywords} : " + _phrase(phrase)
            found = self.db.execute("SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?", [match]).fetchone()[0]
            if found and without:
                found -= sum(n for (n,) in rows_in(
                    self.db, "SELECT count(*) FROM notes_fts WHERE id {in} AND notes_fts MATCH ?", without, match))
            out[phrase] = found
        return out

    def substring_search(self, words: list[str], limit: int, filters: NoteFilter = NoteFilter()) -> list[tuple[str, float]]:
        """Notes holding each text as a substring, case aside: trigram matches for texts of
        3+ characters, a plain scan for shorter ones. Ranked by how many texts a note holds."""
        where, params = _where(filters)
        extra = f"AND id IN (SELECT notes.id FROM notes {where})" if where else ""
        hits: dict[str, float] = {}
        for word in words:
            if len(word) >= 3:
                sql = f"SELECT id FROM notes_trigram WHERE notes_trigram MATCH ? {extra} LIMIT ?"
                args = [_phrase(word), *params, limit * 4]
            else:
                # lower() folds ASCII only: the text as typed is looked for too.
                sql = f"SELECT id FROM notes WHERE (instr(content, ?1) OR instr(lower(content), lower(?1))) {extra} LIMIT ?"
                args = [word, *params, limit * 4]
            for (note_id,) in self.db.execute(sql, args):
                hits[note_id] = hits.get(note_id, 0.0) + 1.0
        return sorted(hits.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]

    # -- graph --------------------------------------------------------------
    def adjacency(self, ids: Iterable[str]) -> dict[str, set[str]]:
        """Each given note's linked notes, both directions, sequence links included."""
        ids = list(dict.fromkeys(ids))
        out: dict[str, set[str]] = {i: set() for i in ids}
        sql = "SELECT src, dst FROM links WHERE src {in} AND dst IS NOT NULL UNION SELECT dst, src FROM links WHERE dst {in}"
        for a, b in rows_in(self.db, sql, ids):
            if a != b:
                out.setdefault(a, set()).add(b)
        return out

    def sequence_neighbours(self, ids: Iterable[str]) -> dict[str, set[str]]:
        """Each given note's previous and next notes (those it has)."""
        rows = rows_in(self.db, "SELECT id, previous, next FROM notes WHERE id {in}", dict.fromkeys(ids))
        return {i: {n for n in (prev, nxt) if n} for i, prev, nxt in rows}

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
        return {r[0] for r in rows_in(self.db, sql, ids, *(n.lower() for n in names))}

    def stating_times(self, ids: Iterable[str]) -> set[str]:
        """Which of `ids` state a time in their text ("yesterday", "8 May 2023")."""
        return {r[0] for r in rows_in(self.db, "SELECT id FROM notes WHERE id {in} AND stated != ''", ids)}

    # -- the index's own checks (for `amem doctor`) --------------------------
    def integrity_errors(self) -> list[str]:
        """What SQLite's own check finds wrong with the database file (nothing, normally)."""
        rows = [r[0] for r in self.db.execute("PRAGMA integrity_check")]
        return [] if rows == ["ok"] else rows

    def fts_errors(self) -> dict[str, str]:
        """{full-text table: what its own check says} for each whose index does not match its rows."""
        out = {}
        for table in FTS_TABLES:
            try:
                self.db.execute(f"INSERT INTO {table}({table}) VALUES('integrity-check')")
            except sqlite3.DatabaseError as exc:
                out[table] = str(exc)
        return out

    def fts_mismatches(self) -> list[tuple[str, list[str], int]]:
        """(full-text table, the notes without their own row in it, how many of its rows
        belong to no note) for each table: every note has exactly one row in each, under
        its key."""
        out = []
        for table in FTS_TABLES:
            missing = self.db.execute(
                f"SELECT n.id FROM notes n LEFT JOIN fts_keys k ON k.id = n.id "
                f"LEFT JOIN {table} f ON f.rowid = k.key WHERE f.rowid IS NULL OR f.id != n.id"
            ).fetchall()
            extra = self.db.execute(
                f"SELECT count(*) FROM {table} f LEFT JOIN fts_keys k ON k.key = f.rowid "
                f"LEFT JOIN notes n ON n.id = k.id WHERE n.id IS NULL"
            ).fetchone()[0]
            out.append((table, [r[0] for r in missing], extra))
        return out

    # -- the queue of deferred pipeline work --------------------------------
    def enqueue(self, note_ids: list[str], when: str) -> None:
        self.db.conn.executemany("INSERT OR IGNORE INTO jobs(note_id, queued) VALUES (?, ?)", [(i, when) for i in note_ids])

    def queued(self, limit: int | None = None) -> list[str]:
        sql = "SELECT note_id FROM jobs ORDER BY seq" + (" LIMIT ?" if limit else "")
        return [r[0] for r in self.db.execute(sql, [limit] if limit else [])]

    def claim_job(self, holder: str, now: float, lease: float, note_id: str | None = None) -> str | None:
        """Give the oldest job nobody holds (or whose lease ran out) to `holder`, in one
        statement, so two workers never get the same job; jobs that failed go after
        those that did not. `note_id`: that note's job only."""
        which = "note_id = ? AND " if note_id is not None else ""
        rows = self.db.execute(
            "UPDATE jobs SET claimed_by = ?, lease_until = ? WHERE seq = (SELECT seq FROM jobs "
            f"WHERE {which}(claimed_by IS NULL OR lease_until < ?) ORDER BY failures, seq LIMIT 1) RETURNING note_id",
            [holder, now + lease, *([note_id] if note_id is not None else []), now],
        ).fetchall()
        return rows[0][0] if rows else None

    def claims(self) -> list[tuple[str, str, float]]:
        """(note id, holder, lease end) of every job a worker holds."""
        return [tuple(r) for r in self.db.execute(
            "SELECT note_id, claimed_by, lease_until FROM jobs WHERE claimed_by IS NOT NULL ORDER BY seq")]

    def release_job(self, note_id: str, holder: str) -> None:
        self.db.execute("UPDATE jobs SET claimed_by = NULL, lease_until = NULL WHERE note_id = ? AND claimed_by = ?",
                        [note_id, holder])

    def fail_job(self, note_id: str, holder: str, error: str) -> None:
        """Give a job back undone, counting the failure and keeping its error."""
        self.db.execute("UPDATE jobs SET claimed_by = NULL, lease_until = NULL, failures = failures + 1, error = ? "
                        "WHERE note_id = ? AND claimed_by = ?", [error, note_id, holder])

    def drop_job(self, note_id: str) -> None:
        """The note's job leaves the queue, undone (its note went, or its work is done otherwise)."""
        self.db.execute("DELETE FROM jobs WHERE note_id = ?", [note_id])

    def finish_job(self, note_id: str, seconds: float | None, now: float) -> None:
        """The job is done and leaves the queue; `seconds`: how long its model work took
        (kept for the last JOB_TIMES jobs, to estimate the time the queue has left)."""
        self.drop_job(note_id)
        if seconds is not None:
            self.db.execute("INSERT INTO job_times(finished, seconds) VALUES (?, ?)", [now, seconds])
            self.db.execute("DELETE FROM job_times WHERE seq <= (SELECT max(seq) FROM job_times) - ?", [JOB_TIMES])

    def job_seconds(self) -> list[float]:
        """How long the last jobs took, oldest first."""
        return [r[0] for r in self.db.execute("SELECT seconds FROM job_times ORDER BY seq")]

    def jobs(self, limit: int | None = None) -> list[dict]:
        """The queue in the order its jobs are claimed, each with the first words of its note."""
        sql = ("SELECT j.note_id, j.queued, j.claimed_by, j.lease_until, j.failures, j.error, substr(n.content, 1, 200) "
               "FROM jobs j LEFT JOIN notes n ON n.id = j.note_id ORDER BY j.failures, j.seq" + (" LIMIT ?" if limit else ""))
        keys = ("note_id", "queued", "claimed_by", "lease_until", "failures", "error", "content")
        return [dict(zip(keys, r)) for r in self.db.execute(sql, [limit] if limit else [])]

    def job_counts(self) -> tuple[int, int, int]:
        """(jobs, jobs claimed, jobs that failed and are not claimed)."""
        row = self.db.execute("SELECT count(*), count(claimed_by), coalesce(sum(failures > 0 AND claimed_by IS NULL), 0) "
                              "FROM jobs").fetchone()
        return tuple(row)

    def duplicate_jobs(self) -> list[tuple[str, int]]:
        """(note id, how many times) of each note queued more than once (never, normally)."""
        return [tuple(r) for r in self.db.execute("SELECT note_id, count(*) FROM jobs GROUP BY note_id HAVING count(*) > 1")]

    # -- revisions (evolution's changes, for history and undo) -------------
    def add_revision(self, rev: dict) -> int:
        """Record a revision; returns its seq."""
        return self.db["revisions"].insert(rev).last_pk

    def revisions(self, note_id: str) -> list[dict]:
        """The note's revisions, oldest first."""
        rows = self.db.execute("SELECT * FROM revisions WHERE note_id = ? ORDER BY seq", [note_id])
        names = [c[0] for c in rows.description]
        return [dict(zip(names, r)) for r in rows.fetchall()]

    def last_revisions(self) -> list[tuple[str, int, bytes, str]]:
        """(note id, seq, old bytes, new hash) of each note's latest revision."""
        return [tuple(r) for r in self.db.execute(
            "SELECT note_id, seq, old_bytes, new_hash FROM revisions WHERE seq IN (SELECT max(seq) FROM revisions GROUP BY note_id)")]

    def drop_revision(self, seq: int) -> None:
        self.db.execute("DELETE FROM revisions WHERE seq = ?", [seq])

    def drop_revisions(self, note_id: str) -> None:
        """Forget a removed note's revisions: they hold its text, and cannot be undone."""
        self.db.execute("DELETE FROM revisions WHERE note_id = ?", [note_id])

    def reset(self) -> None:
        """Forget everything indexed (the files stay; the revision log too)."""
        with self.transaction():
            for table in ("note_keywords", "note_tags", "note_boxes", "links", "note_names", "notes_fts", "notes_trigram",
                          "fts_keys", "notes", "files"):
                self.db.execute(f"DELETE FROM {table}")
            self._deleted = True


FTS_TABLES = ("notes_fts", "notes_trigram")  # the full-text tables: words, and trigrams for substrings

# bm25 column weights: content, keywords, tags, context, neighbours, dates.
FTS_WEIGHTS = "1.0, 0.8, 0.5, 0.6, 0.5, 0.5"

# "Name: text" or "First Last: text" at the start of a note: who said it.
_SPEAKER = re.compile(r"^([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s")


def job_total(path: Path) -> int | None:
    """How many jobs the queue of the index at `path` holds, read on a connection of its
    own: a server answers `amem server status` without waiting for its turn on the index.
    None when it cannot be read so."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
        try:
            return conn.execute("SELECT count(*) FROM jobs").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def speaker_of(note: Note) -> str | None:
    """Who said or wrote a note: `speaker` in its metadata, else a leading "Name:"."""
    given = note.metadata.get("speaker")
    if isinstance(given, str) and given.strip():
        return given.strip()
    m = _SPEAKER.match(note.content.lstrip())  # a hand-written file may open with a blank line
    return m.group(1) if m else None


NOTE_COLS = "id, content, keywords, tags, context, created, updated, links, backlinks, boxes, metadata, extra, previous, next"


def note_from_row(row) -> Note:
    """A note as indexed (its links as written; `SqliteIndex._resolved` resolves them)."""
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
    )


def _where(filters: NoteFilter) -> tuple[str, list]:
    """A WHERE clause (or '') over `notes` for the filter, and its parameters."""
    clauses: list[str] = []
    params: list = []
    for tag in filters.tags:
        clauses.append("notes.id IN (SELECT note_id FROM note_tags WHERE tag = ?)")
        params.append(tag.lstrip("#"))
    for box in filters.boxes:
        clauses.append("notes.id IN (SELECT note_id FROM note_boxes WHERE box = ?)")
        params.append(box)
    if filters.since is not None:
        clauses.append("notes.created_utc >= ?")
        params.append(utc_key(to_datetime(filters.since)))
    if filters.until is not None:
        clauses.append("notes.created_utc <= ?")
        params.append(utc_key(to_datetime(filters.until)))
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), params


def _phrase(text: str) -> str:
    """`text` as one quoted FTS5 phrase: no user text can change a query's meaning."""
    return '"' + text.replace('"', '""') + '"'


# -- links: what each note names, resolved to the notes (see amem_cli.links) -----------


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


def rows_in(db: sqlite_utils.Database, sql: str, values: Iterable, *after) -> list[tuple]:
    """The rows of `sql` for `values`, a chunk of them at a time (a statement binds at
    most 999 values in older SQLite builds): each `{in}` in `sql` becomes `IN (?, ...)`
    over the chunk; `after`: values bound after the chunk's."""
    values, rows = list(values), []
    for start in range(0, len(values), IN_CHUNK):
        chunk = values[start : start + IN_CHUNK]
        marks = f"IN ({','.join('?' * len(chunk))})"
        rows += db.execute(sql.replace("{in}", marks), chunk * sql.count("{in}") + list(after)).fetchall()
    return rows
