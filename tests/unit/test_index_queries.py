"""The index's named queries that services use instead of SQL: note filters, the link
listing, who refers to a note, and the checks `amem doctor` makes. Real SQLite files."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone

import pytest

from amem_cli.index.filters import NoteFilter
from amem_cli.index.sqlite import SqliteIndex
from amem_cli.retrieve.fields import SearchFields
from amem_cli.models import Note


def day(month: int, d: int) -> datetime:
    return datetime(2024, month, d, tzinfo=timezone.utc)


@pytest.fixture
def index(tmp_path):
    ix = SqliteIndex(tmp_path / "index.db", SearchFields())
    yield ix
    ix.close()


def put(index: SqliteIndex, *notes: Note) -> None:
    with index.transaction():
        for note in notes:
            index.notes.upsert(note, f"{note.id}.md")


def test_a_filter_lets_through_the_notes_with_every_tag_and_box_in_the_dates(index):
    put(index,
        Note("a", "apples in january", tags=["fruit", "red"], boxes=["food"], created_at=day(1, 10)),
        Note("b", "apples in february", tags=["fruit"], boxes=["food"], created_at=day(2, 10)),
        Note("c", "apples in march", tags=["red"], created_at=day(3, 10)))
    assert not NoteFilter() and NoteFilter(until=day(1, 1))
    assert index.notes.ids_matching(NoteFilter()) == {"a", "b", "c"}
    assert index.notes.ids_matching(NoteFilter(tags=("#fruit", "red"))) == {"a"}  # a tag as typed, `#` and all
    assert index.notes.ids_matching(NoteFilter(boxes=("food",), since=day(2, 1))) == {"b"}
    assert index.notes.ids_matching(NoteFilter(since=day(1, 10), until=day(2, 10))) == {"a", "b"}  # both ends included
    red = NoteFilter(tags=("red",))
    assert {i for i, _ in index.fulltext.search(["apples"], 10)} == {"a", "b", "c"}
    assert {i for i, _ in index.fulltext.search(["apples"], 10, red)} == {"a", "c"}
    assert {i for i, _ in index.fulltext.substrings(["pples", "ap"], 10, red)} == {"a", "c"}


def test_links_lists_each_link_that_names_a_note_once(index):
    put(index,
        Note("a", "See [[b]] and [[nowhere]].", links=["b", "The Bee"], next="b"),  # two names of b
        Note("b", "Bee.", previous="a", links=["a"], extra={"title": "The Bee"}),
        Note("c", "Sea."))
    assert index.links.all() == [("a", "b", "link"), ("a", "b", "next"), ("a", "b", "text"),
                             ("b", "a", "link"), ("b", "a", "previous")]


def test_referrers_are_the_notes_naming_it_by_a_link_a_pointer_or_a_backlink(index):
    put(index,
        Note("b", "The note.", backlinks=["b"], links=["b"]),  # itself: never its own referrer
        Note("linker", "Links it.", links=["[[b|the note]]"]),
        Note("writer", "Its text names [[b]]."),
        Note("before", "Comes before it.", next="b"),
        Note("holder", "Holds its backlink.", backlinks=["b"]),
        Note("shouter", "Holds its backlink in capitals.", backlinks=["B"]),
        Note("lookalike", "Holds another backlink.", backlinks=["bb", "a b"]),
        Note("other", "Names another note.", links=["c"]))
    assert index.links.referrers("b") == {"linker", "writer", "before", "holder", "shouter"}
    assert index.links.referrers("nobody") == set()


def test_note_paths(index):
    with index.transaction():
        index.notes.upsert(Note("a", "A."), "a.md")
        index.notes.upsert(Note("b", "B."), "sub/b.md")
    assert index.notes.paths() == {"a": "a.md", "b": "sub/b.md"}


def test_a_sound_index_passes_its_own_checks(index):
    put(index, Note("a", "Ann: apples."), Note("b", "Bob: bananas."))
    assert index.integrity_errors() == []
    assert index.fulltext.errors() == {}
    assert index.fulltext.mismatches() == [("notes_fts", [], 0), ("notes_trigram", [], 0)]
    assert index.jobs.duplicates() == []


def test_a_damaged_database_fails_sqlites_own_check(tmp_path):
    path = tmp_path / "index.db"
    index = SqliteIndex(path, SearchFields())
    put(index, Note("a", "Ann: apples.", created_at=day(1, 1)))
    index.close()
    con = sqlite3.connect(path, isolation_level=None)
    roots = dict(con.execute("SELECT name, rootpage FROM sqlite_master WHERE name IN ('notes_speaker', 'notes_created')"))
    con.execute("PRAGMA writable_schema = ON")  # two indexes swap their pages: each now holds the other's rows
    con.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = 'notes_speaker'", [roots["notes_created"]])
    con.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = 'notes_created'", [roots["notes_speaker"]])
    con.close()
    index = SqliteIndex(path, SearchFields())
    assert sorted(index.integrity_errors()) == ["row 1 missing from index notes_created", "row 1 missing from index notes_speaker"]
    index.close()


def test_a_full_text_index_that_does_not_match_its_rows_fails_its_check(index):
    put(index, Note("a", "apples"))
    index.db.execute("UPDATE notes_fts_content SET c2 = 'pears'")  # the text changed under the index
    assert index.fulltext.errors() == {"notes_fts": "database disk image is malformed"}


def test_full_text_rows_missing_and_of_no_note(index):
    put(index, Note("a", "apples"), Note("b", "bananas"))
    index.db.execute("DELETE FROM notes_trigram WHERE id = 'b'")
    index.db.execute("INSERT INTO notes_fts(rowid, id, content) VALUES (99, 'ghost', 'boo')")
    assert index.fulltext.mismatches() == [("notes_fts", [], 1), ("notes_trigram", ["b"], 0)]


def test_duplicate_jobs_of_an_index_without_the_unique_queue(index):
    index.db.execute("DROP TABLE jobs")  # as an older or damaged index may have it
    index.db.execute("CREATE TABLE jobs (seq INTEGER PRIMARY KEY, note_id TEXT, queued TEXT)")
    index.db.conn.executemany("INSERT INTO jobs(note_id, queued) VALUES (?, 'now')", [("a",), ("b",), ("a",), ("a",)])
    assert index.jobs.duplicates() == [("a", 3)]


def test_clearing_vector_deletes_some_or_all(index):
    with index.transaction():
        index.notes.queue_vector_deletes(["a", "b", "c"])
        index.notes.clear_vector_deletes(["b"])
    assert sorted(index.notes.vector_deletes()) == ["a", "c"]
    with index.transaction():
        index.notes.clear_vector_deletes()
    assert index.notes.vector_deletes() == []


def test_queries_over_many_ids_run_a_chunk_at_a_time(index, monkeypatch):
    """More ids than one `IN (...)` list takes (SQLite binds at most 999 values in older
    builds): each query answers for all of them, its lists and later values bound right."""
    import amem_cli.index.connection as connection

    monkeypatch.setattr(connection, "IN_CHUNK", 3)
    notes = [Note(f"n{k}", f"note {k}", created_at=day(1, 1 + k)) for k in range(8)]
    for before, after in zip(notes, notes[1:]):
        before.next, after.previous = after.id, before.id
    notes[2].metadata = {"speaker": "Ann"}
    put(index, *notes)
    ids = [n.id for n in notes] + ["missing"]
    assert index.notes.existing(ids) == {n.id for n in notes}
    assert set(index.notes.get_many(ids)) == {n.id for n in notes}
    assert index.notes.sequence_neighbours(ids)["n4"] == {"n3", "n5"}
    assert index.links.adjacency(ids)["n7"] == {"n6"}  # `{in}` twice: both lists bound to the chunk
    assert index.notes.speaker_notes(["ann"], ids) == {"n2"}  # the names bound after the chunk
