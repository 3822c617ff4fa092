"""The Python API, in the form the A-MEM write-up deploys it."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import load_settings
from .container import Container
from .llm.base import LLM
from .models import Note
from .services.context import build_context
from .services.importer import ImportReport
from .services.notes import NoteService

if TYPE_CHECKING:
    from .services.doctor import DoctorReport


class UntrustedVaultWarning(UserWarning):
    """A vault's amem.toml set settings that count only once the user trusts it."""


class NoteBuilder:
    """Builds a Note ready for `AgentMemory.add_note`."""

    def build(
        self,
        content: str,
        keywords: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        context: str | None = None,
        **fields: Any,
    ) -> Note:
        return NoteService.build(content, keywords=keywords, tags=tags, context=context, **fields)


class AgentMemory:
    """A vault of notes, from Python.

    `AgentMemory("~/notes")`, or the write-up's form
    `AgentMemory(chroma_path=..., graph_path=..., llm_model=...)`: the vault is then the
    folder holding `graph_path` (or `chroma_path`).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        chroma_path: str | Path | None = None,
        graph_path: str | Path | None = None,
        llm_model: str | None = None,
        embedder: str | None = None,
        embedding_model: str | None = None,
        chroma_url: str | None = None,
        llm: str | LLM | None = None,
        **settings: Any,
    ):
        """`llm`: "llama" (the default: llama.cpp with the bundled model, or the GGUF file
        `llm_model` names), "openai" (with `llm_url=`), "none", or an `LLM` object.
        `settings` are any of amem's other settings (README), e.g. `fusion="rrf"`.

        As on the command line, the vault's own amem.toml may set the settings that send
        notes away or load models (`llm_url`, `model`, `chroma_url`...) only once the user
        has trusted it (`amem trust`); otherwise they are ignored, with a warning
        (`warnings.warn`). A program is handed vault paths it did not write (a cloned
        repository, an agent's workspace) just as a person is; what it passes here is its
        own choice and always counts."""
        if path is None and (graph_path or chroma_path):
            path = Path(graph_path or chroma_path).expanduser()
            path = path.parent if path.suffix else path
        notices: list[str] = []
        settings = load_settings(
            dir=str(path) if path is not None else None,
            embedder=embedder,
            embedding_model=embedding_model,
            chroma_url=chroma_url,
            llm=llm if isinstance(llm, str) else None,
            model=llm_model,
            notices=notices,
            **settings,
        )
        for notice in notices:
            warnings.warn(notice, UntrustedVaultWarning, stacklevel=2)
        if llm is not None and not isinstance(llm, str) and settings.model_fields == "auto":
            settings = replace(settings, model_fields="all")  # a caller's own model object writes every field
        self._c = Container(settings, create=True)
        # A long-lived process: let the OS say which files others edit, rather than
        # stat the whole vault before every call (edits show up within ~0.05 s).
        self._c.indexer.watch()
        if llm is not None and not isinstance(llm, str):
            self._c.llm = llm  # a ready model object (tests, or a caller's own backend)

    @property
    def llm_model(self) -> str | None:
        """The GGUF file the pipeline uses (None: the bundled default)."""
        return self._c.settings.model

    @property
    def path(self) -> Path:
        return self._c.vault.root

    def add_note(self, note: Note, *, after: str | None = None) -> Note:
        return self._c.notes.add_note(note, after=after)

    def add(
        self,
        content: str,
        *,
        keywords: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        context: str | None = None,
        created_at: datetime | str | None = None,
        metadata: Mapping[str, Any] | None = None,
        after: str | None = None,
        defer: bool = False,
        redact: bool = True,
    ) -> Note:
        """Add one note; `after` continues the sequence of an existing note; `defer`
        stores it at once and queues the model's work for `process()`. Secrets (API keys,
        tokens, passwords) become `[REDACTED:kind]` unless `redact=False`."""
        return self._c.notes.add(
            content, keywords=keywords, tags=tags, context=context, created_at=created_at, metadata=metadata,
            after=after, defer=defer, redact=redact,
        )

    def add_many(
        self, items: Iterable[Mapping[str, Any]], *, after: str | None = None, defer: bool = False, redact: bool = True
    ) -> list[Note]:
        """Add notes that arrive together (a conversation, a transcript), chained in order."""
        return self._c.notes.add_many(items, after=after, defer=defer, redact=redact)

    def import_file(self, path: str | Path, *, defer: bool = False, redact: bool = True) -> ImportReport:
        """Import a JSONL file (one note a line; '-' reads standard input) or a folder of
        Markdown files. Bad lines are skipped and listed in `report.problems`; lines
        imported before are skipped too (`report.duplicates`). `report.ids`: the new notes."""
        return self._c.importer.import_path(path, defer=defer, redact=redact)

    def process(self, limit: int | None = None) -> list[str]:
        """Do the deferred work (construction, links, evolution); returns the notes done."""
        return self._c.notes.pipeline.process(limit)

    def sync(self):
        """Pick up files edited by others now (otherwise seen within ~0.05 s)."""
        return self._c.indexer.sync(force=True)

    def doctor(self, fix: bool = False) -> "DoctorReport":
        """Check that the files, the index, the vectors, the links and the queue agree
        (`report.ok`, `report.problems`); `fix` repairs them from the files first."""
        return self._c.doctor.run(fix=fix)

    def retrieve(self, query: str, top_k: int = 5) -> list[Note]:
        return [hit.note for hit in self._c.search.search(query, limit=top_k)]

    def search(self, query: str, top_k: int = 5, **filters: Any):
        """Hits best first; `floor=True` shows only those the query matched, as `amem
        search` does (else `top_k` of them whenever the vault holds as many)."""
        return self._c.search.search(query, limit=top_k, **filters)

    def get(self, note_id: str) -> Note:
        return self._c.notes.get(note_id)

    def delete(self, note_id: str, *, purge: bool = False) -> Note:
        """Remove a note (and the links to it); `undo(note_id)` brings it back, for
        `trash_days` days, unless `purge` keeps nothing of it."""
        return self._c.notes.delete(note_id, purge=purge)

    def undo(self, note_id: str) -> Note:
        """Undo amem's last change to a note (`amem undo`), or bring back a removed note:
        its newest version in the trash, or `ID@N`, the Nth newest (see `trash`)."""
        return self._c.notes.undo(note_id)

    def trash(self, note_id: str | None = None) -> list[dict]:
        """The removed notes `undo` can bring back (of one id, or all), newest first, as
        `amem trash --json` lists them: `version` (ID@N), `id`, `path`, `removed`, `text`."""
        from .operations import Context, run

        return run("trash", {"id": note_id}, Context(self._c))

    def build_context(self, query: str | Iterable[Note], *, max_tokens: int | None = 2000, top_k: int = 10) -> str:
        """A prompt-ready block of memories: the best `top_k` notes for a query (or the
        notes given), each with its date, context, keywords and links, within `max_tokens`.
        Only notes the query matched (as `amem context`): "" when it matched none."""
        notes = [h.note for h in self.search(query, top_k, floor=True)] if isinstance(query, str) else query
        return build_context(notes, max_tokens)

    def close(self) -> None:
        self._c.close()

    def __enter__(self) -> "AgentMemory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
