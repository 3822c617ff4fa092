"""`Doctor`: each kind of inconsistency is found by `check` and mended by `fix`, from the
files, without touching a note's text. Real temp vault, fake embedder, real SQLite and Chroma."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from amem_cli.index.vectors import DETERMINISTIC_VECTOR
from amem_cli.markdown import parse_note, render_note
from amem_cli.models import Note
from conftest import index_rows, internals
from conftest import queued as queued_ids

from amem_cli import AgentMemory
from amem_cli.llm.fake import ScriptedLLM, schema_example


def write(mem, note: Note) -> None:
    (mem.path / f"{note.id}.md").write_text(render_note(note), encoding="utf-8")


def settle(mem) -> None:
    """Index and embed what is on disk, as any command would."""
    mem.sync()
    internals(mem).indexer.flush_vectors()


def contents(mem) -> dict[str, str]:
    """Every note's own text, from its file."""
    return {p.stem: parse_note(p.read_text(encoding="utf-8")).content for p in mem.path.glob("*.md")}


def fixed_and_consistent(mem, *expected_kinds: str) -> list[str]:
    """check finds every expected kind; fix mends all; nothing's text changed; returns what fix did."""
    found = mem.doctor()
    assert not found.ok
    assert set(expected_kinds) <= found.kinds(), found.problems
    texts = contents(mem)
    repaired = mem.doctor(fix=True)
    assert repaired.ok, repaired.problems
    assert repaired.fixed
    assert contents(mem) == texts
    assert mem.doctor().ok
    return repaired.fixed


@pytest.fixture
def three(memory):
    """a links b (b has the backlink), c stands alone; indexed and embedded. Written as
    amem writes notes (with an `updated` time: a file without one is a person's, whose
    work is queued when it is first indexed)."""
    at = datetime(2025, 1, 1, tzinfo=timezone.utc)
    write(memory, Note("a", "Alpha about apples", links=["b"], updated_at=at))
    write(memory, Note("b", "Beta about bananas", backlinks=["a"], updated_at=at))
    write(memory, Note("c", "Gamma about cherries", updated_at=at))
    settle(memory)
    return memory


def test_consistent_vault_is_ok(three):
    report = three.doctor()
    assert report.ok and report.problems == [] and report.notes == 3
    assert report.summary() == "consistent: 3 notes"
    assert report.to_dict()["ok"] is True


def test_added_notes_are_consistent(memory):
    for text in ("tea with Alice", "coffee with Bob", "tea and coffee with Alice and Bob"):
        memory.add(text)
    assert memory.doctor().ok


def test_temp_file_of_an_interrupted_write(three):
    tmp = three.path / ".a.md.k2j4h5g6.tmp"
    tmp.write_text("half a note")
    assert [p.subject for p in three.doctor().problems] == [".a.md.k2j4h5g6.tmp"]
    fixed = fixed_and_consistent(three, "temp_file")
    assert not tmp.exists() and fixed == ["removed .a.md.k2j4h5g6.tmp"]


def test_file_deleted_behind_the_index(three):
    (three.path / "c.md").unlink()
    fixed_and_consistent(three, "orphaned_index")
    assert "c" not in [n.id for n in three.notes()] and "c" not in internals(three).vectors.ids()


def test_file_added_and_edited_behind_the_index(three):
    write(three, Note("d", "Delta about dates"))
    (three.path / "c.md").write_text(render_note(Note("c", "Gamma about cherries, edited")), encoding="utf-8")
    fixed_and_consistent(three, "unindexed_file", "stale_index")
    assert three.get("c").content == "Gamma about cherries, edited"
    assert "d" in internals(three).vectors.ids()


def test_note_row_without_its_file_rows(three):
    c = internals(three)
    with c.index.transaction():
        c.index.db.execute("DELETE FROM files WHERE path = 'c.md'")
        c.index.db.execute("UPDATE notes SET path = 'gone.md' WHERE id = 'c'")
    fixed_and_consistent(three, "unindexed_file")
    assert c.index.notes.path_of("c") == "c.md"


