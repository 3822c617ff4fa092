"""Ranked evidence (keyword, vector, graph) and its fusion."""

MODES = ("hybrid", "semantic", "keyword", "graph")  # which lists a search reads: all, or one
