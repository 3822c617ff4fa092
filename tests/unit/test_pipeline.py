"""The A-MEM steps with scripted model replies: valid output, garbage, cut-off JSON,
oversized fields, loops, unknown ids, user-given fields, fallbacks, and the no-LLM path."""

from __future__ import annotations

import json
from datetime import datetime
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amem_cli.embed.fake import HashEmbedder
from amem_cli.llm import LLMError, prompts
from amem_cli.llm.fake import NoLLM, ScriptedLLM
from amem_cli.steps import (
    Candidate,
    Evolution,
    Neighbour,
    NewNote,
    choose_links,
    construct,
    decide_evolution,
    decide_evolutions,
    extract_keywords,
    propose_evolution,
    note_context,
)
from amem_cli.steps.construct import candidate_phrases, tags_from_keywords
from amem_cli.steps import boxes as boxes_step
from amem_cli.steps._text import grounded, slugify
from amem_cli.steps.boxes import groups, name, namable, nearest, note_terms
from amem_cli.text import STOPWORDS

NOTE = (
    "The deploy failed because the Postgres migration locked the users table for ten minutes. "
    "We will run long migrations at night from now on."
)
EMB = HashEmbedder()


# -- construct ----------------------------------------------------------------------------


def test_construct_uses_a_valid_reply():
    llm = ScriptedLLM([
        {
            "keywords": ["Postgres migration", "users table", "deploy"],
            "tags": ["Postgres", "deploys"],
            "context": "A Postgres migration lock made the deploy fail.",
        }
    ])
    c = construct(NOTE, llm=llm, embedder=EMB)
    assert c.keywords == ["Postgres migration", "users table", "deploy"]
    assert c.tags == ["postgres", "deploys"]
    assert c.context == "A Postgres migration lock made the deploy fail."
    assert c.fallbacks == []
    assert c.llm_calls == 1 and c.valid_outputs == [True]
    assert c.sources == {"keywords": "llm", "tags": "llm", "context": "llm"}
    schema = llm.calls[0].schema
    assert set(schema["properties"]) == {"keywords", "tags", "context"}
    assert "Postgres migration locked" in llm.calls[0].prompt


def test_user_given_fields_are_kept_and_only_missing_ones_asked_for():
    llm = ScriptedLLM([{"context": "A migration lock broke the deploy.", "keywords": ["evil"], "tags": ["evil"]}])
    c = construct(NOTE, keywords=["my kw", "Postgres"], tags=["Ops"], llm=llm, embedder=EMB)
    assert c.keywords == ["my kw", "Postgres"]  # kept verbatim, not grounded or replaced
    assert c.tags == ["Ops"]
    assert c.context == "A migration lock broke the deploy."
    assert set(llm.calls[0].schema["properties"]) == {"context"}
    assert c.sources == {"keywords": "user", "tags": "user", "context": "llm"}
    assert "Keywords: my kw, Postgres" in llm.calls[0].prompt


def test_nothing_missing_means_no_call():
    llm = ScriptedLLM([{"keywords": ["x"]}])
    c = construct(NOTE, keywords=["a"], tags=["b"], context="Given.", llm=llm, embedder=EMB)
    assert (c.keywords, c.tags, c.context) == (["a"], ["b"], "Given.")
    assert llm.calls == [] and c.llm_calls == 0 and c.fallbacks == []


def test_user_context_is_kept_even_if_long():
    long = "word " * 80
    c = construct(NOTE, context=long, llm=NoLLM(), embedder=EMB)
    assert c.context == long.strip()


@pytest.mark.parametrize("reply", ["", "I cannot help with that.", "{{{{", "[1, 2, 3]", '{"unrelated": true}', "null"])
def test_garbage_falls_back_on_every_field(reply):
    llm = ScriptedLLM([reply])
    c = construct(NOTE, llm=llm, embedder=EMB)
    assert c.fallbacks == ["keywords", "tags", "context"]
    assert c.llm_calls == 1 and c.valid_outputs == [False]
    assert c.keywords and c.tags
    assert c.context == ""  # "The deploy failed ...": no kind it names, so no context, never its first sentence


