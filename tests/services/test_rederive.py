"""A person's edit of a note's text re-derives what amem derived from the old text (its
model-written keywords, tags and context): at once by the deterministic method, later by
the model, each change a revision; a person's own fields stay as they wrote them."""

from __future__ import annotations

from pathlib import Path

import pytest

from amem_cli import AgentMemory
from amem_cli.llm.fake import ScriptedLLM
from amem_cli.markdown import parse_note, render_note
from amem_cli.steps.construct import note_context
from amem_cli.services.jobs import QUEUED
from conftest import index_rows, internals, queued

OLD = "The staging cluster runs three m5.large nodes in the eu-west-1 region."
NEW = "The staging cluster now runs five c7g.xlarge Graviton nodes in us-east-2."
OLD_FACTS = ("three", "m5.large", "eu-west-1")
# What the scripted model writes for each text.
MODEL = {
    "m5.large": {"keywords": ["m5.large", "eu-west-1"], "tags": ["cluster"],
                 "context": "Staging capacity: three m5.large nodes (eu-west-1 region)."},
    "c7g.xlarge": {"keywords": ["c7g.xlarge", "us-east-2"], "tags": ["graviton"],
                   "context": "Staging moved to five c7g.xlarge Graviton nodes in us-east-2."},
}


def reply(messages, schema):
    """The fields asked for, written for whichever text the prompt holds (boxes: none)."""
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    asked = schema.get("properties", {})
    for marker, fields in MODEL.items():
        if marker in prompt:
            return {k: v for k, v in fields.items() if k in asked} or None
    return None


def model() -> ScriptedLLM:
    return ScriptedLLM(default=reply)


@pytest.fixture
def mem(vault):
    with AgentMemory(vault, embedder="fake", llm=model()) as mem:
        yield mem


def path_of(mem: AgentMemory, note_id: str) -> Path:
    return mem.path / f"{note_id}.md"  # (amem names a note's file after its id)


def save(path: Path, edit) -> bytes:
    """Change the file as an editor would (read, change, write in place); returns the bytes saved."""
    note = parse_note(path.read_text(encoding="utf-8"))
    edit(note)
    data = render_note(note).encode("utf-8")
    path.write_bytes(data)
    return data


def new_text(note):
    note.content = NEW


def words_of(note) -> str:
    return " ".join([*note.keywords, *note.tags, note.context, *note.boxes]).lower()


def test_an_edit_of_the_text_derives_the_models_fields_again_at_once(mem):
    note = mem.add(OLD)
    assert note.generated == ["keywords", "tags", "context"]
    assert all(fact in words_of(note) for fact in OLD_FACTS)
    save(path_of(mem, note.id), new_text)
    mem.sync()
    after = parse_note(path_of(mem, note.id).read_text(encoding="utf-8"))
    assert after.content == NEW
    assert not any(fact in words_of(after) for fact in OLD_FACTS)
    assert after.context == note_context(NEW, note.created_at)  # the deterministic method's, meanwhile
    assert set(after.derived) == {"keywords", "tags", "context"} and after.generated == []
    assert after.boxes == note.boxes and after.filed  # its box, a topic of the vault, stays until a rebuild
    assert mem.get(note.id).context == after.context  # the index holds what the file holds
    # The model's work is queued, and said so in the file (the queue is in the index).
    assert QUEUED in after.metadata and queued(mem) == [note.id]
    [revision] = mem.history(note.id)
    assert revision.cause == "edit" and revision.new_context == after.context


def test_the_change_is_a_revision_undo_puts_back_the_persons_save(mem):
    note = mem.add(OLD)
    saved = save(path_of(mem, note.id), new_text)
    mem.sync()
    assert path_of(mem, note.id).read_bytes() != saved
    mem.undo(note.id)
    assert path_of(mem, note.id).read_bytes() == saved
    mem.sync()  # amem's own write is not taken for another edit
    assert path_of(mem, note.id).read_bytes() == saved
    assert mem.history(note.id) == []


def test_processing_the_queue_writes_the_models_fields_for_the_new_text(mem):
    note = mem.add(OLD)
    saved = save(path_of(mem, note.id), new_text)
    mem.sync()
    assert mem.process() == [note.id]
    after = parse_note(path_of(mem, note.id).read_text(encoding="utf-8"))
    assert (after.keywords, after.tags, after.context) == (
        MODEL["c7g.xlarge"]["keywords"], MODEL["c7g.xlarge"]["tags"], MODEL["c7g.xlarge"]["context"])
    assert after.generated == ["keywords", "tags", "context"]
    assert QUEUED not in after.metadata and queued(mem) == []
    # Both changes are revisions; one undo gives back the person's save, as they wrote it.
    assert [(r.cause, r.model) for r in mem.history(note.id)] == [("edit", None), ("edit", "fake")]
    mem.undo(note.id)
    assert path_of(mem, note.id).read_bytes() == saved and mem.history(note.id) == []


