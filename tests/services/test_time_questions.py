"""The times a note states, resolved at indexing, in the index only; a question about time
favouring the notes that state one. Through the Python API: fake embedder, real SQLite."""

from __future__ import annotations

import sqlite3

import pytest

from amem_cli import AgentMemory
from amem_cli.index.sqlite import SqliteIndex
from amem_cli.retrieve.fields import SearchFields
from test_sequence import add_filler, ids, raw
from conftest import index_rows, internals


def test_a_relative_time_is_resolved_into_the_index_only(memory):
    note = memory.add("Caroline: I went to a support group yesterday", created_at="2023-05-08T13:56")
    plain = memory.add("Caroline: I went to a support group", created_at="2023-05-08T14:30")
    rows = dict(index_rows(memory.path, "SELECT id, stated FROM notes"))
    assert rows == {note.id: "2023-05-07 7 May 2023 Sunday", plain.id: ""}
    assert internals(memory).index.notes.stating_times([note.id, plain.id]) == {note.id}
    # The person's words stand as written: nothing derived reaches the file or the note.
    assert "2023-05-07" not in raw(memory, note.id) and "Sunday" not in raw(memory, note.id)
    assert memory.get(note.id).content == "Caroline: I went to a support group yesterday"


def test_a_time_question_ranks_the_note_that_dates_the_event_first(memory, vault):
    add_filler(memory)
    # The undated note is the closer match (fewer words: more BM25, the same fake vector words).
    undated = memory.add("Melanie: the pottery workshop was fun", created_at="2023-07-15T10:00").id
    dated = memory.add("Melanie: the pottery workshop was fun last Friday", created_at="2023-07-15T11:00").id
    when = "When did Melanie go to the pottery workshop?"
    with AgentMemory(vault, embedder="fake", time_boost=0.0) as plain:
        unboosted = plain.search(when, top_k=2)
    assert ids(unboosted) == [undated, dated]
    with AgentMemory(vault, embedder="fake", time_boost=0.5) as boosted:
        hits = boosted.search(when, top_k=2)
        assert ids(hits) == [dated, undated]
        assert hits[0].score == pytest.approx(unboosted[1].score * 1.5)
        assert hits[0].sources["time"] == {"boost": 0.5}
        assert "time" not in hits[1].sources
        # A question not about time is left alone.
        assert ids(boosted.search("What did Melanie do at the pottery workshop?", top_k=2)) == [undated, dated]


def test_the_times_of_notes_indexed_before_are_found_on_upgrade(memory):
    note = memory.add("Caroline: I went to a support group yesterday", created_at="2023-05-08T13:56")
    path = memory.path / ".amem" / "index.db"
    memory.close()
    # The index as it was before the times were found.
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE notes DROP COLUMN stated")
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm011_stated_times'")
    db.commit()
    db.close()
    index = SqliteIndex(path, SearchFields())
    try:
        assert index.notes.stating_times([note.id]) == {note.id}
    finally:
        index.close()
