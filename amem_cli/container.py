"""The composition root: the one place that reads settings and picks backends."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

from . import timeutil
from .config import Settings, model_fields
from .embed.base import Embedder
from .index.sqlite import SqliteIndex
from .index.vectors import VectorIndex
from .llm.base import LLM
from .steps.construct import PhraseVectors, unaided_notes
from .places import cache_root
from .services.importer import Importer
from .services.indexer import Indexer
from .services.ingest import Ingester
from .services.mending import mend_links
from .services.notes import NoteService
from .services.pipeline import Pipeline, PipelineSettings
from .services.search import RetrievalSettings, SearchService
from .services.writer import NoteWriter
from .vault import Vault

if TYPE_CHECKING:
    from .services.doctor import Doctor


class Container:
    def __init__(self, settings: Settings, *, create: bool = False):
        self.settings = settings
        timeutil.date_order = settings.date_order  # (dates are read deep in parsing: see timeutil)
        self.vault = Vault(settings.dir, cache=cache_root(settings.cache_dir))
        self.vault.ensure(create=create)
        # Called between an import's batches; a server gives waiting commands their turn.
        self.between_batches: Callable[[], None] = lambda: None

    # The parts that do not depend on the model choice (`config.MODEL_CHOICE`).
    SHARED = ("index", "embedder", "vectors", "indexer", "writer", "phrases", "search")

    def variant(self, settings: Settings) -> "Container":
        """This container for one command whose settings differ from these in the model
        choice only (`amem --llm none add ...` through the warm server): the stores, the
        embedder, the index and search shared, the model and the pipeline built from
        `settings`."""
        other = object.__new__(Container)
        other.settings, other.vault, other.between_batches = settings, self.vault, self.between_batches
        for name in self.SHARED:
            other.__dict__[name] = getattr(self, name)
        return other

    @cached_property
    def index(self) -> SqliteIndex:
        return SqliteIndex(self.vault.index_dir / "index.db")

    @cached_property
    def embedder(self) -> Embedder:
        s = self.settings
        if s.embedder == "fake":
            from .embed.fake import HashEmbedder

            return HashEmbedder()
        from .embed.sentence import SentenceTransformerEmbedder

        if s.embedder == "onnx":
            from .embed.onnx import OnnxEmbedder

            # Same vectors and identity either way: sentence-transformers steps in, with one
            # line on stderr, where ONNX cannot run (no onnxruntime, no torch for the export).
            return OnnxEmbedder(
                s.embedding_model, cache_dir=s.cache_dir, fallback=lambda: SentenceTransformerEmbedder(s.embedding_model)
            )
        return SentenceTransformerEmbedder(s.embedding_model)

    @cached_property
    def vectors(self) -> VectorIndex:
        from .index.vectors import ChromaVectorIndex

        s = self.settings
        if s.chroma_url:
            # One server may hold many vaults: one collection per vault unless named.
            name = s.chroma_collection or "amem-" + hashlib.sha1(str(self.vault.root).encode()).hexdigest()[:16]
            return ChromaVectorIndex(url=s.chroma_url, collection=name)
        return ChromaVectorIndex(path=self.vault.index_dir / "chroma", collection=s.chroma_collection or "amem_notes")

    @cached_property
    def indexer(self) -> Indexer:
        indexer = Indexer(
            self.vault, self.index, lambda: self.embedder, lambda: self.vectors, unaided_notes,
            sync_interval=self.settings.sync_interval,
        )
        # Whatever command's sync sees a person's edit of a note's text, its derived fields
        # follow. A lambda: the pipeline is built on this indexer, so it comes after it.
        indexer.on_edit = lambda edited: self.pipeline.rederive(edited)
        indexer.on_new = lambda new: self.pipeline.queue_new(new)
        indexer.on_saved = lambda saved: mend_links(self.writer, saved)
        return indexer

    @cached_property
    def llm(self) -> LLM | None:
        """The model, or None (`--llm none`): the pipeline then uses its deterministic methods."""
        from .llm import make_llm

        s = self.settings
        return make_llm(s.llm, model_path=s.model, url=s.llm_url, model_name=s.llm_model, threads=s.threads or None)

    @cached_property
    def writer(self) -> NoteWriter:
        return NoteWriter(self.indexer)

    @cached_property
    def phrases(self) -> PhraseVectors:
        return PhraseVectors()

    @cached_property
    def pipeline(self) -> Pipeline:
        s = self.settings
        return Pipeline(
            self.writer,
            lambda: self.llm,  # built at its first use, and a server may wrap it after start-up
            PipelineSettings(
                link_k=s.link_k, link_threshold=s.link_threshold, max_links=s.max_links, link_choice=s.link_choice,
                max_boxes=s.max_boxes, model_fields=model_fields(s),
            ),
            self.phrases,
        )

    @cached_property
    def notes(self) -> NoteService:
        from .services.trash import Trash

        return NoteService(self.writer, self.pipeline, Trash(self.vault.index_dir / "trash", self.settings.trash_days))

    @cached_property
    def importer(self) -> Importer:
        return Importer(self.notes, lambda: self.between_batches())

    @cached_property
    def ingester(self) -> Ingester:
        return Ingester(self.notes)

    @cached_property
    def doctor(self) -> "Doctor":
        from .services.doctor import Doctor

        return Doctor(self.vault, self.index, self.indexer, self.notes, lambda: self.vectors)

    @cached_property
    def search(self) -> SearchService:
        s = self.settings
        return SearchService(
            self.indexer,
            RetrievalSettings(
                fusion=s.fusion,
                weights={"keyword": s.keyword_weight, "substring": s.keyword_weight, "semantic": s.semantic_weight, "graph": s.graph_weight},
                pagerank_damping=s.pagerank_damping,
                pagerank_iterations=s.pagerank_iterations,
                name_boost=s.name_boost,
                time_boost=s.time_boost,
                neighbour_share=s.neighbour_share,
                diversity=s.diversity,
                min_similarity=s.min_similarity,
                min_share=s.min_share,
            ),
        )

    def close(self) -> None:
        if "indexer" in self.__dict__ and self.indexer.watcher is not None:
            self.indexer.watcher.close()
        if "llm" in self.__dict__ and hasattr(self.llm, "close"):
            self.llm.close()
        if "index" in self.__dict__:
            self.index.close()