def test_truncated_reply_keeps_what_is_complete():
    raw = '{"keywords": ["Postgres migration", "users table", "dep'
    c = construct(NOTE, llm=ScriptedLLM([raw]), embedder=EMB)
    assert c.valid_outputs == [False]
    assert c.keywords == ["Postgres migration", "users table"]
    assert c.fallbacks == ["tags", "context"]


def test_oversized_fields_are_bounded():
    reply = {
        "keywords": ["Postgres"] + ["users table " * 8] + [f"deploy{i}" for i in range(20)],
        "tags": ["database", "x" * 100, "ops", "infra", "more", "even more"],
        "context": "The Postgres migration locked the users table " + "for ten minutes and the deploy failed " * 10,
    }
    c = construct(NOTE, llm=ScriptedLLM([reply]), embedder=EMB)
    assert c.valid_outputs == [True] or c.valid_outputs == [False]
    assert c.keywords == ["Postgres"]  # the long one dropped, deployN not in the text
    assert len(c.tags) <= 3 and all(len(t) <= 24 for t in c.tags)
    assert len(c.context) <= 201 and len(c.context.split()) <= 30


def test_repeated_words_are_collapsed():
    reply = {
        "keywords": ["Postgres Postgres Postgres", "migration migration migration migration"],
        "tags": ["migrations migrations migrations"],
        "context": "The deploy deploy deploy failed because of the Postgres migration.",
    }
    c = construct(NOTE, llm=ScriptedLLM([reply]), embedder=EMB)
    assert c.keywords == ["Postgres", "migration"]
    assert c.tags == ["migrations"]
    assert c.context == "The deploy failed because of the Postgres migration."


def test_repetition_loop_context_falls_back():
    reply = {"keywords": ["Postgres"], "tags": ["migration"], "context": "the the the the the the the the the the the the"}
    c = construct(NOTE, llm=ScriptedLLM([reply]), embedder=EMB)
    assert c.fallbacks == ["context"]


def test_keywords_must_occur_in_the_text():
    reply = {"keywords": ["MySQL", "Kubernetes", "locking", "users tables"], "tags": ["migration"], "context": "x"}
    c = construct(NOTE, llm=ScriptedLLM([reply]), embedder=EMB)
    # "locking" ~ "locked" and "users tables" ~ "users table" by stem; invented ones dropped.
    assert c.keywords == ["locking", "users tables"]


def test_no_grounded_keyword_falls_back():
    reply = {"keywords": ["MySQL", "Kubernetes"], "tags": ["migration"], "context": "A deploy failed on a Postgres lock."}
    c = construct(NOTE, llm=ScriptedLLM([reply]), embedder=EMB)
    assert c.fallbacks == ["keywords"]
    assert c.sources["keywords"] == "fallback"
    assert all(grounded(k, NOTE) for k in c.keywords)


def test_copied_example_tags_are_dropped():
    reply = {"keywords": ["Postgres"], "tags": ["work", "schedule"], "context": "A Postgres lock failed the deploy."}
    c = construct(NOTE, llm=ScriptedLLM([reply]), embedder=EMB)
    assert "tags" in c.fallbacks and "work" not in c.tags


def test_short_or_invented_context_falls_back():
    for ctx in ["Postgres", "Quantum entanglement among galaxies explains stock prices."]:
        reply = {"keywords": ["Postgres"], "tags": ["migration"], "context": ctx}
        c = construct(NOTE, llm=ScriptedLLM([reply]), embedder=EMB)
        assert c.fallbacks == ["context"], ctx


def test_backend_exception_is_an_invalid_output_not_a_crash():
    def boom(messages, schema):
        raise RuntimeError("backend bug")

    c = construct(NOTE, llm=ScriptedLLM([boom]), embedder=EMB)
    assert c.valid_outputs == [False] and c.fallbacks == ["keywords", "tags", "context"]
    assert any("backend bug" in p for p in c.problems)


