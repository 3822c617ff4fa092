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
    (chosen by its weight). Edges are undirected; a dead end jumps back to the seeds."""
    total = sum(w for w in seeds.values() if w > 0)
    if total <= 0:
        return {}
    teleport = {n: w / total for n, w in seeds.items() if w > 0}
    rank = dict(teleport)
    for _ in range(iterations):
        new = {n: (1 - damping) * p for n, p in teleport.items()}
        lost = 0.0
        for node, p in rank.items():
            out = graph.get(node, ())
            if not out:
                lost += p
                continue
            share = damping * p / len(out)
            for m in out:
                new[m] = new.get(m, 0.0) + share
        for n, p in teleport.items():
            new[n] += damping * lost * p
        rank = new
    return rank
