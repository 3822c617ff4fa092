"""A note a person drops into the vault by hand: without a date it takes its file's time
(its file left as it is), and its work is queued like an added note's, unless pinned."""

from __future__ import annotations

import os
from datetime import datetime, timezone

import pytest

from amem_cli import AgentMemory
from amem_cli.markdown import parse_note, render_note
from amem_cli.models import Note
from conftest import internals, queued

MTIME = datetime(2024, 3, 5, 14, 30, 7, tzinfo=timezone.utc)
TEXT = "Tomatoes need six hours of sun and deep watering twice a week in July.\n"


@pytest.fixture
def mem(vault):
    m = AgentMemory(vault, embedder="fake", llm="none")
    yield m
    m.close()


def drop(vault, name: str, text: str, when: datetime = MTIME):
    path = vault / name
    path.write_text(text, encoding="utf-8")
    os.utime(path, (when.timestamp(), when.timestamp()))
    return path


def test_a_note_without_a_date_takes_its_files_time_and_its_file_is_left_as_it_is(mem, vault):
    path = drop(vault, "garden.md", TEXT)
    [note] = mem.notes()
    assert note.created_at == MTIME
    assert path.read_text(encoding="utf-8") == TEXT


def test_the_date_stays_when_the_person_edits_the_file(mem, vault):
    drop(vault, "garden.md", TEXT)
    mem.sync()
    drop(vault, "garden.md", TEXT + "Mulch keeps the water in.\n", when=datetime(2024, 6, 1, tzinfo=timezone.utc))
    assert mem.get("garden").created_at == MTIME


def test_its_work_is_queued_and_done_like_an_added_notes(mem, vault):
    other = mem.add("Watering tomatoes deeply twice a week keeps their roots down.")
    drop(vault, "garden.md", TEXT)
    mem.sync()
    assert queued(mem) == ["garden"]
    assert mem.process() == ["garden"]
    note = mem.get("garden")
    assert note.keywords and note.tags and note.boxes  # built, as an added note is
    assert other.id in note.links  # and linked
    assert note.created_at == MTIME  # written into the file now that amem writes it anyway
    assert parse_note((vault / "garden.md").read_text(encoding="utf-8")).created_at == MTIME
    mem.reindex()  # what amem wrote is not a person's note: rebuilt, it queues nothing
    assert queued(mem) == []


def test_a_pinned_note_is_left_alone(mem, vault):
    drop(vault, "garden.md", "---\npinned: true\n---\n" + TEXT)
    mem.sync()
    assert queued(mem) == []
    assert mem.get("garden").created_at == MTIME


def test_a_note_pinned_after_it_was_queued_is_left_alone(mem, vault):
    path = drop(vault, "garden.md", TEXT)
    mem.sync()
    written = "---\npinned: true\n---\n" + TEXT
    path.write_text(written, encoding="utf-8")
    mem.sync()
    assert mem.process() == ["garden"]  # the job is done: nothing
    assert path.read_text(encoding="utf-8") == written


def test_a_note_amem_wrote_queues_nothing_when_indexed_again(mem, vault):
    at = datetime(2025, 1, 1, tzinfo=timezone.utc)
    (vault / "a.md").write_text(render_note(Note("a", "Alpha", created_at=at, updated_at=at)), encoding="utf-8")
    mem.sync()
    assert queued(mem) == []


def test_queued_work_goes_with_its_file_and_follows_a_renamed_one(mem, vault):
    path = drop(vault, "garden.md", "---\nid: garden\nupdated: '2025-01-01T00:00:00+00:00'\n---\n" + TEXT)
    drop(vault, "pond.md", "Frogs came back to the pond.\n")
    mem.sync()
    index = internals(mem).index
    with index.transaction():  # amem's own note, its work queued (as `add --defer` leaves it)
        index.jobs.enqueue(["garden"], "2025-01-01T00:00:00+00:00")
    assert sorted(queued(mem)) == ["garden", "pond"]
    path.rename(vault / "allotment.md")  # it names its id: the same note
    (vault / "pond.md").unlink()
    mem.sync()
    assert queued(mem) == ["garden"]
    internals(mem).indexer.flush_vectors()
    assert mem.doctor().ok  # no job left of a note that is gone