def test_llm_error_propagates():
    def down(messages, schema):
        raise LLMError("cannot reach the LLM endpoint")

    with pytest.raises(LLMError):
        construct(NOTE, llm=ScriptedLLM([down]), embedder=EMB)


def test_no_llm_path_is_deterministic():
    a = construct(NOTE, llm=NoLLM(), embedder=EMB)
    b = construct(NOTE, llm=None, embedder=HashEmbedder())
    assert (a.keywords, a.tags, a.context) == (b.keywords, b.tags, b.context)
    assert a.llm_calls == 0 and a.valid_outputs == []
    assert a.fallbacks == ["keywords", "tags", "context"]
    assert 1 <= len(a.keywords) <= 5
    assert a.context == ""


def test_empty_content_makes_no_call():
    llm = ScriptedLLM([{"keywords": ["x"]}])
    c = construct("   ", llm=llm, embedder=EMB)
    assert llm.calls == [] and c.keywords == [] and c.context == ""


# -- deterministic fallbacks ---------------------------------------------------------------


def test_candidate_phrases_have_no_stopword_edges_and_do_not_cross_punctuation():
    cands = candidate_phrases("The Bank of America, in New York. A tower; of the city")
    assert "Bank of America" in cands
    assert not any(c.split()[0].lower() in STOPWORDS or c.split()[-1].lower() in STOPWORDS for c in cands)
    assert not any("America in" in c or "York A" in c for c in cands)


def test_extract_keywords_is_grounded_diverse_and_deterministic():
    kws = extract_keywords(NOTE, EMB)
    assert kws == extract_keywords(NOTE, HashEmbedder())
    assert 1 <= len(kws) <= 5
    assert all(k.lower() in NOTE.lower() for k in kws)
    words = [w.lower() for k in kws for w in k.split()]
    assert len(words) - len(set(words)) <= 2  # mostly distinct words


def test_extract_keywords_without_embedder_and_on_empty_text():
    assert extract_keywords(NOTE, None)
    assert extract_keywords("", EMB) == []
    assert extract_keywords("the and of", EMB) == []


def test_extract_keywords_survives_a_failing_embedder():
    class Broken:
        identity = "broken"

        def embed(self, texts):
            raise RuntimeError("no")

    assert extract_keywords(NOTE, Broken()) == extract_keywords(NOTE, None)


def test_tags_from_keywords_are_heads():
    assert tags_from_keywords(["Postgres migration", "users table", "Postgres", "1889"]) == ["migration", "table", "postgres"]


def test_the_deterministic_context_tells_the_kind_and_when_never_the_first_sentence():
    feb = datetime(2024, 2, 6, 10, 15)
    assert note_context("Decided with Priya that billing-api keeps idempotency keys for 24 hours.", feb) == "A decision, February 2024."
    assert note_context("Fixed the double receipts: the handler stores the event id.", feb) == "A fix, February 2024."
    assert note_context("user: The wheel is 48 MB, why?", feb) == "A question, February 2024."
    assert note_context("The deploy key lives in the team vault.", feb) == ""  # nothing to add: no context
    assert note_context("Bug: the webhook arrives twice.") == "A bug."
    assert note_context("user: Agreed, fix the line item ordering, not the test.") == "A decision."  # the first kind it names
    assert note_context("Incident: checkout returned 502s for 17 min.") == "An incident."
    assert note_context("Run only the fast tests with: pytest -m 'not slow' -x") == "A command."
    for text in ("Decided to ship.", "The wheel is 48 MB, why?"):
        assert note_context(text, feb) and note_context(text, feb).rstrip(".") not in text


