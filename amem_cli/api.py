"""The Python API, in the form the A-MEM write-up deploys it: a thin adapter that runs the
operations (`amem_cli.operations`) in this process and hands out notes."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from .config import Settings, load_settings
from .llm.base import LLM
from .models import Note, SearchHit, SyncReport
from .operations import Facade
from .services.block import render_block
from .services.notes import new_note
from .wire.intake import Import, ImportReport
from .wire.current import (
    Consolidate, ConsolidateResult, ForgetExpired, Suggestion, Supersede, SupersedeResult, SupersedeSuggestions,
)
from .wire.editing import AddMany, AddNote, Evolve, EvolveResult, History, Remove, Revision, Trash, TrashEntry, Undo
from .wire.notes import Add, Block, ListNotes, Search, Show
from .wire.queue import Process, Queue, QueueResult
from .wire.vault import BoxesRebuilt, Doctor, DoctorReport, RebuildBoxes, Reindex, ReindexResult, Status, Sync, VaultStatus


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
        return new_note(content, keywords=keywords, tags=tags, context=context, **fields)


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
        model = None if llm is None or isinstance(llm, str) else llm  # a ready model object (tests, or a caller's own backend)
        if model is not None and settings.model_fields == "auto":
            settings = replace(settings, model_fields="all")  # a caller's own model object writes every field
        # A long-lived process: the OS says which files others edit, rather than each call
        # looking at the whole vault (edits show up within ~0.05 s).
        self._facade = Facade(settings, create=True, llm=model, watch=True)
        self._root = self._facade.root  # the vault is made here, if it is not there

    @property
    def settings(self) -> Settings:
        """The settings in effect (`amem config show`)."""
        return self._facade.settings

    @property
    def llm_model(self) -> str | None:
        """The GGUF file the pipeline uses (None: the bundled default)."""
        return self._facade.settings.model

    @property
    def path(self) -> Path:
        return self._root

    # -- writing --------------------------------------------------------------------
    def add_note(self, note: Note, *, after: str | None = None) -> Note:
        """Add a note made already (`NoteBuilder`), as it is."""
        return self._facade.run(AddNote({**note.to_dict(), "extra": note.extra}, after=after))

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
        boxes: Iterable[str] | None = None,
        ttl: timedelta | str | None = None,
        expires: datetime | str | None = None,
    ) -> Note:
        """Add one note; `after` continues the sequence of an existing note; `defer`
        stores it at once and queues the model's work (when there is a model) for
        `process()`. Secrets (API keys, tokens, passwords) become `[REDACTED:kind]` unless
        `redact=False`. `boxes`: yours to give (else amem files the note into the vault's
        topics). `ttl` ("30d" or a timedelta) or `expires`: when it stops being
        true (it leaves search then). The same text as a note's already is not stored
        again: that note is returned, and records the date in
        `metadata["amem_occurrences"]`. A note that changes a fact of an older one
        supersedes it (`note.supersedes`)."""
        if isinstance(ttl, timedelta):
            ttl = f"{int(ttl.total_seconds())}s"
        return self._facade.run(Add(
            content, keywords=_listed(keywords), tags=_listed(tags), context=context, created_at=_text(created_at),
            metadata=None if metadata is None else dict(metadata), after=after, wait=not defer, redact=redact,
            boxes=_listed(boxes), ttl=ttl, expires=_text(expires),
        )).note

    def add_many(
        self, items: Iterable[Mapping[str, Any]], *, after: str | None = None, defer: bool = False, redact: bool = True
    ) -> list[Note]:
        """Add notes that arrive together (a conversation, a transcript), chained in order."""
        return self._facade.run(AddMany(list(items), after=after, wait=not defer, redact=redact))

    def import_file(self, path: str | Path, *, defer: bool = False, redact: bool = True, batch: int = 256) -> ImportReport:
        """Import a JSONL file (one note a line; '-' reads standard input) or a folder of
        Markdown files, `batch` notes at a time. Bad lines are skipped and listed in
        `report.problems`; lines imported before are skipped too (`report.duplicates`).
        `report.ids`: the new notes."""
        stdin = None
        if str(path) == "-":
            from .utf8 import raw_stdin

            stdin = raw_stdin()
        else:
            path = Path(path).expanduser().absolute()
        return self._facade.run(Import(str(path), wait=not defer, batch=batch, redact=redact, stdin=stdin))

    def process(self, limit: int | None = None) -> list[str]:
        """Do the deferred work (construction, links, evolution); returns the notes done."""
        return self._facade.run(Process(limit=limit)).processed

    def rebuild_boxes(self) -> BoxesRebuilt:
        """`amem boxes --rebuild`: file the notes amem filed into the vault's topics again
        (the boxes a person gave or moved notes into stay); each note moved is a revision."""
        return self._facade.run(RebuildBoxes())

    def delete(self, note_id: str, *, purge: bool = False) -> Note:
        """Remove a note (and the links to it); `undo(note_id)` brings it back, for
        `trash_days` days, unless `purge` keeps nothing of it."""
        return self._facade.run(Remove([note_id], purge=purge)).notes[0]

    def undo(self, note_id: str) -> Note:
        """Undo amem's last change to a note (`amem undo`), or bring back a removed note:
        its newest version in the trash, or `ID@N`, the Nth newest (see `trash`)."""
        return self._facade.run(Undo(note_id)).note

    def trash(self, note_id: str | None = None) -> list[TrashEntry]:
        """The removed notes `undo` can bring back (of one id, or all), newest first (`amem trash`)."""
        return self._facade.run(Trash(note_id))

    def evolve(self, note_id: str, *, dry_run: bool = False) -> EvolveResult:
        """Link a note again and let the notes it links evolve (`amem evolve`)."""
        return self._facade.run(Evolve(note_id, dry_run=dry_run))

    def supersede(self, old: str, new: str, *, undo: bool = False) -> SupersedeResult:
        """Say that `new` supersedes `old` (`amem supersede`); `undo`: that it does not."""
        return self._facade.run(Supersede(old, new, undo=undo))

    def supersede_suggestions(self) -> list[Suggestion]:
        """The pairs the detector was unsure of (`amem supersede --suggest`)."""
        return self._facade.run(SupersedeSuggestions())

    def consolidate(self, *, dry_run: bool = False) -> ConsolidateResult:
        """Merge near-duplicates (`amem consolidate`): `result.groups`, each `kept`, `merged`, `dates`."""
        return self._facade.run(Consolidate(dry_run=dry_run))

    def forget_expired(self, *, dry_run: bool = False) -> list[str]:
        """Move the notes past their expiry to the trash (`amem forget --expired`); their ids."""
        return self._facade.run(ForgetExpired(dry_run=dry_run)).removed

    # -- reading --------------------------------------------------------------------
    def get(self, note_id: str) -> Note:
        return self._facade.run(Show(note_id)).note

    def notes(self, *, tags: list[str] | None = None, boxes: list[str] | None = None,
              since: datetime | str | None = None, until: datetime | str | None = None,
              limit: int | None = None) -> list[Note]:
        """The notes, newest first (`amem list`)."""
        return self._facade.run(ListNotes(tags=tags, boxes=boxes, since=_text(since), until=_text(until), limit=limit))

    def search(self, query: str, limit: int = 5, *, mode: str = "hybrid", tags: list[str] | None = None,
               boxes: list[str] | None = None, since: datetime | str | None = None,
               until: datetime | str | None = None, floor: bool = False, top_k: int | None = None,
               now: datetime | str | None = None, as_of: datetime | str | None = None,
               include_expired: bool = False) -> list[SearchHit]:
        """Hits best first; `floor=True` shows only those the query matched, as `amem
        search` does (else `limit` of them whenever the vault holds as many). `top_k`:
        the old name of `limit`. `now`: when the query is asked (default: the current
        time); "four weeks ago" in it is read against it. A note that superseded a hit
        ranks above it (`hit.replaces`, `hit.replaced_by`); `as_of` answers as things
        stood then; `include_expired=True` keeps expired notes."""
        return self._facade.run(Search(query, limit=limit if top_k is None else top_k, mode=mode, tags=tags, boxes=boxes, since=_text(since),
                                       until=_text(until), floor=floor, now=_text(now), as_of=_text(as_of),
                                       include_expired=include_expired))

    def retrieve(self, query: str, top_k: int = 5, *, now: datetime | str | None = None) -> list[Note]:
        return [hit.note for hit in self.search(query, top_k, now=now)]

    def build_context(self, query: str | Iterable[Note], *, max_tokens: int | None = 2000, limit: int = 10,
                      top_k: int | None = None, now: datetime | str | None = None, as_of: datetime | str | None = None,
                      history: bool = False, include_expired: bool = False) -> str:
        """A prompt-ready block of memories: the best `limit` notes for a query (or the
        notes given), each with its date, context, keywords and links, within `max_tokens`.
        Only notes the query matched (as `amem context`): "" when it matched none. `top_k`:
        the old name of `limit`. `now`: as for `search`. A note that replaced another says
        "(replaces ID of DATE)"; the one it replaced is left out unless `history`. `as_of`:
        as things stood then."""
        if not isinstance(query, str):
            return render_block(query, max_tokens)
        return self._facade.run(Block(query, max_tokens=max_tokens, limit=limit if top_k is None else top_k,
                                      now=_text(now), as_of=_text(as_of), history=history,
                                      include_expired=include_expired)).block.context

    def history(self, note_id: str) -> list[Revision]:
        """amem's changes to a note (evolution; fields derived again after an edit), oldest first."""
        return self._facade.run(History(note_id))

    def queue(self, limit: int | None = None) -> QueueResult:
        """The queued model work, in the order it is done, and its summary (`amem queue`)."""
        return self._facade.run(Queue(limit=limit))

    # -- the vault ------------------------------------------------------------------
    def sync(self) -> SyncReport:
        """Pick up files edited by others now (otherwise seen within ~0.05 s)."""
        return self._facade.run(Sync())

    def status(self) -> Status:
        """How the index stands against the files (`amem status`)."""
        return self._facade.run(VaultStatus()).status

    def reindex(self) -> ReindexResult:
        """Rebuild the index from the note files and embed every note again."""
        return self._facade.run(Reindex())

    def doctor(self, fix: bool = False) -> DoctorReport:
        """Check that the files, the index, the vectors, the links and the queue agree
        (`report.ok`, `report.problems`); `fix` repairs them from the files first."""
        return self._facade.run(Doctor(fix=fix)).report

    def close(self) -> None:
        self._facade.close()

    def __enter__(self) -> "AgentMemory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _listed(values: Iterable[str] | str | None) -> list[str] | None:
    """A request's list (one string is one item, as `new_note` takes it)."""
    return None if values is None else [values] if isinstance(values, str) else list(values)


def _text(when: datetime | str | None) -> str | None:
    """A date-time as a request carries it."""
    return when.isoformat() if isinstance(when, datetime) else when
