"""The Typer declarations of the commands, one module per group.

No `from __future__ import annotations` here: Typer reads the options from the
annotations at every start, and kept as text each would be compiled again (a fifth of
`amem --help`'s work; `tests/integration/test_fast_start.py` holds it).
"""
