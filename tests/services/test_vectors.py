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
