"""A note longer than an embedder's window is embedded whole, as passages: a vector for
each, the note found by the best of them. Fake embedder, real SQLite, real local Chroma."""

from __future__ import annotations

import sqlite3

from amem_cli import AgentMemory
from amem_cli.index.sqlite import SqliteIndex
from amem_cli.retrieve.fields import SearchFields, embedding_text, embedding_texts
from amem_cli.models import Note
from amem_cli.text import MAX_PASSAGES, PASSAGE_WORDS, passages

from conftest import internals

FILLER = "The assistant went on about general advice for travellers and their luggage. "  # 12 words
ENDING = "At the very end it named the Kasbah Tamsna riad in Marrakech, with its quiet rooftop pool."


def long_note(words: int = 600) -> str:
    return FILLER * (words // 12) + ENDING


def stored(mem: AgentMemory) -> set[str]:
    return set(internals(mem).vectors.ids())


def test_passages_cut_at_sentence_ends_and_keep_every_word():
    text = long_note(400)
    parts = passages(text)
    assert len(parts) == 3 and all(len(p.split()) <= PASSAGE_WORDS for p in parts)
    assert " ".join(parts).split() == text.split()  # nothing lost, nothing doubled
    assert all(p.endswith(".") for p in parts)  # each ends where a sentence does
    assert passages("a short note") == ["a short note"]
    one_sentence = "word " * (PASSAGE_WORDS * 2 + 5)  # no sentence end: cut at the passage size
    assert [len(p.split()) for p in passages(one_sentence)] == [PASSAGE_WORDS, PASSAGE_WORDS, 5]
    assert len(passages("x. " * (PASSAGE_WORDS * (MAX_PASSAGES + 3)))) == MAX_PASSAGES


def test_the_first_passage_carries_the_notes_own_fields():
    note = Note("n", long_note(), keywords=["riad"], tags=["travel"], context="Advice for a trip.")
    first, *rest = embedding_texts(note)
    assert first.startswith(FILLER) and first.endswith("Advice for a trip.\nKeywords: riad\nTags: travel")
    assert rest and rest[-1].endswith(ENDING)
    short = Note("s", "Bob is allergic to peanuts", keywords=["Bob"])
    assert embedding_texts(short) == [embedding_text(short)]


def test_a_long_note_is_found_by_words_past_the_window(memory, vault):
    note = memory.add(long_note())
    others = [memory.add(f"{FILLER}Number {i}.") for i in range(3)]
    assert stored(memory) == {note.id, *(f"{note.id}#{n}" for n in range(2, 6)), *(o.id for o in others)}
    hit = memory.search("the riad in Marrakech with a rooftop pool", top_k=1, mode="semantic")[0]
    assert hit.note.id == note.id and hit.score > 0
    # Its vector alone (what was embedded before passages) is further from the question.
    whole = internals(memory).vectors.vectors_of([note.id])[note.id]
    query = internals(memory).embedder.embed(["the riad in Marrakech with a rooftop pool"])[0]
    assert sum(a * b for a, b in zip(whole, query)) < hit.sources["semantic"]["score"] - 0.05


def test_long_notes_passages_never_crowd_other_notes_out_of_the_nearest(memory, monkeypatch):
    longs = [memory.add(f"{long_note()} Trip {i}.") for i in range(2)]  # five vectors each, near the query
    shorts = [memory.add(f"Lunch is at noon on day {i}.") for i in range(3)]
    memory.search("lunch", top_k=1)  # embeds them
    vectors, depths = internals(memory).indexer.vectors(), []
    read = vectors.query
    monkeypatch.setattr(vectors, "query", lambda vs, k: depths.append(k) or read(vs, k))
    query = internals(memory).embedder.embed([FILLER * 20])[0]
    near = internals(memory).indexer.nearest(query, 3)
    # 2k = 6 places hold only the two long notes: read deeper, for k notes.
    assert depths == [6, 12] and len(near) == 3 and {i for i, _ in near[:2]} == {n.id for n in longs}
    assert near[2][0] in {n.id for n in shorts}
    depths.clear()
    assert len(internals(memory).indexer.nearest(query, 1)) == 1 and depths == [2]  # enough notes at once


def test_passages_follow_the_notes_text(memory):
    note = memory.add(long_note())
    internals(memory).notes.update(note.id, lambda n: Note(**{**n.__dict__, "content": "Now a short note."}))
    memory.search("short note", top_k=1)  # the next search embeds what changed
    assert stored(memory) == {note.id}
    longer = memory.add(long_note())
    memory.delete(longer.id, purge=True)
    memory.search("short note", top_k=1)
    assert stored(memory) == {note.id}


def test_long_notes_indexed_before_passages_are_embedded_again(memory):
    big, _ = memory.add(long_note()), memory.add("Bob is allergic to peanuts")
    path = internals(memory).index.path
    memory.close()
    db = sqlite3.connect(path)
    db.execute("UPDATE notes SET embedded_hash = text_hash")
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm012_passages'")
    db.commit()
    db.close()
    index = SqliteIndex(path, SearchFields())
    try:
        assert index.notes.unembedded() == [big.id]
    finally:
        index.close()
