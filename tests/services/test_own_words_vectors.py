"""A note a model wrote fields of has a second vector, of the note in its own words, and
its keyword index holds the deterministic method's fields in place of the model's: the
model's fields add a way to find it and never move it away from what it says."""

from __future__ import annotations

import pytest

from amem_cli import AgentMemory
from amem_cli.embed.fake import HashEmbedder
from amem_cli.index.migrations import m007_own_words_vectors
from amem_cli.index.vectors import DETERMINISTIC_VECTOR
from amem_cli.llm.fake import ScriptedLLM
from amem_cli.markdown import parse_note, render_note
from amem_cli.steps.construct import cosine
from conftest import internals

PAINTING = "Melanie painted a sunrise over the lake last weekend."
# What a small model writes for any note: grounded keywords, a vague context, tags of its words.
VAGUE = {"keywords": ["sunrise"], "tags": ["lake", "weekend"], "context": "Melanie talks about her painting of a sunrise last weekend."}


def vague_model() -> ScriptedLLM:
    return ScriptedLLM(default=lambda messages, schema: VAGUE if "context" in schema.get("properties", {}) else None)


@pytest.fixture
def mem(vault):
    with AgentMemory(vault, embedder="fake", llm=vague_model()) as mem:
        yield mem


def stored(mem: AgentMemory) -> set[str]:
    return set(internals(mem).vectors.ids())


def test_a_models_fields_never_take_a_note_further_from_its_own_words(vault, tmp_path):
    query = "a sunrise painted over the lake"
    (tmp_path / "plain").mkdir()
    with AgentMemory(tmp_path / "plain", embedder="fake") as plain:  # no model
        plain.add(PAINTING)
        without_model = plain.search(query, top_k=1, mode="semantic")[0].sources["semantic"]["score"]
    with AgentMemory(vault, embedder="fake", llm=vague_model()) as mem:
        note = mem.add(PAINTING)
        assert note.generated == ["keywords", "tags", "context"]
        assert stored(mem) == {note.id, note.id + DETERMINISTIC_VECTOR}
        hit = mem.search(query, top_k=1, mode="semantic")[0]
        whole = internals(mem).vectors.vectors_of([note.id])[note.id]
        # The vector of the model's fields alone is further away; the note's score is not.
        assert cosine(whole, HashEmbedder().embed([query])[0]) < without_model - 0.01
        assert hit.note.id == note.id and hit.sources["semantic"]["score"] == pytest.approx(without_model, abs=1e-6)


def test_each_note_is_listed_once_and_never_crowds_out_others(mem):
    notes = [mem.add(f"{PAINTING} Number {i}.") for i in range(6)]
    hits = mem.search(PAINTING, top_k=6, mode="semantic")
    assert sorted(h.note.id for h in hits) == sorted(n.id for n in notes)
    near = internals(mem).indexer.nearest(HashEmbedder().embed([PAINTING])[0], 6)
    assert len(near) == 6 and len({i for i, _ in near}) == 6


def test_a_note_without_model_fields_has_one_vector(vault):
    with AgentMemory(vault, embedder="fake") as mem:  # the deterministic fields: nobody's words but the note's
        plain = mem.add("Lunch is at noon on Fridays.")
    with AgentMemory(vault, embedder="fake", llm=vague_model()) as mem:
        given = mem.add(PAINTING, keywords=["sunrise"], tags=["art"], context="Melanie's painting.")
        assert given.generated == []
        assert stored(mem) == {plain.id, given.id}


def test_both_vectors_go_with_the_note(mem):
    note, other = mem.add(PAINTING), mem.add("Caroline went to a support group by the lake on Tuesday.")
    mem.delete(note.id)
    assert stored(mem) == {other.id, other.id + DETERMINISTIC_VECTOR}


def test_a_person_who_takes_the_fields_over_leaves_one_vector(mem):
    note = mem.add(PAINTING)
    path = mem.path / f"{note.id}.md"
    mine = parse_note(path.read_text(encoding="utf-8"))
    mine.metadata.pop("amem_generated")
    path.write_text(render_note(mine), encoding="utf-8")
    mem.sync()
    mem.search("sunrise", mode="semantic")  # a search embeds what changed
    assert stored(mem) == {note.id}


def test_an_index_made_before_embeds_model_written_notes_again(mem):
    enriched = mem.add(PAINTING)
    with AgentMemory(mem.path, embedder="fake") as plain_mem:
        plain = plain_mem.add("Lunch is at noon on Fridays.")
    index = internals(mem).index
    assert index.notes.unembedded() == []
    m007_own_words_vectors(index.db)
    assert index.notes.unembedded() == [enriched.id]
    assert plain.id not in index.notes.unembedded()


def keyword_score(mem: AgentMemory, query: str) -> float | None:
    hits = mem.search(query, top_k=1, mode="keyword")
    return hits[0].sources["keyword"]["score"] if hits else None


def test_a_note_a_model_labelled_ranks_by_keywords_as_it_would_without_the_model(vault, tmp_path):
    query = "Who painted the sunrise over the lake?"
    (tmp_path / "plain").mkdir()
    with AgentMemory(tmp_path / "plain", embedder="fake") as plain:  # no model
        note = plain.add(PAINTING)
        without_model = keyword_score(plain, query)
    assert note.keywords and note.tags  # the deterministic fields the keyword index holds
    with AgentMemory(vault, embedder="fake", llm=vague_model()) as mem:
        assert mem.add(PAINTING).generated == ["keywords", "tags", "context"]
        assert keyword_score(mem, query) == pytest.approx(without_model)
        assert keyword_score(mem, "life events") is None  # the model's tags, no word of the note
