"""The full-text tables: a note's words (`notes_fts`, BM25 over the columns search's
rules fill: `Fields`) and its text as trigrams (`notes_trigram`, for substrings), each
row under the note's fixed key."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Protocol

from ..models import Note
from ..timeutil import to_datetime
from .connection import FTS_TABLES, Connection, phrase
from .filters import NoteFilter


class Fields(Protocol):
    """The rules that make the columns search ranks by (`retrieve.fields.SearchFields`):
    the index stores what they make, it does not decide it."""

    weights: tuple[float, ...]  # bm25 weights of the full-text row's columns

    def features(self, note: Note) -> dict[str, str | None]:
        """The note row's `speaker` and `stated`."""
        ...

    def deterministic_words(self, version: Note) -> dict[str, str]:
        """What the full-text row takes of the note as the deterministic method makes it."""
        ...

    def fulltext_row(self, note: Note, deterministic: dict[str, str], neighbours: list[str]) -> dict[str, str]:
        """{column: text} of the note's full-text row."""
        ...

    def embedding_source(self, note: Note) -> str:
        """What the note's vectors are made of (the row keeps its hash, to tell when they are stale)."""
        ...


class FullText:
    def __init__(self, conn: Connection, fields: Fields):
        self.conn = conn
        self.db = conn.db
        self.fields = fields
        self._weights = ", ".join(map(str, fields.weights))

    def key(self, note_id: str) -> int:
        """The note's fixed rowid in the full-text tables (made on first use)."""
        self.db.execute(
            "INSERT OR IGNORE INTO fts_keys(id, key) VALUES (?, (SELECT coalesce(max(key), 0) + 1 FROM fts_keys))", [note_id]
        )
        return self.db.execute("SELECT key FROM fts_keys WHERE id = ?", [note_id]).fetchone()[0]

    def put_text(self, note_id: str, content: str) -> None:
        """The note's text, as trigrams."""
        key = self.key(note_id)
        self.db.execute("DELETE FROM notes_trigram WHERE rowid = ?", [key])
        self.db.execute("INSERT INTO notes_trigram(rowid, id, content) VALUES (?, ?, ?)", [key, note_id, content])

    def refresh(self, note_id: str) -> None:
        """The note's full-text row, made again from its row in `notes` (its neighbours'
        text in it: call it for them too when a note's text changes)."""
        row = self.db.execute(
            "SELECT content, keywords, tags, context, created, previous, next, metadata, own_words FROM notes WHERE id = ?",
            [note_id],
        ).fetchone()
        if row is None:
            return
        content, keywords, tags, context, created, previous, next_, metadata, deterministic = row
        neighbours = [r[0] for r in self.db.execute(
            "SELECT content FROM notes WHERE id IN (?, ?) ORDER BY created_utc", [previous, next_])]
        note = Note(note_id, content, keywords=json.loads(keywords), tags=json.loads(tags), context=context,
                    created_at=to_datetime(created) if created else None, metadata=json.loads(metadata))
        columns = self.fields.fulltext_row(note, json.loads(deterministic) if deterministic else {}, neighbours)
        key = self.key(note_id)
        self.db.execute("DELETE FROM notes_fts WHERE rowid = ?", [key])
        self.db.execute(f"INSERT INTO notes_fts(rowid, id, {', '.join(columns)}) VALUES (?, ?, {', '.join('?' * len(columns))})",
                        [key, note_id, *columns.values()])

    def drop(self, note_id: str) -> None:
        """The note's rows go (its words with them, once the transaction's commit merges)."""
        key = self.db.execute("SELECT key FROM fts_keys WHERE id = ?", [note_id]).fetchone()
        if key:
            for table in FTS_TABLES:
                self.db.execute(f"DELETE FROM {table} WHERE rowid = ?", key)
            self.db.execute("DELETE FROM fts_keys WHERE id = ?", [note_id])

    def search(self, words: list[str], limit: int, filters: NoteFilter = NoteFilter()) -> list[tuple[str, float]]:
        """BM25 over a note's columns (`Fields.weights`). Every word is quoted, so no
        user text can change the query's meaning; notes matching more and rarer words
        rank higher."""
        match = " OR ".join(phrase(w) for w in words if w)
        if not match:
            return []
        clause, params = filters.where()
        extra = f"AND notes_fts.id IN (SELECT notes.id FROM notes {clause})" if clause else ""
        sql = (
            f"SELECT id, bm25(notes_fts, 0, {self._weights}) AS score FROM notes_fts "
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
            if word and self.db.execute(sql, [phrase(word), most + 1]).fetchone()[0] <= most:
                kept.append(word)
        return kept

    def notes_with(self, phrases: Iterable[str], without: Iterable[str] = ()) -> dict[str, int]:
        """{phrase: how many notes hold it in their text or keywords}, by the full-text
        index ("billing-api": the words billing, api one after the other); the notes
        `without` (ids) not counted."""
        without = list(without)
        out = {}
        for text in dict.fromkeys(p for p in phrases if p):
            match = "{content keywords} : " + phrase(text)
            found = self.db.execute("SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?", [match]).fetchone()[0]
            if found and without:
                found -= sum(n for (n,) in self.conn.rows_in(
                    "SELECT count(*) FROM notes_fts WHERE id {in} AND notes_fts MATCH ?", without, match))
            out[text] = found
        return out

    def substrings(self, words: list[str], limit: int, filters: NoteFilter = NoteFilter()) -> list[tuple[str, float]]:
        """Notes holding each text as a substring, case aside: trigram matches for texts of
        3+ characters, a plain scan for shorter ones. Ranked by how many texts a note holds."""
        clause, params = filters.where()
        extra = f"AND id IN (SELECT notes.id FROM notes {clause})" if clause else ""
        hits: dict[str, float] = {}
        for word in words:
            if len(word) >= 3:
                sql = f"SELECT id FROM notes_trigram WHERE notes_trigram MATCH ? {extra} LIMIT ?"
                args = [phrase(word), *params, limit * 4]
            else:
                # lower() folds ASCII only: the text as typed is looked for too.
                sql = f"SELECT id FROM notes WHERE (instr(content, ?1) OR instr(lower(content), lower(?1))) {extra} LIMIT ?"
                args = [word, *params, limit * 4]
            for (note_id,) in self.db.execute(sql, args):
                hits[note_id] = hits.get(note_id, 0.0) + 1.0
        return sorted(hits.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]

    # -- its own checks (for `amem doctor`) ------------------------------------------
    def errors(self) -> dict[str, str]:
        """{full-text table: what its own check says} for each whose index does not match its rows."""
        out = {}
        for table in FTS_TABLES:
            try:
                self.db.execute(f"INSERT INTO {table}({table}) VALUES('integrity-check')")
            except sqlite3.DatabaseError as exc:
                out[table] = str(exc)
        return out

    def mismatches(self) -> list[tuple[str, list[str], int]]:
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
