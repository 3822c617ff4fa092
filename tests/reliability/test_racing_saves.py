"""A save from an editor's old buffer undoes what amem wrote into a note (round 3): the
backlink of a note that links it, the `next` of a sequence, a backlink amem took out,
the mark that its work is owed. On bae2764 nothing noticed: after 80 racing adds doctor
found lost jobs and missing and stale backlinks. Now the next sync notices the save and
mends the links from the other notes' files; the person's text stays as they saved it."""

from __future__ import annotations

from dataclasses import replace

from conftest import internals

from amem_cli import AgentMemory
from amem_cli.llm.fake import ScriptedLLM, schema_example
from amem_cli.markdown import parse_note


def _file(memory, note_id):
    return memory.path / internals(memory).notes.path_of(note_id)


def _saved_from_old_buffer(path, buffer: bytes, words: bytes = b"edited by hand") -> bytes:
    """The editor's save: the bytes it read before amem wrote, with the person's change."""
    saved = buffer.replace(b"\n---\n", b"\n---\n" + words + b": ", 1)
    path.write_bytes(saved)
    return saved


def settle(memory) -> None:
    """The next command: a sync, and the person's new text embedded (as a search does)."""
    memory.sync()
    internals(memory).indexer.flush_vectors()


def _person_text(path) -> str:
    return parse_note(path.read_text(encoding="utf-8")).content


def test_a_backlink_a_save_undid_is_mended_at_the_next_sync(memory):
    hub = memory.add("The hub note about the lighthouse.")
    path = _file(memory, hub.id)
    buffer = path.read_bytes()  # the editor reads the hub...
    other = memory.add("A second note.")
    internals(memory).writer.update(other.id, lambda n: replace(n, links=[hub.id]), embed=False)
    internals(memory).writer.update(hub.id, lambda n: replace(n, backlinks=[other.id]), embed=False)
    assert memory.get(hub.id).backlinks == [other.id]
    _saved_from_old_buffer(path, buffer)  # ...and saves from what it read: the backlink is gone
    settle(memory)
    assert memory.get(hub.id).backlinks == [other.id]  # on bae2764: [] (doctor: missing_backlink)
    assert _person_text(path).startswith("edited by hand: The hub note")
    assert memory.doctor().ok, memory.doctor().problems


def test_a_next_a_save_undid_is_mended_and_an_insertion_kept(memory):
    first = memory.add("Turn one.")
    third = memory.add("Turn three.", after=first.id)
    path = _file(memory, first.id)
    buffer = path.read_bytes()  # first.next is third
    second = memory.add("Turn two.", after=first.id)  # goes between: first -> second -> third
    _saved_from_old_buffer(path, buffer)  # first.next: third again
    settle(memory)
    assert memory.get(first.id).next == second.id  # on bae2764: third (doctor: broken_sequence)
    assert memory.get(second.id).next == third.id and memory.get(third.id).previous == second.id
    assert _person_text(path).startswith("edited by hand: Turn one.")
    assert memory.doctor().ok, memory.doctor().problems


def test_a_backlink_amem_took_out_and_a_save_put_back_goes_again(memory):
    hub = memory.add("The hub note about the lighthouse.")
    gone = memory.add("A note to be removed.")
    internals(memory).writer.update(gone.id, lambda n: replace(n, links=[hub.id]), embed=False)
    internals(memory).writer.update(hub.id, lambda n: replace(n, backlinks=[gone.id]), embed=False)
    path = _file(memory, hub.id)
    buffer = path.read_bytes()
    memory.delete(gone.id)  # takes the backlink out of the hub
    _saved_from_old_buffer(path, buffer)  # and the old buffer puts it back
    settle(memory)
    assert memory.get(hub.id).backlinks == []  # on bae2764: the removed note's id (doctor: stale_backlink)
    assert memory.doctor().ok, memory.doctor().problems


def test_work_a_save_says_is_owed_is_queued_again(vault):
    memory = AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=schema_example))  # a model: its work is queued
    note = memory.add("A note whose work is deferred.", defer=True)
    path = _file(memory, note.id)
    buffer = path.read_bytes()  # says `amem_queued`
    assert memory.process() == [note.id]
    assert b"amem_queued" not in path.read_bytes()
    _saved_from_old_buffer(path, buffer)
    settle(memory)
    assert internals(memory).index.jobs.queued() == [note.id]  # on bae2764: none (doctor: lost_job)
    assert memory.doctor().ok, memory.doctor().problems
    assert memory.process() == [note.id]
    assert b"amem_queued" not in path.read_bytes() and _person_text(path).startswith("edited by hand")
    memory.close()


def test_a_person_who_keeps_saving_is_left_alone_until_the_save_after(memory, monkeypatch):
    """The mending write meets yet another save: it gives way (the person's bytes stay),
    and the sync that sees that save mends it."""
    from amem_cli.errors import ConflictError

    hub = memory.add("The hub note about the lighthouse.")
    path = _file(memory, hub.id)
    buffer = path.read_bytes()
    other = memory.add("A second note.")
    internals(memory).writer.update(other.id, lambda n: replace(n, links=[hub.id]), embed=False)
    internals(memory).writer.update(hub.id, lambda n: replace(n, backlinks=[other.id]), embed=False)
    saved = _saved_from_old_buffer(path, buffer)
    real = internals(memory).writer.update

    def busy(*args, **kwargs):
        raise ConflictError("being saved")

    monkeypatch.setattr(internals(memory).writer, "update", busy)
    settle(memory)
    assert path.read_bytes() == saved
    monkeypatch.setattr(internals(memory).writer, "update", real)
    _saved_from_old_buffer(path, buffer, b"saved again")
    settle(memory)
    assert memory.get(hub.id).backlinks == [other.id]
