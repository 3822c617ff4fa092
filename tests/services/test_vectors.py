"""The local Chroma store, read the fast way (Rust bindings only) and the full way."""

from __future__ import annotations

import random

from amem_cli.index.vectors import ChromaVectorIndex


def test_a_new_process_reads_through_the_bindings_and_gets_the_clients_answer(tmp_path):
    rng = random.Random(7)
    ids = [f"n{i}" for i in range(300)]
    vectors = [[rng.uniform(-1, 1) for _ in range(16)] for _ in ids]
    writer = ChromaVectorIndex(path=tmp_path / "chroma", collection="amem_notes")
    writer.upsert(ids, vectors)
    query = [rng.uniform(-1, 1) for _ in range(16)]
    expected = writer.query([query], 10)[0]

    reader = ChromaVectorIndex(path=tmp_path / "chroma", collection="amem_notes")
    got = reader.query([query], 10)[0]
    # If this fails after a chromadb upgrade, searches still work (through the package),
    # but a cold `amem search` pays ~1.6 s more: update _BindingsReader.
    assert reader._reader is not None and reader._client is None, "the bindings reader was not used"
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert all(abs(a - b) < 1e-5 for (_, a), (_, b) in zip(got, expected))
    # The first write switches to the client, which then sees that write.
    reader.upsert(["fresh"], [query])
    assert reader._reader is None and reader.query([query], 1)[0][0][0] == "fresh"


def test_a_store_searches_wide_enough_for_exact_neighbours_and_an_old_store_is_raised_when_opened(tmp_path):
    import chromadb
    from chromadb.api.client import SharedSystemClient

    from amem_cli.index.vectors import EF_SEARCH

    new = ChromaVectorIndex(path=tmp_path / "new")
    new.upsert(["a"], [[1.0, 0.0]])
    assert new._store.configuration["hnsw"]["ef_search"] == EF_SEARCH

    # A store as amem made it before (Chroma's default search width, 100).
    chromadb.PersistentClient(path=str(tmp_path / "old")).get_or_create_collection(
        "amem_notes", embedding_function=None, metadata={"hnsw:space": "cosine"})
    SharedSystemClient.clear_system_cache()
    old = ChromaVectorIndex(path=tmp_path / "old")
    old.upsert(["a"], [[1.0, 0.0]])
    SharedSystemClient.clear_system_cache()
    reopened = chromadb.PersistentClient(path=str(tmp_path / "old")).get_collection("amem_notes")
    assert reopened.configuration["hnsw"]["ef_search"] == EF_SEARCH
    assert reopened.configuration["hnsw"]["space"] == "cosine"
