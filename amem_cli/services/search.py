"""Search: semantic (vectors) and full-text (FTS5 BM25) evidence, fused."""

from __future__ import annotations

from datetime import datetime

from ..errors import UsageError
from ..models import SearchHit
from ..retrieve.fusion import rrf
from .indexer import Indexer

MODES = ("hybrid", "semantic", "keyword")


class SearchService:
    def __init__(self, indexer: Indexer):
        self.indexer = indexer
        self.index = indexer.index

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        mode: str = "hybrid",
        tags: list[str] | None = None,
        boxes: list[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[SearchHit]:
        if not query or not query.strip():
            raise UsageError("the query is empty", hint="give some words to search for")
        if mode not in MODES:
            raise UsageError(f"unknown search mode {mode!r}", hint=f"use one of: {', '.join(MODES)}")
        if limit < 1:
            raise UsageError("--limit must be at least 1")
        self.indexer.sync()
        where, params = self.index.filter_sql(tags=tags, boxes=boxes, since=since, until=until)
        allowed = {r[0] for r in self.index.db.execute(f"SELECT id FROM notes {where}", params)} if where else None
        depth = max(limit * 5, 50)
        lists = {}
        if mode in ("hybrid", "keyword"):
            lists["keyword"] = self.index.fts_search(query, depth, where, params)
        if mode in ("hybrid", "semantic"):
            lists["semantic"] = self._semantic(query, depth if allowed is None else depth * 4, allowed)
        fused = rrf(lists)[:limit]
        notes = self.index.get_many(i for i, _, _ in fused)
        return [SearchHit(notes[i], score, sources) for i, score, sources in fused if i in notes]

    def _semantic(self, query: str, depth: int, allowed: set[str] | None) -> list[tuple[str, float]]:
        self.indexer.flush_vectors()
        vectors = self.indexer.vectors()
        vector = self.indexer.embedder().embed([query])[0]
        hits = vectors.query(vector, depth)
        known = set(self.index.get_many(i for i, _ in hits))
        return [(i, s) for i, s in hits if i in known and (allowed is None or i in allowed)]