def test_the_model_does_not_overwrite_fields_derived_again_unless_it_writes_them_and_undo_works(vault):
    """The issue's edit: the fields derived again at once stay, but for those the model
    writes (`model_fields`: the judged defaults); undo then brings back the person's save."""
    with AgentMemory(vault, embedder="fake", llm=model(), model_fields="tags") as mem:
        note = mem.add(OLD)
        saved = save(path_of(mem, note.id), new_text)
        mem.sync()
        rederived = mem.get(note.id)
        assert "c7g.xlarge" in " ".join(rederived.keywords)
        assert mem.process() == [note.id]
        after = parse_note(path_of(mem, note.id).read_text(encoding="utf-8"))
        assert after.keywords == rederived.keywords and after.context == rederived.context  # kept
        assert after.tags == MODEL["c7g.xlarge"]["tags"] and after.generated == ["tags"]  # the model's field
        mem.undo(note.id)
        assert path_of(mem, note.id).read_bytes() == saved


def test_fields_a_person_gave_are_never_touched(mem):
    note = mem.add(OLD, keywords=["staging", "m5.large"], context="Our staging cluster (three m5.large nodes).")
    assert note.generated == ["tags"]
    save(path_of(mem, note.id), new_text)
    mem.sync()
    after = mem.get(note.id)
    assert after.keywords == ["staging", "m5.large"] and after.context == "Our staging cluster (three m5.large nodes)."
    assert after.tags != ["cluster"] and "tags" in after.derived


def test_a_derived_field_edited_in_the_same_save_becomes_the_persons(mem):
    note = mem.add(OLD)
    mine = "Staging moved to Graviton in us-east-2."

    def text_and_context(n):
        n.content, n.context = NEW, mine

    save(path_of(mem, note.id), text_and_context)
    mem.sync()
    after = parse_note(path_of(mem, note.id).read_text(encoding="utf-8"))
    assert after.context == mine and "context" not in after.derived
    assert not any(fact in " ".join(after.keywords + after.tags).lower() for fact in OLD_FACTS)
    save(path_of(mem, note.id), lambda n: setattr(n, "content", NEW + " Cost is down 30%."))
    mem.sync()
    assert mem.get(note.id).context == mine  # theirs from then on


def test_an_edit_of_the_frontmatter_alone_derives_nothing(mem):
    note, control = mem.add(OLD), mem.add(OLD + " (copy)")
    saved = save(path_of(mem, note.id), lambda n: setattr(n, "tags", ["infra", "staging"]))
    save(path_of(mem, control.id), new_text)  # seen by the same sync, and derived again
    mem.sync()
    assert path_of(mem, note.id).read_bytes() == saved
    assert mem.get(note.id).tags == ["infra", "staging"]
    assert mem.history(note.id) == [] and queued(mem) == [control.id]


def test_a_pinned_note_is_left_alone(mem):
    note, control = mem.add(OLD), mem.add(OLD + " (copy)")

    def pin_and_edit(n):
        n.content, n.extra["pinned"] = NEW, True

    saved = save(path_of(mem, note.id), pin_and_edit)
    save(path_of(mem, control.id), new_text)
    mem.sync()
    assert path_of(mem, note.id).read_bytes() == saved
    assert mem.history(note.id) == [] and queued(mem) == [control.id]


def test_without_a_model_the_deterministic_fields_stay_and_nothing_is_queued(vault):
    with AgentMemory(vault, embedder="fake", llm=model()) as mem:
        note = mem.add(OLD)
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        save(path_of(mem, note.id), new_text)
        mem.sync()
        after = parse_note(path_of(mem, note.id).read_text(encoding="utf-8"))
        assert not any(fact in words_of(after) for fact in OLD_FACTS)
        assert QUEUED not in after.metadata and queued(mem) == []
        # Still amem's: the next edit derives them again.
        save(path_of(mem, note.id), lambda n: setattr(n, "content", OLD))
        mem.sync()
        assert "m5.large" in " ".join(mem.get(note.id).keywords)


def test_a_save_while_amem_rewrites_is_kept_and_derived_from(mem, monkeypatch):
    note = mem.add(OLD)
    path = path_of(mem, note.id)
    save(path, new_text)
    later = NEW + " Reserved instances from March."
    write_many = internals(mem).vault.write_many
    saves: list[bytes] = []

    def person_saves_first(items):
        if not saves:  # the person saves again between amem's read and its write
            saves.append(save(path, lambda n: setattr(n, "content", later)))
        return write_many(items)

    monkeypatch.setattr(internals(mem).vault, "write_many", person_saves_first)
    mem.sync()
    monkeypatch.undo()
    after = parse_note(path.read_text(encoding="utf-8"))
    assert after.content == later and after.context == note_context(later, note.created_at)
    [revision] = mem.history(note.id)  # the try that met the save left none
    mem.undo(note.id)
    assert path.read_bytes() == saves[0]


def test_a_person_who_keeps_saving_keeps_their_bytes(mem, monkeypatch):
    note = mem.add(OLD)
    path = path_of(mem, note.id)
    save(path, new_text)
    write_many = internals(mem).vault.write_many
    saves: list[bytes] = []

    def person_saves_first(items):
        saves.append(save(path, lambda n: setattr(n, "content", f"{NEW} Save {len(saves)}.")))
        return write_many(items)

    monkeypatch.setattr(internals(mem).vault, "write_many", person_saves_first)
    mem.sync()  # no error: the person's save wins
    monkeypatch.undo()
    assert path.read_bytes() == saves[-1]
    # (read without a sync, which would derive from the last save)
    assert index_rows(mem.path, f"SELECT seq FROM revisions WHERE note_id = '{note.id}'") == []
