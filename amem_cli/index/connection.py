"""The index's one SQLite connection, which its stores share: opening it (the schema
migrated), write transactions, and what a commit after a delete does."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils

from .migrations import migrations

IN_CHUNK = 400  # values in one `IN (...)` list of `rows_in` (a statement may hold two)
FTS_TABLES = ("notes_fts", "notes_trigram")  # the full-text tables: words, and trigrams for substrings


class Connection:
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

    def deleted(self) -> None:
        """A note's text was deleted in this transaction: its commit leaves no copy of it
        in the full-text segments or the WAL."""
        self._deleted = True

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

    def rows_in(self, sql: str, values: Iterable, *after) -> list[tuple]:
        """The rows of `sql` for `values`, a chunk of them at a time (a statement binds at
        most 999 values in older SQLite builds): each `{in}` in `sql` becomes `IN (?, ...)`
        over the chunk; `after`: values bound after the chunk's."""
        return rows_in(self.db, sql, values, *after)


def rows_in(db: sqlite_utils.Database, sql: str, values: Iterable, *after) -> list[tuple]:
    """`Connection.rows_in` on a database (a migration's)."""
    values, rows = list(values), []
    for start in range(0, len(values), IN_CHUNK):
        chunk = values[start : start + IN_CHUNK]
        marks = f"IN ({','.join('?' * len(chunk))})"
        rows += db.execute(sql.replace("{in}", marks), chunk * sql.count("{in}") + list(after)).fetchall()
    return rows


def phrase(text: str) -> str:
    """`text` as one quoted FTS5 phrase: no user text can change a query's meaning."""
    return '"' + text.replace('"', '""') + '"'
