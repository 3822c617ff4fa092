from __future__ import annotations

from typing import Protocol


class Embedder(Protocol):
    """Turns texts into unit-length vectors. `identity` names the model and its
    dimensions, so vectors of two models are never mixed in one index."""

    @property
    def identity(self) -> str: ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...
