"""How exact Chroma's HNSW search is, and what it costs, at amem's search width and below.

    .venv/bin/python benchmarks/vector_search.py --notes 10000
    .venv/bin/python benchmarks/vector_search.py --notes 100000 --ef 100,400

Builds one local Chroma collection per search width (`ef_search`) from the same synthetic
vectors (384-d, clustered around 200 centres with noise, like note embeddings of many
topics, but harder), asks 100 queries for their 50 nearest, and prints, per width, how
many of the true 50 nearest (exact numpy search) were missed and the query p50/p95.
amem's width is `amem_cli.index.vectors.EF_SEARCH`. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

K = 50


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--ef", default="100,400", help="search widths to compare (comma-separated)")
    args = ap.parse_args()
    import chromadb

    rng = np.random.default_rng(7)
    centres = rng.normal(size=(200, 384))
    vectors = centres[rng.integers(0, 200, args.notes)] + 0.6 * rng.normal(size=(args.notes, 384))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[rng.integers(0, args.notes, 100)] + 0.3 * rng.normal(size=(100, 384))
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    exact = [set(np.argsort(-(vectors @ q))[:K].tolist()) for q in queries]
    print(f"{args.notes} vectors, 100 queries, top {K}; {len(os.sched_getaffinity(0))} usable cores")
    with tempfile.TemporaryDirectory() as tmp:
        client = chromadb.PersistentClient(path=tmp)
        for ef in (int(e) for e in args.ef.split(",")):
            store = client.create_collection(f"ef{ef}", embedding_function=None,
                                             configuration={"hnsw": {"space": "cosine", "ef_search": ef}})
            start = time.perf_counter()
            for i in range(0, args.notes, 1000):
                store.add(ids=[str(j) for j in range(i, min(args.notes, i + 1000))], embeddings=vectors[i : i + 1000])
            built = time.perf_counter() - start
            times, missed = [], 0
            for q, truth in zip(queries, exact):
                t = time.perf_counter()
                got = store.query(query_embeddings=[q], n_results=K, include=[])["ids"][0]
                times.append(time.perf_counter() - t)
                missed += len(truth - {int(i) for i in got})
            print(f"ef_search {ef:>4}: built in {built:.0f} s; missed {missed} of {K * len(queries)} true neighbours; "
                  f"query p50 {statistics.median(times) * 1000:.2f} ms, p95 {sorted(times)[94] * 1000:.2f} ms")


if __name__ == "__main__":
    main()