def test_vectors_missing_stale_and_orphaned(three):
    c = internals(three)
    c.vectors.delete(["a"])
    c.vectors.upsert(["ghost"], c.embedder.embed(["ghost"]))
    with c.index.transaction():
        c.index.db.execute("UPDATE notes SET text_hash = 'other' WHERE id = 'b'")
    c.indexer._wrote_vectors()
    fixed = fixed_and_consistent(three, "missing_vector", "orphaned_vector", "stale_vector")
    assert sorted(c.vectors.ids()) == ["a", "b", "c"]
    assert "removed 1 vector of no note" in fixed


def test_a_second_vector_belongs_to_its_note_and_an_orphaned_one_goes(three):
    c = internals(three)
    write(three, Note("d", "Delta about dates", context="A fruit.", metadata={"amem_generated": ["context"]}))
    settle(three)
    assert sorted(c.vectors.ids()) == ["a", "b", "c", "d", "d" + DETERMINISTIC_VECTOR]
    assert three.doctor().ok
    c.vectors.upsert(["ghost" + DETERMINISTIC_VECTOR], c.embedder.embed(["ghost"]))
    c.indexer._wrote_vectors()
    fixed_and_consistent(three, "orphaned_vector")
    assert sorted(c.vectors.ids()) == ["a", "b", "c", "d", "d" + DETERMINISTIC_VECTOR]


def test_full_text_row_missing(three):
    c = internals(three)
    with c.index.transaction():
        c.index.db.execute("DELETE FROM notes_fts WHERE id = 'b'")
    fixed_and_consistent(three, "fts_mismatch")
    assert [i for i, _ in c.index.fulltext.search(["bananas"], 5)] == ["b"]


def test_embedder_mismatch_rebuilds(three):
    c = internals(three)
    with c.index.transaction():
        c.index.set_meta("embedder", "some-other-model:384")
    fixed = fixed_and_consistent(three, "embedder_mismatch")
    assert c.index.get_meta("embedder") == c.embedder.identity
    assert any("rebuilt the index" in f for f in fixed)


def test_missing_and_stale_backlinks(three, monkeypatch):
    # The sync that sees such saves mends them now (tests/reliability/test_racing_saves.py):
    # here as an amem before that left them, for doctor to find.
    monkeypatch.setattr(internals(three).indexer, "_on_saved", None)
    write(three, Note("b", "Beta about bananas"))  # lost a's backlink
    write(three, Note("c", "Gamma about cherries", backlinks=["b"]))  # b does not link c
    settle(three)
    fixed_and_consistent(three, "missing_backlink", "stale_backlink")
    assert three.get("b").backlinks == ["a"] and three.get("c").backlinks == []


def test_a_dangling_link_is_reported_and_kept(three):
    """A link is the person's: one naming no note is reported, never removed (it may name
    a note yet to be written). A sequence pointer to nothing is amem's and goes."""
    write(three, Note("c", "Gamma about cherries", links=["nowhere"], next="gone"))
    settle(three)
    assert three.doctor().kinds() == {"dangling_link", "broken_sequence"}
    repaired = three.doctor(fix=True)
    assert [(p.kind, p.subject) for p in repaired.problems] == [("dangling_link", "c")]
    assert repaired.problems[0].hint and repaired.for_a_person
    c = parse_note((three.path / "c.md").read_text(encoding="utf-8"))
    assert c.links == ["nowhere"] and c.next is None


def test_sequence_pointers_are_made_to_agree(three):
    write(three, Note("a", "Alpha about apples", links=["b"], next="b"))  # b names no previous: it gets a
    write(three, Note("c", "Gamma about cherries", previous="b"))  # b names no next: it gets c
    settle(three)
    fixed_and_consistent(three, "broken_sequence")
    a, b, c = (three.get(i) for i in "abc")
    assert (a.next, b.previous, b.next, c.previous) == ("b", "a", "c", "b")


def test_a_contradicted_sequence_pointer_goes(three):
    write(three, Note("a", "Alpha about apples", links=["b"], next="c"))
    write(three, Note("b", "Beta about bananas", backlinks=["a"], next="c"))
    write(three, Note("c", "Gamma about cherries", previous="b"))  # a's claim on c is contradicted
    settle(three)
    fixed_and_consistent(three, "broken_sequence")
    a, b, c = (three.get(i) for i in "abc")
    assert (a.next, b.next, c.previous) == (None, "c", "b")


