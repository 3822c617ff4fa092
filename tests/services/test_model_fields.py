"""The `model_fields` setting: the model is asked only for the fields it is to write; the
others are the deterministic method's (recorded as fallbacks, not generated), boxes are
chosen without the model, and no note evolves. "auto" leaves a model the fields the
measured models wrote at least as well as the deterministic method (README,
benchmarks/note_quality.py)."""

from __future__ import annotations

import pytest

from amem_cli import AgentMemory
from amem_cli.config import MEASURED_MODEL_FIELDS, load_settings, model_fields
from amem_cli.errors import UsageError
from amem_cli.llm.fake import ScriptedLLM, evolution_reply
from amem_cli.models import MODEL_FIELDS
from amem_cli.steps import note_context

NOTE = "The reporting job only works with the Postgres driver version 4.2, not 5.0."
RELATED = "The reporting job reads the Postgres replica every night at two."


def eager_model(asked: list[set[str]]):
    """A model that answers every question with fields that pass the checks, and records
    which fields it was asked for."""

    def reply(messages, schema):
        names = set(schema.get("properties", {}))
        if names == {"notes"}:
            asked.append({"evolution"})
            return evolution_reply(messages, schema, lambda older: {
                "context": "The nightly reporting job reads the Postgres replica.", "tags": ["reporting", "replica"]})
        asked.append(names)
        data = {"keywords": ["reporting job", "Postgres driver"], "tags": ["reporting", "postgres"],
                "context": "Postgres driver version for the reporting job."}
        return {k: v for k, v in data.items() if k in names} or None

    return reply


def test_the_model_writes_only_the_fields_it_is_given(vault):
    asked: list[set[str]] = []
    with AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=eager_model(asked)),
                     model_fields="keywords,tags", link_threshold=-1.0) as mem:
        first = mem.add(RELATED)
        note = mem.add(NOTE)
        first, revisions = mem.get(first.id), mem.history(first.id)
    assert asked and all(names == {"keywords", "tags"} for names in asked), asked
    assert note.keywords == ["reporting job", "Postgres driver"] and note.tags == ["reporting", "postgres"]
    assert note.context == note_context(NOTE, note.created_at)
    assert note.metadata["amem_generated"] == ["keywords", "tags"]
    # in the model's place, and recorded so: a person's edit of the text derives them again
    assert note.metadata["amem_fallbacks"] == ["context"] and "context" in note.derived
    assert first.id in note.links and revisions == []  # linked, never evolved


def test_all_fields_ask_the_model_for_each_in_two_calls_a_note(vault):
    asked: list[set[str]] = []
    with AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=eager_model(asked)),
                     model_fields="all", link_threshold=-1.0) as mem:
        first = mem.add(RELATED)
        note = mem.add(NOTE)
        revisions = mem.history(first.id)
    # One call builds the note, one lets the notes it links evolve; no model files boxes.
    assert asked == [{"keywords", "tags", "context"}] * 2 + [{"evolution"}]
    assert note.context == "Postgres driver version for the reporting job."
    assert note.boxes == ["inbox"] and note.filed  # the vault's topics: two notes are none yet
    assert set(note.metadata["amem_generated"]) == {"keywords", "tags", "context"}
    assert revisions and revisions[0].cause == note.id


@pytest.mark.parametrize(
    "flags, expected",
    [
        ({}, set(MEASURED_MODEL_FIELDS)),  # the bundled model
        ({"llm": "llama"}, set(MEASURED_MODEL_FIELDS)),
        ({"model": "/models/qwen2.5-1.5b-instruct-q4_k_m.gguf"}, set(MEASURED_MODEL_FIELDS)),  # a model a user chose
        ({"llm": "openai", "llm_url": "http://localhost:8080/v1"}, set(MEASURED_MODEL_FIELDS)),
        ({"model_fields": "all"}, set(MODEL_FIELDS)),
        ({"model_fields": "context, evolution"}, {"context", "evolution"}),
    ],
)
def test_auto_is_the_measured_set_for_every_model(vault, monkeypatch, flags, expected):
    monkeypatch.delenv("AMEM_LLM")  # the tests' "none"
    assert model_fields(load_settings(dir=str(vault), **flags)) == expected


def test_an_unknown_field_is_one_line_saying_what_to_use(vault):
    with pytest.raises(UsageError, match="unknown model field 'summary'") as e:
        load_settings(dir=str(vault), model_fields="keywords,summary")
    assert "keywords, tags, context, evolution" in e.value.hint
