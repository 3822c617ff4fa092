"""Arbitrary user text as a search query (Hypothesis): FTS5 syntax (quotes, NEAR,
AND/OR/NOT, *, ^, :, parentheses, -), emoji, CJK of 1-3 characters, empty and
whitespace-only text. A search never raises (an empty query is a usage error), and
keyword search finds what a plain substring search finds: a note holding the query's
text is among the hits."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amem_cli import AgentMemory
from amem_cli.errors import UsageError
from conftest import internals

PIECES = [
    '"', "'", '""', "NEAR", "NEAR(", "NEAR/2", "AND", "OR", "NOT", "*", "^", ":", "(", ")", "-", "+", "{", "}", "[",
    "]", "\\", "/", "%", "_", "~", ".", ",", "col:", "content:", "tags:", "id:", "🙂", "👍🏽", "🐘", "東", "京", "東京",
    "東京都", "タ", "ワー", "한", "국어", "Ü", "über", "é", "e\u0301", "ß", "İ", "²", "\u200b", "\t", " ", "  ",
    "alice", "Tea", "deploy", "x", "a", "42", "3.14", "C++", "foo_bar", "don't", "Caroline's", "-1", "@me", "#tag",
]
# Text built from the pieces above, or any text at all (Hypothesis' own, minus NUL and surrogates).
HOSTILE_TEXT = st.one_of(
    st.lists(st.sampled_from(PIECES), min_size=0, max_size=8).map("".join),
    st.lists(st.sampled_from(PIECES), min_size=0, max_size=8).map(" ".join),
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=30),
)
FILLER = ["Alice drinks tea every morning.", "The deploy failed on Postgres locks.", "東京タワーは赤い。"]
EXAMPLES = 150


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    with AgentMemory(tmp_path_factory.mktemp("fts-vault"), embedder="fake", llm="none") as m:
        for text in FILLER:
            m.add(text)
        yield m


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=HOSTILE_TEXT, mode=st.sampled_from(["keyword", "hybrid"]))
def test_any_query_text_searches_without_raising(mem, query, mode):
    if not query.strip():
        with pytest.raises(UsageError):
            mem.search(query, mode=mode)
        return
    hits = mem.search(query, mode=mode, top_k=10)
    assert len(hits) <= 10


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=HOSTILE_TEXT, data=st.data())
def test_keyword_search_finds_the_note_holding_the_query(mem, text, data):
    if not text.strip():
        return
    note = mem.add(f"{text} ")  # stored as given, less surrounding whitespace
    try:
        content = note.content
        start = data.draw(st.integers(0, len(content) - 1), label="start")
        end = data.draw(st.integers(start + 1, len(content)), label="end")
        query = content[start:end]
        if not query.strip():
            return
        ids = [h.note.id for h in mem.search(query, mode="keyword", top_k=50)]
        assert note.id in ids, (query, content)
    finally:
        mem.delete(note.id)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(HOSTILE_TEXT, max_size=4))
def test_counting_the_notes_of_any_keyword_never_raises(mem, words):
    """Link candidates come from keywords the notes of a vault do not all share; the
    keywords are anyone's text."""
    assert set(internals(mem).index.fulltext.uncommon(words, 1)) <= set(words)


def test_a_keyword_more_notes_share_than_allowed_is_common(tmp_path):
    with AgentMemory(tmp_path, embedder="fake", llm="none") as m:
        for n in range(3):
            m.add(f"Walrus sighting number {n} on the ice.", keywords=["walrus"])
        m.add("A narwhal surfaced near the walrus colony.", keywords=["narwhal"])
        index = internals(m).index
        assert index.fulltext.uncommon(["walrus", "narwhal", "orca"], 2) == ["narwhal", "orca"]
        assert index.fulltext.uncommon(["walrus"], 4) == ["walrus"]  # 4 notes hold it: not more than 4
