"""amem: local agentic memory (A-MEM) for people and LLM agents."""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"
__all__ = ["AgentMemory", "Note", "NoteBuilder", "__version__"]

if TYPE_CHECKING:
    from .api import AgentMemory, NoteBuilder
    from .models import Note


def __getattr__(name: str):
    # Lazy, so `import amem_cli` (and `amem --help`) stays cheap.
    if name in ("AgentMemory", "NoteBuilder"):
        from . import api

        return getattr(api, name)
    if name == "Note":
        from .models import Note

        return Note
    raise AttributeError(name)