def test_a_kind_is_told_only_where_the_lead_names_it():
    """A wrong kind is a false statement: words that merely occur in a note (a symptom, a
    meeting it mentions, a request for a plan, a later sentence) give it no kind."""
    for text, kind in (
        ("Staged rollout on Google Play from now on: halt if crash-free drops under 99%.", ""),  # no bug
        ("Retro on 3.0: too much landed after code freeze. From 3.1 only P0 fixes after freeze.", "A meeting."),  # no fix
        ("Dana prefers async status updates over the daily standup.", "A preference."),  # no meeting
        ("user: I want to replace the JWT code with authlib. Plan it first, don't change code yet.", ""),  # no plan
        ("Jonas: Had a first call with Verdant, the heat-pump startup.", ""),  # no meeting
        ("The test fails about one run in ten on CI but never locally.", ""),  # a symptom, no bug
        ("Customers on the enterprise plan get 1,000 requests a minute.", ""),  # no plan
        ("I'd be honoured to do a reading at the wedding. Maybe the Mary Oliver poem?", ""),  # it does not start by asking
    ):
        assert note_context(text) == kind, text



def test_the_vector_weighs_the_lead_sentence_twice_and_the_context_once():
    """The lead is in no context (that would print the note twice), but what is embedded
    repeats it, as it did while every context was the first sentence (LoCoMo MRR fell
    0.014 without it)."""
    from amem_cli.models import Note
    from amem_cli.retrieve.fields import embedding_text

    decision = Note("n", "Decided to move billing to Postgres. The old MySQL box is retired.", context="A decision, May 2024.")
    text = embedding_text(decision)
    assert text.count("Decided to move billing to Postgres.") == 2 and text.count("A decision, May 2024.") == 1
    # A thin first sentence ("ok thanks!") is not what a note is about: the first that says something.
    chat = Note("m", "user: Ok thanks! We painted a sunset with the kids at the lake last Sunday.")
    assert embedding_text(chat).count("We painted a sunset with the kids at the lake last Sunday.") == 2


# -- links ---------------------------------------------------------------------------------

CANDS = [
    Candidate("id-low", "Unrelated note about tea.", similarity=0.2),
    Candidate("id-b", "Postgres 16 upgrade plan.", "Upgrade plan.", ["Postgres"], similarity=0.7),
    Candidate("id-a", "Migrations lock tables in Postgres.", "Locks.", ["locks"], similarity=0.9),
    Candidate("id-c", "Deploys run every Tuesday.", similarity=0.5),
]


def _number_of(content: str):
    """A reply function that finds the label number the prompt gave to `content`."""

    def reply(messages, schema):
        prompt = messages[-1]["content"]
        m = re.search(r"^(\d+)\. " + re.escape(prompts.FENCE_OPEN + content[:20]), prompt, re.MULTILINE)
        return {"links": [int(m.group(1))]}

    return reply


def test_links_map_numbers_back_to_the_right_ids():
    # id-c is shown third (after id-a 0.9 and id-b 0.7), not at its input position 4.
    llm = ScriptedLLM([_number_of("Deploys run every Tuesday.")])
    d = choose_links("New note on deploys", ["deploys"], CANDS, llm=llm, threshold=0.3, max_links=3)
    assert d.ids == ["id-c"]
    assert d.fallback is False
    assert d.considered == ["id-a", "id-b", "id-c"]
    assert "Unrelated note about tea" not in llm.calls[0].prompt  # under the threshold
    assert llm.calls[0].schema["properties"]["links"]["items"]["enum"] == [1, 2, 3]


def test_links_in_similarity_order_and_capped():
    llm = ScriptedLLM([{"links": [3, 1, 2]}])
    d = choose_links("n", [], CANDS, llm=llm, threshold=0.3, max_links=2)
    assert d.ids == ["id-a", "id-b"]


def test_unknown_link_numbers_and_ids_are_dropped():
    llm = ScriptedLLM([{"links": [2, 9, "id-low", "nonsense", 0, -1]}])
    d = choose_links("n", [], CANDS, llm=llm, threshold=0.3, max_links=3)
    assert d.ids == ["id-b"]
    assert d.valid_outputs == [False]
    assert any("9" in p for p in d.problems)


