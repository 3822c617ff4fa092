"""How the memory's link graph has grown: the small-world measures the A-MEM write-up
uses (links per note, the largest component's diameter, clustering)."""

from __future__ import annotations

from ..wire.vault import GraphStats

# Exact diameter is all-pairs shortest paths; beyond this size it is estimated.
EXACT_DIAMETER_NODES = 2000


def graph_stats(index) -> GraphStats:
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(index.notes.ids())
    pairs = index.links.pairs()  # as `status` and `graph` count them
    for pair in pairs["link"] | pairs["sequence"]:
        g.add_edge(*pair)
    kinds = {k: len(v) for k, v in pairs.items()}
    notes = g.number_of_nodes()
    parts = sorted(nx.connected_components(g), key=len, reverse=True) if notes else []
    largest = g.subgraph(parts[0]) if parts else g
    exact = largest.number_of_nodes() <= EXACT_DIAMETER_NODES
    if largest.number_of_nodes() <= 1:
        diameter = 0
    elif exact:
        diameter = nx.diameter(largest)
    else:
        diameter = nx.approximation.diameter(largest, seed=0)
    return GraphStats(
        notes=notes,
        links=kinds["link"],
        sequence_links=kinds["sequence"],
        links_per_note=round(2 * kinds["link"] / notes, 3) if notes else 0.0,
        components=len(parts),
        largest_component=largest.number_of_nodes(),
        diameter=diameter,
        diameter_exact=exact,
        clustering=round(nx.average_clustering(g), 4) if notes else 0.0,
        boxes=len(index.notes.boxes()),
    )
