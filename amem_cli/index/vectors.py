"""The vector store port and its Chroma adapter (local folder or a Chroma server)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol
from urllib.parse import urlparse

from ..errors import AmemError


class VectorIndex(Protocol):
    def upsert(self, ids: list[str], vectors: list[list[float]]) -> None: ...

    def delete(self, ids: list[str]) -> None: ...

    def query(self, vector: list[float], k: int) -> list[tuple[str, float]]:
        """The k nearest ids with cosine similarity, best first."""
        ...

    def vectors_of(self, ids: list[str]) -> dict[str, list[float]]:
        """The stored vectors of those ids that have one."""
        ...

    def reload(self) -> None: ...

    def reset(self) -> None: ...


class ChromaVectorIndex:
    """Explicit embeddings only (no Chroma embedding function), cosine space, telemetry off."""

    def __init__(self, *, path: Path | None = None, url: str | None = None, collection: str = "amem_notes"):
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        if url:
            parsed = urlparse(url if "://" in url else f"http://{url}")
            try:
                self._client = chromadb.HttpClient(
                    host=parsed.hostname or "localhost",
                    port=parsed.port or 8000,
                    ssl=parsed.scheme == "https",
                    settings=settings,
                )
                self._client.heartbeat()
            except Exception as exc:
                raise AmemError(
                    f"cannot reach the Chroma server at {url}: {exc.__class__.__name__}",
                    hint="start it (`chroma run --path DIR`) or unset AMEM_CHROMA_URL to use the local store",
                ) from None
            self.where = url
        else:
            assert path is not None
            if not path.exists():
                # Chroma caches one system per path in a process; a store deleted
                # under it (`rm -r .amem`, then reindex) must not reuse the stale one.
                from chromadb.api.client import SharedSystemClient

                SharedSystemClient.clear_system_cache()
            self._client = chromadb.PersistentClient(path=str(path), settings=settings)
            self.where = str(path)
        self._path, self._settings = path, settings
        self._name = collection
        self._collection = self._open()

    def reload(self) -> None:
        """Drop this process's cached view of a local store another process has written
        to since (Chroma keeps the index in memory: a stale one fails to find new ids)."""
        if self._path is None:
            return  # a server keeps one view for all its clients
        import chromadb
        from chromadb.api.client import SharedSystemClient

        SharedSystemClient.clear_system_cache()
        self._client = chromadb.PersistentClient(path=str(self._path), settings=self._settings)
        self._collection = self._open()

    def _open(self):
        return self._client.get_or_create_collection(
            name=self._name, embedding_function=None, metadata={"hnsw:space": "cosine"}
        )

    def upsert(self, ids: list[str], vectors: list[list[float]]) -> None:
        step = 1000
        for i in range(0, len(ids), step):
            self._collection.upsert(ids=ids[i : i + step], embeddings=vectors[i : i + step])

    def delete(self, ids: list[str]) -> None:
        if ids:
            self._collection.delete(ids=ids)

    def query(self, vector: list[float], k: int) -> list[tuple[str, float]]:
        if k <= 0:
            return []
        # Chroma caps n_results at what it holds; no count() first (a round trip per search).
        res = self._collection.query(query_embeddings=[vector], n_results=k, include=["distances"])
        return [(i, 1.0 - float(d)) for i, d in zip(res["ids"][0], res["distances"][0])]

    def vectors_of(self, ids: list[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        res = self._collection.get(ids=list(ids), include=["embeddings"])
        return {i: [float(x) for x in v] for i, v in zip(res["ids"], res["embeddings"])}

    def count(self) -> int:
        return self._collection.count()

    def reset(self) -> None:
        try:
            self._client.delete_collection(self._name)
        except Exception:
            pass  # nothing to drop
        self._collection = self._open()
