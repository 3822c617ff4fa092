"""The times a note states, resolved at indexing, in the index only. Through the Python
API: fake embedder, real SQLite."""

from __future__ import annotations

import sqlite3

from amem_cli.index.sqlite import SqliteIndex
from test_sequence import raw


def test_a_relative_time_is_resolved_into_the_index_only(memory):
    note = memory.add("Caroline: I went to a support group yesterday", created_at="2023-05-08T13:56")
    plain = memory.add("Caroline: I went to a support group", created_at="2023-05-08T14:30")
    rows = dict(memory._c.index.db.execute("SELECT id, stated FROM notes").fetchall())
    assert rows == {note.id: "2023-05-07 7 May 2023 Sunday", plain.id: ""}
    assert memory._c.index.stating_times([note.id, plain.id]) == {note.id}
    # The person's words stand as written: nothing derived reaches the file or the note.
    assert "2023-05-07" not in raw(memory, note.id) and "Sunday" not in raw(memory, note.id)
    assert memory.get(note.id).content == "Caroline: I went to a support group yesterday"


def test_the_times_of_notes_indexed_before_are_found_on_upgrade(memory):
    note = memory.add("Caroline: I went to a support group yesterday", created_at="2023-05-08T13:56")
    path = memory._c.index.path
    memory.close()
    # The index as it was before the times were found.
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE notes DROP COLUMN stated")
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm011_stated_times'")
    db.commit()
    db.close()
    index = SqliteIndex(path)
    try:
        assert index.stating_times([note.id]) == {note.id}
    finally:
        index.close()
