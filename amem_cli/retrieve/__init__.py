"""Ranked evidence (keyword, vector, graph) and its fusion."""