def test_links_by_id_from_a_backend_that_ignores_the_schema():
    llm = ScriptedLLM(['{"links": ["id-c", "2"]}'])
    d = choose_links("n", [], CANDS, llm=llm, threshold=0.3, max_links=3)
    assert d.ids == ["id-b", "id-c"]


def test_only_unknown_links_fall_back():
    llm = ScriptedLLM([{"links": [7, 8]}])
    d = choose_links("n", [], CANDS, llm=llm, threshold=0.3, max_links=2)
    assert d.fallback is True and d.ids == ["id-a", "id-b"]


def test_valid_empty_choice_means_no_links():
    d = choose_links("n", [], CANDS, llm=ScriptedLLM([{"links": []}]), threshold=0.3, max_links=2)
    assert d.ids == [] and d.fallback is False and d.valid_outputs == [True]


@pytest.mark.parametrize("reply", ["garbage", '{"links": "', '{"other": 1}', None])
def test_bad_or_no_reply_falls_back_to_similarity(reply):
    llm = ScriptedLLM([reply])
    d = choose_links("n", [], CANDS, llm=llm, threshold=0.3, max_links=2)
    assert d.ids == ["id-a", "id-b"] and d.fallback is True


def test_no_llm_links_and_threshold():
    d = choose_links("n", [], CANDS, llm=NoLLM(), threshold=0.6, max_links=5)
    assert d.ids == ["id-a", "id-b"] and d.fallback is True and d.llm_calls == 0


def test_no_candidates_above_threshold_means_no_call():
    llm = ScriptedLLM([{"links": [1]}])
    d = choose_links("n", [], CANDS, llm=llm, threshold=0.95, max_links=2)
    assert d.ids == [] and llm.calls == [] and d.fallback is False


def test_duplicate_candidate_ids_are_shown_once():
    cands = [Candidate("x", "a", similarity=0.9), Candidate("x", "a", similarity=0.8), Candidate("y", "b", similarity=0.7)]
    d = choose_links("n", [], cands, llm=NoLLM(), threshold=0.1, max_links=5)
    assert d.ids == ["x", "y"]


# -- evolution -----------------------------------------------------------------------------

def one(reply):
    """An evolution reply about one older note, the first, as the model answers for each."""
    return {"notes": [{"note": 1, **reply}]} if isinstance(reply, dict) else reply


NEW = NewNote("The team will run long Postgres migrations at night.", ["Postgres", "migrations"], "Migrations move to night.")
OLD = Neighbour("old-1", "The deploy failed because a Postgres migration locked the users table.", "A migration broke a deploy.", ["deploy", "postgres"])


def test_evolution_changes_only_context_and_tags():
    reply = {
        "context": "A Postgres migration lock on the users table broke a deploy.",
        "tags": ["deploy", "Migrations", "invented-tag"],
        "content": "REWRITTEN",
        "links": ["x"],
        "id": "other",
    }
    d = decide_evolution(NEW, OLD, llm=ScriptedLLM([one(reply)]))
    ev = d.evolution
    assert isinstance(ev, Evolution)
    assert ev.neighbour_id == "old-1"
    assert ev.context == "A Postgres migration lock on the users table broke a deploy."
    assert ev.tags == ["deploy", "postgres", "migrations"]  # old kept, grounded new one added
    assert set(ev.changes()) <= {"context", "tags"}
    assert d.llm_calls == 1 and d.valid_outputs == [False]  # extra keys are fine, but...


def test_evolution_with_a_clean_reply_is_valid():
    reply = {"context": "A Postgres migration lock on the users table broke a deploy.", "tags": ["deploy", "postgres"]}
    d = decide_evolution(NEW, OLD, llm=ScriptedLLM([one(reply)]))
    assert d.valid_outputs == [True]
    assert d.evolution.tags is None  # no tag added
    assert d.evolution.changes() == {"context": reply["context"]}


def test_no_change_is_none():
    reply = {"context": OLD.context, "tags": ["postgres", "DEPLOY"]}
    assert propose_evolution(NEW, OLD, llm=ScriptedLLM([one(reply)])) is None


