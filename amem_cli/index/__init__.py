"""Derived indexes under <vault>/.amem/: SQLite (metadata, links, full text) and vectors."""
