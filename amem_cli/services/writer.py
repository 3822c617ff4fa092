"""Changing stored notes: a note is read fresh from its file, changed, written back
atomically and indexed; a person's save in between wins. `NoteService` and the
pipeline it calls (links, evolution, fields derived again after an edit) share one
writer, built before either of them."""

from __future__ import annotations

import json
import random
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..errors import ConflictError, NotFoundError, UsageError
from ..ids import check_id
from ..markdown import parse_note, render_note
from ..models import Note
from ..steps.evolve import broken_rule
from ..index.sqlite import SqliteIndex
from ..timeutil import now
from ..vault import Vault, content_hash
from .indexer import Indexer

WRITTEN_CACHE = 8192  # notes remembered as written (import batches and the notes they link)
# A note a person saves while amem changes it gets amem's change again on top of their
# bytes, up to this many times, with a pause of up to CONFLICT_PAUSE x the try (seconds)
# between; then the conflict is reported.
CONFLICT_TRIES = 8
CONFLICT_PAUSE = 0.005


class NoteWriter:
    def __init__(self, vault: Vault, index: SqliteIndex, indexer: Indexer):
        self.vault = vault
        self.index = index
        self.indexer = indexer
        # The notes this process wrote last, by path: (hash of the bytes written, the note).
        # A rewrite whose file still holds those bytes skips parsing them again: an import
        # rewrites each new note and its linked notes moments after writing them.
        self._written: OrderedDict[str, tuple[str, Note]] = OrderedDict()

    # -- reads ------------------------------------------------------------
    def get(self, note_id: str, *, sync: bool = True) -> Note:
        note_id = check_id(note_id)
        if sync:
            self.indexer.sync()
            if path := self.index.notes.path_of(note_id):
                self.indexer.sync(paths=[path])  # this one file exactly, even if others are heard of late
        note = self.index.notes.get(note_id)
        if note is None:
            raise NotFoundError(f"no note with the id {note_id}", hint="see `amem list` for the ids")
        return note

    def path_of(self, note_id: str) -> str:
        return self.path(check_id(note_id))

    def path(self, note_id: str) -> str:
        """The note's file (`note_id` as checked already); NotFoundError when there is none."""
        path = self.index.notes.path_of(note_id)
        if path is None:
            raise NotFoundError(f"no note with the id {note_id}", hint="see `amem list` for the ids")
        return path

    # -- changes ----------------------------------------------------------
    def update(
        self, note_id: str, change, *, embed: bool = True, sync: bool = True, journal=None, redo: bool = True
    ) -> Note:
        """Re-read a note from its file, apply `change(note) -> note`, write it back. A
        person's save in between wins: the change is made again on their bytes (`redo`),
        or refused (ConflictError). `sync=False` when the caller has just synced (the
        pipeline's many small updates). `journal(current, new, old_bytes, text)` is
        called just before the file is written."""
        if sync:
            self.indexer.sync()
        with self.vault.lock():
            new = self._until_written(lambda: self._rewrite(note_id, change, journal=journal), CONFLICT_TRIES if redo else 1)
        if embed:
            self.indexer.flush_vectors()
        return new

    def update_many(self, changes: Mapping[str, Any], *, embed: bool = True, sync: bool = True) -> dict[str, Note]:
        """`update` for many notes ({id: change}), under one lock and one index transaction:
        the pipeline links a whole batch this way, each file read and written once, and all
        made durable together."""
        if sync:
            self.indexer.sync()
        with self.vault.lock(), self.index.transaction():
            out = self._until_written(lambda: self._rewrite_many(changes), CONFLICT_TRIES)
        if embed:
            self.indexer.flush_vectors()
        return out

    @staticmethod
    def _until_written(write, tries: int):
        """`write()`, again while a person's save comes between its read and its write
        (their bytes stay on disk, and `write` reads them again), up to `tries` times."""
        for attempt in range(1, tries + 1):
            try:
                return write()
            except ConflictError:
                if attempt == tries:
                    raise
                time.sleep(random.uniform(0, CONFLICT_PAUSE * attempt))  # out of step with a person saving in a loop

    def _rewrite_many(self, changes: Mapping[str, Any], revision=None) -> dict[str, Note]:
        """Notes' reads, changes and one write of them all (the caller holds the lock).
        `revision(note_id, current, new, old_bytes, text)`: each change's revision, all
        recorded ahead of the write (the caller holds no index transaction, so they are
        committed first) and dropped again when the files are not written."""
        out, todo, revisions = {}, [], []
        for note_id, change in changes.items():
            journal = None if revision is None else (
                lambda current, new, before, text, i=note_id: revisions.append(revision(i, current, new, before, text)))
            out[note_id], step = self._changed(note_id, change, journal=journal)
            if step is not None:
                todo.append(step)
        with self.index.transaction():
            recorded = [self.index.revisions.add(r) for r in revisions]
        try:
            stats = self.vault.write_many([(path, text, digest) for path, digest, _, text in todo],
                                          [new.updated_at for _, _, new, _ in todo])
        except BaseException:
            self._drop_revisions(recorded)  # not written: a person's save came first, or the disk failed
            raise
        with self.index.transaction():
            for (path, _, new, text), stat in zip(todo, stats):
                self.record(new, path, stat, text)
        return out

    def _rewrite(self, note_id: str, change, *, journal=None) -> Note:
        """One note's read, change and write (the caller holds the lock)."""
        new, step = self._changed(note_id, change, journal=journal)
        if step is not None:
            path, digest, _, text = step
            self.record(new, path, self.vault.write_text(path, text, expect_hash=digest), text)
        return new

    def _changed(self, note_id: str, change, *, journal=None) -> tuple[Note, tuple[str, str, Note, str] | None]:
        """The note read from its file and changed, and what to write: (path, hash of the
        bytes read, the note, its text), or None when the change changes nothing."""
        path = self.path(note_id)
        data = self.vault.read_settled(path)
        if data is None or not data.strip():  # still empty: a save under way, never a note to write into
            raise ConflictError(f"{path} is being saved by another program, or was emptied: it is empty",
                                hint="run the command again once it is saved; amem left it as it is")
        digest = content_hash(data)
        cached = self._written.get(path)
        if cached is not None and cached[0] == digest:
            current = cached[1].copy()
        else:
            current = parse_note(data.decode("utf-8"), path=path, fallback_id=note_id, date_order=self.vault.date_order)
        new = change(current.copy())
        if new == current:
            return current, None
        if new.created_at is None:  # a person's file without a date: the one it is indexed with (its file's time)
            indexed = self.index.notes.get(note_id)
            new.created_at = indexed.created_at if indexed is not None else None
        new.updated_at = now()
        text = render_note(new)
        if journal is not None:
            journal(current, new, data, text)
        return new, (path, digest, new, text)

    def record(self, note: Note, path: str, stat, text: str) -> None:
        """Index a note just written (the caller holds the lock), and remember it for the next rewrite."""
        digest = self.indexer.record_written(note, path, stat, text)
        self._written[path] = (digest, note.copy())
        self._written.move_to_end(path)
        if len(self._written) > WRITTEN_CACHE:
            self._written.popitem(last=False)

    def revise(self, note_id: str, changes: dict[str, Any], *, cause: str | None, model: str | None) -> Note:
        """Evolution: change a note's context and/or tags (nothing else, within bounds: see
        `broken_rule`), keep the file as it was in the revision log, and re-embed the note."""
        self.indexer.sync()

        def evolve(note: Note) -> Note:
            if problem := broken_rule(changes, note.tags):  # the rules hold whatever the model said
                raise UsageError(f"evolution of {note_id} refused: {problem}")
            evolved = replace(note, **changes)
            return replace(evolved, metadata=note.with_generated(list(changes))) if model else evolved

        # A person's save meanwhile makes it their own version: a model does not change those.
        new = self.revise_with(note_id, evolve, cause=cause, model=model, redo=False)
        self.indexer.flush_vectors()
        return new

    def revise_with(self, note_id: str, change, *, cause: str | None, model: str | None, redo: bool,
                    what: str | None = None) -> Note:
        """`update` (no sync, no embedding) whose change is a revision: the file as it was
        is kept in the revision log, for `history` and `undo`. `redo`: made again on a
        person's save meanwhile, as `update` does; else refused (ConflictError). `what`:
        what it changes beyond context and tags, in words ("supersedes X: ...")."""
        recorded: list[int] = []

        def journal(old: Note, new: Note, before: bytes, text: str) -> None:
            # Recorded ahead of the file: a kill in between leaves a revision that never
            # happened (doctor finds and drops it), never a change without its revision.
            with self.index.transaction():
                recorded.append(self.index.revisions.add(_revision(note_id, cause, model, what, old, new, before, text)))

        try:
            new = self.update(note_id, change, embed=False, sync=False, journal=journal, redo=redo)
        except BaseException:
            self._drop_revisions(recorded)  # the file was not written (a person's save came first)
            raise
        self._drop_revisions(recorded[:-1])  # tries a person's save came between: never written
        return new

    def revise_many(self, changes: Mapping[str, tuple[Any, str | None]], *, cause: str | None,
                    model: str | None) -> dict[str, Note]:
        """`revise_with` (made again on a person's save meanwhile) for many notes, {id:
        (change, what)}: each note changed is one revision, all recorded ahead of one
        write of the files (`Vault.write_many`: one flush to disk). A batch's
        supersessions are recorded this way (one `revise_with` a note a pair was 185 writes,
        each flushed, in a 500-note import)."""

        def revision(note_id: str, old: Note, new: Note, before: bytes, text: str) -> dict:
            return _revision(note_id, cause, model, changes[note_id][1], old, new, before, text)

        with self.vault.lock():
            return self._until_written(
                lambda: self._rewrite_many({i: change for i, (change, _) in changes.items()}, revision), CONFLICT_TRIES)

    def _drop_revisions(self, seqs: list[int]) -> None:
        with self.index.transaction():
            for seq in seqs:
                self.index.revisions.drop(seq)


def _revision(note_id: str, cause: str | None, model: str | None, what: str | None, old: Note, new: Note,
              before: bytes, text: str) -> dict:
    """The revision log's row for a change of a note's file from `before` to `text`."""
    return {
        "note_id": note_id, "cause": cause, "model": model, "at": now().isoformat(),
        "old_context": old.context, "new_context": new.context,
        "old_tags": json.dumps(old.tags), "new_tags": json.dumps(new.tags),
        "old_bytes": before, "new_hash": content_hash(text.encode("utf-8")), "change": what,
    }