@pytest.mark.parametrize(
    "reply",
    [
        "not json",
        '{"notes": [{"note": 1, "context": "A Postgres migration lock broke a deploy',  # cut off
        one({"context": "x" * 500, "tags": ["postgres"]}),  # oversized: invalid
        one({"context": "A Postgres migration lock broke a deploy.", "tags": ["a"] * 9}),  # too many items
        {"notes": [{"context": "A Postgres migration lock broke a deploy.", "tags": ["table"]}]},  # no note number
        {"notes": [{"note": 2, "context": "A Postgres migration lock broke a deploy.", "tags": ["table"]}]},  # no such note
        {"context": "A Postgres migration lock broke a deploy.", "tags": ["table"]},  # not a list of answers
    ],
)
def test_invalid_output_is_none(reply):
    assert propose_evolution(NEW, OLD, llm=ScriptedLLM([reply])) is None


OLD2 = Neighbour("old-2", "The users table holds 40 million rows and locks for minutes on ALTER.", "", ["postgres"])
OLD3 = Neighbour("old-3", "Deploys run every weekday at noon from the main branch.", "", ["deploy"])
GOOD = {
    1: {"context": "A Postgres migration lock on the users table broke a deploy.", "tags": ["migration"]},
    2: {"context": "The users table is large, so an ALTER on it locks for minutes.", "tags": ["rows"]},
    3: {"context": "Deploys go out from the main branch every weekday at noon.", "tags": ["noon"]},
}


def test_one_call_decides_for_all_linked_notes():
    llm = ScriptedLLM([{"notes": [{"note": n, **a} for n, a in GOOD.items()]}])
    d = decide_evolutions(NEW, [OLD, OLD2, OLD3], llm=llm)
    assert len(llm.calls) == 1 and d.llm_calls == 1 and d.valid_outputs == [True]
    prompt = llm.calls[0].prompt
    assert OLD.content in prompt and OLD2.content in prompt and OLD3.content in prompt
    assert [e.neighbour_id for e in d.evolutions] == ["old-1", "old-2", "old-3"]
    assert [e.context for e in d.evolutions] == [a["context"] for a in GOOD.values()]
    assert d.evolutions[1].tags == ["postgres", "rows"]


def test_a_bad_answer_for_one_note_leaves_it_and_the_others_evolve():
    bad = {"context": "The team will run long Postgres migrations at night.", "tags": ["night"]}  # the new note's text
    llm = ScriptedLLM([{"notes": [{"note": 1, **GOOD[1]}, {"note": 2, **bad}, {"note": 3, **GOOD[3]}]}])
    d = decide_evolutions(NEW, [OLD, OLD2, OLD3], llm=llm)
    assert [e.neighbour_id for e in d.evolutions] == ["old-1", "old-3"]
    assert d.decisions[1].evolution is None and any("rejected" in p for p in d.decisions[1].problems)
    assert not d.decisions[0].problems and not d.decisions[2].problems


def test_a_badly_shaped_answer_for_one_note_leaves_only_it():
    llm = ScriptedLLM([{"notes": [{"note": 1, **GOOD[1]}, {"note": 2, "context": "x" * 500}, {"note": 1, **GOOD[2]},
                                  {"note": 3, **GOOD[3]}]}])
    d = decide_evolutions(NEW, [OLD, OLD2, OLD3], llm=llm)
    assert [e.neighbour_id for e in d.evolutions] == ["old-1", "old-3"]
    assert d.evolutions[0].context == GOOD[1]["context"]  # the first answer for note 1 counts
    assert any("answered already" in p for p in d.problems) and d.valid_outputs == [False]
    assert any("does not match" in p for p in d.decisions[1].problems)  # its own record says why


def test_a_note_answered_by_its_number_alone_is_kept():
    llm = ScriptedLLM([{"notes": [{"note": 1}, {"note": 2, **GOOD[2]}]}])
    d = decide_evolutions(NEW, [OLD, OLD2], llm=llm)
    assert [e.neighbour_id for e in d.evolutions] == ["old-2"] and d.valid_outputs == [True]


