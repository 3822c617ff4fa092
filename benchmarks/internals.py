"""The one seam the benchmarks have into the services behind an `AgentMemory` (as the
tests have `conftest.internals`): to time a part alone (the embedder, a reindex) or read
the pipeline's counts of model calls, which no operation shows."""

from __future__ import annotations


def services(memory):
    """The container behind `memory`."""
    return memory._facade._services()