def test_orphaned_job(three):
    c = internals(three)
    with c.index.transaction():
        c.index.jobs.enqueue(["ghost", "a"], "2025-01-01T00:00:00+00:00")
    report = three.doctor()
    assert [p.kind for p in report.problems] == ["orphaned_job"]
    fixed_and_consistent(three, "orphaned_job")
    assert c.index.jobs.queued() == ["a"]  # the live note's work stays queued


def test_claim_of_a_dead_worker(three):
    c = internals(three)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with c.index.transaction():
        c.index.jobs.enqueue(["a"], "2025-01-01T00:00:00+00:00")
        c.index.db.execute("UPDATE jobs SET claimed_by = ?, lease_until = 9e99",
                           [f"{os.uname().nodename}:{dead.pid}:1"])
    fixed_and_consistent(three, "expired_claim")
    assert c.index.jobs.claims() == [] and c.index.jobs.queued() == ["a"]


def test_a_bad_file_is_a_problem_left_untouched(three):
    """A file amem cannot read is a note the person cannot find: a problem (it was a
    warning, and doctor said "consistent"), named with its line, that --fix leaves to them."""
    bad = three.path / "broken.md"
    bad.write_bytes(b"---\ntags: [unclosed\n---\nbody\n")
    settle(three)
    report = three.doctor(fix=True)
    assert report.fixed == [] and report.for_a_person
    assert [(p.kind, p.subject) for p in report.problems] == [("bad_file", "broken.md")]
    assert report.problems[0].detail.startswith("broken.md:3: bad YAML frontmatter")
    assert bad.read_bytes() == b"---\ntags: [unclosed\n---\nbody\n"


def test_check_changes_nothing(three):
    (three.path / "c.md").unlink()
    db = three.path / ".amem" / "index.db"
    before = index_rows(three.path, "SELECT count(*) FROM notes")
    assert not three.doctor().ok
    assert not three.doctor().ok  # still there: check does not sync
    assert index_rows(three.path, "SELECT count(*) FROM notes") == before
    assert db.exists()


def test_lost_queue_is_rebuilt_from_the_files(vault):
    memory = AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=schema_example))  # a model: its work is queued
    queued = memory.add("tea with Alice, to be linked later", defer=True)
    done = memory.add("coffee with Bob", defer=True)
    assert memory.process(limit=2) == [queued.id, done.id]
    queued = memory.add("tea with Carol, to be linked later", defer=True)
    assert memory.doctor().ok
    index = internals(memory).index
    with index.transaction():
        index.jobs.drop(queued.id)  # as if .amem/ had been deleted with the queue in it
    assert [p.kind for p in memory.doctor().problems] == ["lost_job"]
    fixed_and_consistent(memory, "lost_job")
    assert queued_ids(memory) == [queued.id]
    assert memory.process() == [queued.id]
    assert "amem_queued" not in memory.get(queued.id).metadata and "amem_queued" not in memory.get(done.id).metadata
    assert memory.doctor().ok
    memory.close()


def test_revision_recorded_but_never_written(three):
    """A kill between recording an evolution and writing the file leaves a revision of a
    change that never happened: doctor drops it, so `undo` and `history` stay truthful."""
    c = internals(three)
    c.notes.revise("c", {"context": "Cherries, after the apples."}, cause="a", model="fake")
    before = (three.path / "c.md").read_bytes()
    with c.index.transaction():
        c.index.revisions.add({"note_id": "c", "cause": "a", "model": "fake", "at": "2025-01-01T00:00:00+00:00",
                              "old_context": "", "new_context": "never", "old_tags": "[]", "new_tags": "[]",
                              "old_bytes": before, "new_hash": "not-written"})
    fixed = fixed_and_consistent(three, "unapplied_revision")
    assert [r.new_context for r in three.history("c")] == ["Cherries, after the apples."]
    assert any("never written" in f for f in fixed)
    assert three.undo("c").context == ""


def test_a_refused_evolution_leaves_no_revision(three, monkeypatch):
    from amem_cli.errors import ConflictError

    def refuse(*args, **kwargs):
        raise ConflictError("c.md changed on disk while amem was working on it")

    monkeypatch.setattr(internals(three).vault, "write_text", refuse)
    with pytest.raises(ConflictError):
        internals(three).notes.revise("c", {"context": "Cherries, after the apples."}, cause="a", model="fake")
    assert three.history("c") == []