@pytest.mark.parametrize("reply", [
    "not json",
    '{"notes": [{"note": 1, "context": "A Postgres migration lock on the users table broke a deploy.", "tags": ["migration"]',
    {"notes": "all of them"},
    {"answers": [{"note": 1, **GOOD[1]}]},
])
def test_a_malformed_reply_leaves_every_note_as_it_was(reply):
    llm = ScriptedLLM([reply])
    d = decide_evolutions(NEW, [OLD, OLD2, OLD3], llm=llm)
    assert d.evolutions == [] and len(d.decisions) == 3 and d.llm_calls == 1


def test_many_linked_notes_are_decided_in_calls_of_a_few():
    many = [Neighbour(f"n{i}", OLD.content, OLD.context, OLD.tags) for i in range(prompts.MAX_EVOLVE_NOTES + 2)]
    llm = ScriptedLLM(default=lambda messages, schema: {"notes": [{"note": 1, **GOOD[1]}]})
    d = decide_evolutions(NEW, many, llm=llm)
    assert len(llm.calls) == 2 and [e.neighbour_id for e in d.evolutions] == ["n0", f"n{prompts.MAX_EVOLVE_NOTES}"]


def test_no_llm_evolution_is_none():
    assert propose_evolution(NEW, OLD, llm=NoLLM()) is None
    assert propose_evolution(NEW, OLD, llm=None) is None


def test_evolution_context_must_be_about_the_neighbour():
    reply = {"context": "Quantum galaxies explain stock prices nicely.", "tags": ["postgres"]}
    d = decide_evolution(NEW, OLD, llm=ScriptedLLM([one(reply)]))
    assert d.evolution is None
    assert any("evolved context" in p and "rejected" in p for p in d.problems)


def test_evolution_loop_context_is_ignored_but_tags_can_still_change():
    reply = {"context": "night night night night night night night night", "tags": ["table"]}
    ev = propose_evolution(NEW, OLD, llm=ScriptedLLM([one(reply)]))
    assert ev is not None and ev.context is None and ev.tags == ["deploy", "postgres", "table"]


def test_evolution_accepts_note_like_objects():
    from amem_cli.models import Note

    new = Note(id="n", content=NEW.content, keywords=NEW.keywords, context=NEW.context)
    old = Note(id="o", content=OLD.content, context=OLD.context, tags=OLD.tags)
    reply = {"context": "A Postgres migration lock on the users table broke a deploy.", "tags": []}
    ev = propose_evolution(new, old, llm=ScriptedLLM([one(reply)]))
    assert ev.neighbour_id == "o"


# -- boxes: topics ----------------------------------------------------------------------


def _unit(*rows):
    import numpy as np

    m = np.asarray(rows, dtype=float)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_groups_are_average_linkage_of_alike_notes():
    # Two tight pairs and a loner: each pair is one group (mean similarity ~1), the loner
    # is alike neither pair on average, and the pairs are alike one another only at 0.
    vectors = _unit([1, 0.05, 0], [1, -0.05, 0], [0, 1, 0.05], [0, 1, -0.05], [0.6, 0.6, 0.5])
    assert groups(vectors, 0.9) == [[0, 1], [2, 3], [4]]
    assert groups(vectors, 0.3) == [[0, 1, 4], [2, 3]]  # mean of the loner to the first pair: 0.6
    assert groups(vectors, -1) == [[0, 1, 2, 3, 4]]


def test_groups_of_many_notes_are_made_a_chunk_at_a_time_to_the_same_result(monkeypatch):
    import numpy as np

    rng = np.random.default_rng(7)
    centres = _unit(*rng.normal(size=(4, 16)))
    vectors = _unit(*(centres[i % 4] + 0.1 * rng.normal(size=16) for i in range(40)))
    whole = groups(vectors, 0.5)
    monkeypatch.setattr(boxes_step, "CHUNK", 9)
    assert groups(vectors, 0.5) == whole and len(whole) == 4


