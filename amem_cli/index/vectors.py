"""The vector store port and its Chroma adapter (local folder or a Chroma server)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol
from urllib.parse import urlparse

from ..errors import AmemError
from ..text import MAX_PASSAGES
from ..vault import refuse_links


# How many candidates Chroma's HNSW search keeps while it walks the graph. Its default
# (100) missed true nearest neighbours (4 to 9 of the 50 nearest, over 150 LoCoMo
# questions on 419 notes), and which ones depended on the order threads happened to
# insert vectors in, so two builds of the same notes ranked differently; at 400 the
# 50 nearest were exact. A search costs under 1 ms more (benchmarks/vector_search.py).
EF_SEARCH = 400


# A note has one vector under its id, a second one under id + DETERMINISTIC_VECTOR when a
# model wrote some of its fields, and one under id + "#2", "#3"... for each passage after
# the first of a note too long for the embedder's window (`Indexer._texts`). No note id
# holds a "#".
DETERMINISTIC_VECTOR = "#own"  # (the suffix's first name: "own words")


def passage_id(note_id: str, number: int) -> str:
    """The id of the note's `number`th passage's vector (the first is the note's own)."""
    return f"{note_id}#{number}"


def vector_ids(note_id: str, *, passages: bool = True) -> list[str]:
    """The ids a note's vectors may be stored under: its own, its deterministic one, and
    (unless not `passages`) its passages'."""
    return [note_id, note_id + DETERMINISTIC_VECTOR, *(passage_id(note_id, n) for n in range(2, MAX_PASSAGES + 1) if passages)]


def note_of(vector_id: str) -> str:
    return vector_id.partition("#")[0]


class VectorIndex(Protocol):
    def upsert(self, ids: list[str], vectors: list[list[float]]) -> None: ...

    def delete(self, ids: list[str]) -> None: ...

    def query(self, vectors: list[list[float]], k: int) -> list[list[tuple[str, float]]]:
        """For each vector, the k nearest ids with cosine similarity, best first (one
        call for many vectors: a call costs far more than a vector)."""
        ...

    def vectors_of(self, ids: list[str]) -> dict[str, list[float]]:
        """The stored vectors of those ids that have one."""
        ...

    def ids(self) -> list[str]:
        """Every id that has a vector."""
        ...

    def reload(self) -> None: ...

    def reset(self) -> None: ...


class ChromaVectorIndex:
    """Explicit embeddings only (no Chroma embedding function), cosine space, telemetry off.

    A local store is opened lazily: importing the chromadb package costs ~1.6 s, while a
    search only needs to read. Until this process writes, queries go through chromadb's
    Rust bindings alone (`_BindingsReader`, ~0.1 s to import and open), falling back to
    the package if those bindings ever change."""

    def __init__(self, *, path: Path | None = None, url: str | None = None, collection: str = "amem_notes"):
        self._path, self._url, self._name = path, url, collection
        self._client = self._collection = None
        self._reader: _BindingsReader | None = None
        self.where = url or str(path)
        if url:
            self._connect()  # a server that is down is reported at once

    def _connect(self):
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        if self._url:
            parsed = urlparse(self._url if "://" in self._url else f"http://{self._url}")
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
                    f"cannot reach the Chroma server at {self._url}: {exc.__class__.__name__}",
                    hint="start it (`chroma run --path DIR`) or unset AMEM_CHROMA_URL to use the local store",
                ) from None
        else:
            assert self._path is not None
            if not self._path.exists():
                # Chroma caches one system per path in a process; a store deleted
                # under it (`rm -r .amem`, then reindex) must not reuse the stale one.
                from chromadb.api.client import SharedSystemClient

                SharedSystemClient.clear_system_cache()
            self._client = chromadb.PersistentClient(path=str(self._path), settings=settings)
        self._collection = self._client.get_or_create_collection(
            name=self._name, embedding_function=None, configuration={"hnsw": {"space": "cosine", "ef_search": EF_SEARCH}}
        )
        if (self._collection.configuration.get("hnsw") or {}).get("ef_search", EF_SEARCH) < EF_SEARCH:
            # A store made before EF_SEARCH was raised (its setting is kept when it is opened).
            try:
                self._collection.modify(configuration={"hnsw": {"ef_search": EF_SEARCH}})
            except Exception:
                pass  # searches stay a little less exact until the next open: never worth failing a command
        self._reader = None  # from now on this process reads what it writes through the client

    @property
    def _store(self):
        self._check_links()
        if self._collection is None:
            self._connect()
        return self._collection

    def _check_links(self) -> None:
        """Refuse a local store holding a symlink (its database, a segment folder or file):
        Chroma would read and write the files it names. Before each use: a long-lived
        process opens and writes them again and again."""
        if self._path is not None:
            refuse_links(self._path)

    def reload(self) -> None:
        """Drop this process's cached view of a local store another process has written
        to since (Chroma keeps the index in memory: a stale one fails to find new ids)."""
        if self._url:
            return  # a server keeps one view for all its clients
        self._reader = None
        if self._client is not None:
            from chromadb.api.client import SharedSystemClient

            SharedSystemClient.clear_system_cache()
            self._check_links()
            self._connect()

    def upsert(self, ids: list[str], vectors: list[list[float]]) -> None:
        step = 1000
        for i in range(0, len(ids), step):
            self._store.upsert(ids=ids[i : i + step], embeddings=vectors[i : i + step])

    def delete(self, ids: list[str]) -> None:
        if ids:
            self._store.delete(ids=ids)

    def query(self, vectors: list[list[float]], k: int) -> list[list[tuple[str, float]]]:
        if k <= 0 or not vectors:
            return [[] for _ in vectors]
        if self._collection is None and self._path is not None and (self._path / "chroma.sqlite3").exists():
            self._check_links()
            try:
                if self._reader is None:
                    self._reader = _BindingsReader(self._path, self._name)
                return self._reader.query(vectors, k)
            except Exception:
                self._reader = None  # bindings of another chromadb version: the package below
        # Chroma caps n_results at what it holds; no count() first (a round trip per search).
        res = self._store.query(query_embeddings=vectors, n_results=k, include=["distances"])
        return _similarities(res["ids"], res["distances"])

    def vectors_of(self, ids: list[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        res = self._store.get(ids=list(ids), include=["embeddings"])
        return {i: [float(x) for x in v] for i, v in zip(res["ids"], res["embeddings"])}

    def ids(self) -> list[str]:
        step, out = 5000, []
        while batch := self._store.get(include=[], limit=step, offset=len(out))["ids"]:
            out.extend(batch)
            if len(batch) < step:
                break
        return out

    def count(self) -> int:
        return self._store.count()

    def reset(self) -> None:
        self._check_links()
        if self._client is None:
            self._connect()
        try:
            self._client.delete_collection(self._name)
        except Exception:
            pass  # nothing to drop
        self._collection = None
        self._connect()


class _BindingsReader:
    """Nearest-neighbour reads of a local Chroma store through `chromadb_rust_bindings`,
    configured as chromadb 1.x's own Rust client configures them (read-only: migrations
    are validated, never applied)."""

    TENANT, DATABASE = "default_tenant", "default_database"

    def __init__(self, path: Path, collection: str):
        import chromadb_rust_bindings as rb

        config = rb.SqliteDBConfig(
            hash_type=rb.MigrationHash.MD5, migration_mode=rb.MigrationMode.Validate, url=str(path / "chroma.sqlite3")
        )
        self._bindings = rb.Bindings(allow_reset=False, sqlite_db_config=config, persist_path=str(path), hnsw_cache_size=1000)
        self._id = str(self._bindings.get_collection(collection, self.TENANT, self.DATABASE).id)

    def query(self, vectors: list[list[float]], k: int) -> list[list[tuple[str, float]]]:
        res = self._bindings.query(self._id, None, vectors, k, None, None, ["distances"], self.TENANT, self.DATABASE)
        return _similarities(res.ids, res.distances)


def _similarities(ids: list[list[str]], distances: list[list[float]]) -> list[list[tuple[str, float]]]:
    """Chroma's cosine distances, per query, as similarities."""
    return [[(i, 1.0 - float(d)) for i, d in zip(row, dist)] for row, dist in zip(ids, distances)]
