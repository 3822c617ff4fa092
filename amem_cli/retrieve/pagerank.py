"""Personalised PageRank over the link graph, on the neighbourhood of the seeds."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping


def neighbourhood(
    seeds: Iterable[str], adjacency: Callable[[Iterable[str]], dict[str, set[str]]], hops: int
) -> dict[str, set[str]]:
    """The graph within `hops` links of the seeds, as an adjacency map (fetched hop by hop)."""
    graph: dict[str, set[str]] = {}
    frontier = set(seeds)
    for _ in range(hops):
        todo = [n for n in frontier if n not in graph]
        if not todo:
            break
        fetched = adjacency(todo)
        graph.update({n: fetched.get(n, set()) for n in todo})
        frontier = set().union(*graph.values()) - graph.keys() if graph else set()
    for edges in list(graph.values()):
        for n in edges:
            graph.setdefault(n, set())
    return graph


def personalised_pagerank(
    graph: Mapping[str, set[str]], seeds: Mapping[str, float], *, damping: float = 0.85, iterations: int = 20
) -> dict[str, float]:
    """Power iteration: with probability `damping` walk a link, else jump back to a seed
    (chosen by its weight). Edges are undirected; a dead end jumps back to the seeds.
    In numpy: a few hundred nodes x 20 rounds cost ~6 ms as Python loops, <1 ms here."""
    import numpy as np

    total = sum(w for w in seeds.values() if w > 0)
    if total <= 0:
        return {}
    nodes = list(dict.fromkeys([*graph, *seeds]))
    index = {n: i for i, n in enumerate(nodes)}
    src = np.array([index[a] for a, out in graph.items() for _ in out], dtype=np.int64)
    dst = np.array([index[b] for out in graph.values() for b in out], dtype=np.int64)
    degree = np.bincount(src, minlength=len(nodes)).astype(float)
    teleport = np.zeros(len(nodes))
    for n, w in seeds.items():
        if w > 0:
            teleport[index[n]] = w / total
    dead = degree == 0
    rank = teleport.copy()
    for _ in range(iterations):
        walked = np.bincount(dst, weights=damping * rank[src] / degree[src], minlength=len(nodes))
        rank = walked + teleport * (1 - damping + damping * rank[dead].sum())
    return {n: float(rank[i]) for i, n in enumerate(nodes) if rank[i] > 0}