def test_a_note_joins_the_topic_it_is_most_alike_when_alike_enough():
    topics = {"a": (_unit([1, 0, 0])[0] * 3, 3), "b": (_unit([0, 1, 0])[0] * 3, 3)}
    assert nearest(_unit([0.9, 0.3, 0])[0], topics, 0.5) == "a"
    assert nearest(_unit([0.1, 0.1, 1])[0], topics, 0.5) is None
    assert nearest(_unit([1, 0, 0])[0], {}, 0.5) is None


def test_a_topic_is_named_by_its_most_distinctive_shared_term():
    members = [{"billing-api", "billing", "api", "stripe"}, {"billing-api", "billing", "api", "invoice"}, {"api", "tokens"}]
    vault = {"api": 40, "billing": 3, "billing-api": 3, "stripe": 2, "invoice": 9, "tokens": 5}
    assert name(members, vault, 100) == "billing-api"  # as rare as "billing" in the vault: the phrase
    assert name(members, vault, 100, taken={"billing-api"}) == "billing"
    assert name([{"stripe"}, {"invoice"}], vault, 100) is None  # no term two of its notes share


@pytest.mark.parametrize("term", ["decided", "prefers", "showed", "finally", "png", "json", "the", "week", "2024-03-29", "andrew"])
def test_no_box_is_named_by_a_verb_a_stop_word_a_file_extension_a_date_or_a_speaker(term):
    assert not namable(term, people={"andrew"})
    assert note_terms([term, "Dolomites"], people={"andrew"}) == {"dolomites"}


def test_slugify():
    assert slugify("  Machine Learning & AI, now ") == "machine-learning-ai"
    assert slugify("!!!") == ""
    assert len(slugify("a" * 80)) <= 30


# -- nothing bad model output can do raises ------------------------------------------------

_replies = st.one_of(
    st.text(max_size=200),
    st.dictionaries(
        st.sampled_from(["keywords", "tags", "context", "links", "boxes", "x"]),
        st.one_of(st.text(max_size=50), st.lists(st.one_of(st.text(max_size=30), st.integers(-3, 12)), max_size=8), st.integers(), st.none()),
        max_size=5,
    ).map(json.dumps),
)


@settings(max_examples=60, deadline=None)
@given(_replies)
def test_steps_never_raise_on_model_output(reply):
    c = construct(NOTE, llm=ScriptedLLM([reply]), embedder=EMB)
    assert c.keywords and c.tags and (c.sources["context"] == "llm" or c.context == note_context(NOTE))
    d = choose_links("n", [], CANDS, llm=ScriptedLLM([reply]), threshold=0.3, max_links=2)
    assert set(d.ids) <= {"id-a", "id-b", "id-c"} and len(d.ids) <= 2
    ev = propose_evolution(NEW, OLD, llm=ScriptedLLM([reply]))
    assert ev is None or set(ev.changes()) <= {"context", "tags"}


def test_no_keyword_or_tag_outside_the_notes_words():
    """A model's keyword or tag is kept only when it is words of the note (or a close form
    of them): not one whose words are scattered over the note and spelled otherwise."""
    note = "Chose PostgreSQL over MySQL for the billing service; the rewrite of billing-api starts in May. Decided with Priya."
    reply = {"keywords": ["billed-service rewrite", "Meeting 2024-03-29", "PostgreSQL", "billing-api", "weekly plan (weekly"],
             "tags": ["png", "summing", "decision", "databases"], "context": "x"}
    c = construct(note, llm=ScriptedLLM([reply]), embedder=EMB)
    assert c.keywords == ["PostgreSQL", "billing-api"]
    assert c.tags == ["decision"]  # "Decided": the same family
    assert any("'billed-service rewrite' dropped: not words of the note" in p for p in c.problems)
    words_of_note = {w.casefold() for w in re.findall(r"[\w.-]+", note)}
    for value in c.keywords + c.tags:
        assert value.casefold() in words_of_note or value == "decision"
