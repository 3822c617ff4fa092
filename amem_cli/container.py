"""The composition root: the one place that reads settings and picks backends.

A container is given everything at construction (a caller's own model, a server's hooks)
and builds each part on first use, from the settings and the parts it needs; no part is
replaced once built.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .config import Settings, model_fields
from .embed.base import Embedder
from .index.sqlite import SqliteIndex
from .index.vectors import VectorIndex
from .llm.base import LLM
from .models import Note
from .places import cache_root
from .retrieve.fields import SearchFields
from .services.importer import Importer
from .services.indexer import Indexer
from .services.ingest import Ingester
from .services.jobs import JobQueue
from .services.mending import mend_links
from .services.notes import NoteService
from .services.pipeline import Pipeline, PipelineSettings
from .services.search import RetrievalSettings, SearchService
from .services.supersession import Supersessions
from .services.writer import NoteWriter
from .steps.construct import PhraseVectors, deterministic_versions
from .vault import Vault

if TYPE_CHECKING:
    from .services.doctor import Doctor

# Wraps the model once it is made (a server's `PausingLLM`), given the vault it works on.
ModelWrapper = Callable[[LLM, Vault], LLM]


def shared(build: Callable[[Container], Any]) -> cached_property:
    """A part that does not depend on the model choice (`config.MODEL_CHOICE`): a
    `variant` takes it from the container it was made from instead of building its own."""

    @functools.wraps(build)
    def part(self: Container) -> Any:
        return getattr(self._shared, build.__name__) if self._shared is not None else build(self)

    return cached_property(part)


class Container:
    def __init__(self, settings: Settings, *, create: bool = False, llm: LLM | None = None,
                 wrap_llm: ModelWrapper | None = None, between_batches: Callable[[], None] | None = None,
                 watch: bool = False, shared_with: Container | None = None):
        """`create`: make the vault's folder if it is missing. `llm`: a model object to use
        (else the settings' `make_llm`). `wrap_llm`: wraps the model once made.
        `between_batches`: called between an import's batches (a server lets waiting
        commands in). `watch`: a long-lived process hears from the OS which files others
        change, instead of looking at every file before each call. `shared_with`: see
        `variant`."""
        self.settings = settings
        self._given_llm, self._wrap_llm, self._watch = llm, wrap_llm, watch
        self._between_batches = between_batches or (lambda: None)
        self._shared = shared_with
        if shared_with is not None:
            self.vault = shared_with.vault
        else:
            self.vault = Vault(settings.dir, cache=cache_root(settings.cache_dir), date_order=settings.date_order)
            self.vault.ensure(create=create)

    def variant(self, settings: Settings) -> Container:
        """A container for one command whose settings differ from these in the model
        choice only (`amem --llm none add ...` through the warm server): the vault, the
        stores, the embedder, the index and search are this one's; the model and the
        pipeline are built from `settings`."""
        return Container(settings, wrap_llm=self._wrap_llm, between_batches=self._between_batches, shared_with=self)

    @shared
    def index(self) -> SqliteIndex:
        return SqliteIndex(self.vault.index_dir / "index.db", SearchFields())

    @shared
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

    @shared
    def vectors(self) -> VectorIndex:
        from .index.vectors import ChromaVectorIndex

        s = self.settings
        if s.chroma_url:
            # One server may hold many vaults: one collection per vault unless named.
            name = s.chroma_collection or "amem-" + hashlib.sha1(str(self.vault.root).encode()).hexdigest()[:16]
            return ChromaVectorIndex(url=s.chroma_url, collection=name)
        return ChromaVectorIndex(path=self.vault.index_dir / "chroma", collection=s.chroma_collection or "amem_notes")

    @shared
    def indexer(self) -> Indexer:
        # Whatever command's sync sees a person's edit of a note's text, its derived fields
        # follow; notes a person added get the work an added note gets (the pipeline is
        # built on this indexer, so it is asked for when a sync needs it); links another
        # program's save undid are mended from the other notes.
        return Indexer(
            self.vault, self.index, lambda: self.embedder, lambda: self.vectors, deterministic_versions,
            sync_interval=self.settings.sync_interval, watch=self._watch,
            on_edit=self._rederive, on_new=self._queue_new, on_saved=self._mend,
        )

    def _rederive(self, edited: list[Note]) -> None:
        self.pipeline.rederive(edited)

    def _queue_new(self, new: list[Note]) -> None:
        self.pipeline.queue_new(new)

    def _mend(self, saved: list[str]) -> None:
        mend_links(self.writer, saved)

    @shared
    def writer(self) -> NoteWriter:
        return NoteWriter(self.vault, self.index, self.indexer)

    @shared
    def queue(self) -> JobQueue:
        return JobQueue(self.index)

    @shared
    def phrases(self) -> PhraseVectors:
        return PhraseVectors()

    @shared
    def search(self) -> SearchService:
        s = self.settings
        return SearchService(
            self.index, self.indexer,
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

    # -- the parts that depend on the model choice ----------------------------
    @cached_property
    def llm(self) -> LLM | None:
        """The model, or None (`--llm none`): the pipeline then uses its deterministic methods."""
        llm = self._given_llm
        if llm is None:
            from .llm import make_llm

            s = self.settings
            llm = make_llm(s.llm, model_path=s.model, url=s.llm_url, model_name=s.llm_model, threads=s.threads or None)
        return llm if llm is None or self._wrap_llm is None else self._wrap_llm(llm, self.vault)

    @cached_property
    def pipeline(self) -> Pipeline:
        s = self.settings
        return Pipeline(
            self.vault, self.index, self.indexer, self.writer, self.queue,
            lambda: self.llm,  # made at its first use: finding a model file may fail, and only work that needs it should
            PipelineSettings(
                link_k=s.link_k, link_threshold=s.link_threshold, max_links=s.max_links, link_choice=s.link_choice,
                box_similarity=s.box_similarity, model_fields=model_fields(s),
            ),
            self.phrases,
            lambda notes: self.supersessions.detect(notes),  # a queued note's work done: what it supersedes
        )

    @cached_property
    def supersessions(self) -> Supersessions:
        return Supersessions(self.writer, self.pipeline)

    @cached_property
    def notes(self) -> NoteService:
        from .services.trash import Trash

        return NoteService(self.vault, self.index, self.indexer, self.writer, self.pipeline, self.supersessions,
                           Trash(self.vault.index_dir / "trash", self.settings.trash_days), self.settings.date_order)

    @cached_property
    def importer(self) -> Importer:
        return Importer(self.vault, self.index, self.indexer, self.notes, self._between_batches, self.settings.date_order)

    @cached_property
    def ingester(self) -> Ingester:
        return Ingester(self.index, self.indexer, self.notes, self.settings.date_order)

    @cached_property
    def doctor(self) -> "Doctor":
        from .services.doctor import Doctor

        return Doctor(self.vault, self.index, self.indexer, self.notes, self.queue, lambda: self.vectors)

    def close(self) -> None:
        if "llm" in self.__dict__ and hasattr(self.llm, "close"):
            self.llm.close()
        if self._shared is not None:
            return  # its other parts are the other container's, which closes them
        if "indexer" in self.__dict__:
            self.indexer.close()
        if "index" in self.__dict__:
            self.index.close()
