"""Keeps SQLite and the vector store in step with the files (the truth)."""

from __future__ import annotations

import math
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..embed.base import Embedder
from ..errors import IndexMismatchError
from ..ids import collision_id, collision_prefix, settle_ids
from ..index.sqlite import SqliteIndex
from ..index.vectors import VectorIndex, note_of, passage_id, vector_ids
from ..models import Note, SyncReport
from ..retrieve.fields import embedding_texts
from ..vault import MAX_NOTE_BYTES, FileStat, Vault, content_hash
from ..changes import plan_changes
from .jobs import QUEUED
from ..utf8 import mend
from ..wire.vault import Status

EMBED_BATCH = 256
PREFETCHED = 2048  # texts embedded ahead and not yet used, at most (two import batches and more)
Progress = Callable[[int, int], None]


@dataclass
class _Settling:
    """Ids a sync left free (`vacated`: to settle; `gone`: all of them), files it must
    index again under another id, and those it gave another id than the one they want
    (path: wanted)."""

    vacated: set[str] = field(default_factory=set)
    gone: set[str] = field(default_factory=set)
    moved: set[str] = field(default_factory=set)
    gave_way: dict[str, str] = field(default_factory=dict)


def file_time(stat: FileStat) -> datetime:
    """A file's modification time, in UTC, to the second."""
    return datetime.fromtimestamp(stat.mtime_ns // 10**9, timezone.utc)


class Indexer:
    def __init__(
        self,
        vault: Vault,
        index: SqliteIndex,
        embedder: Callable[[], Embedder],
        vectors: Callable[[], VectorIndex],
        deterministic_versions: Callable[[list[Note], Embedder], dict[str, Note]],
        sync_interval: float = 0.0,
        *,
        watch: bool = False,
        on_edit: Callable[[list[Note]], None] | None = None,
        on_new: Callable[[list[Note]], None] | None = None,
        on_saved: Callable[[list[str]], None] | None = None,
    ):
        """`watch`: a long-lived process hears from the OS which files changed (after one
        full look), instead of looking at every file on every call. After a sync,
        `on_edit` is told of the notes whose text a person changed (as indexed before: the
        pipeline derives their derived fields again, `Pipeline.rederive`), `on_new` of the
        notes a person added (files amem never wrote: the pipeline queues their work,
        `Pipeline.queue_new`), `on_saved` of the notes whose files another program saved
        over (the links such a save undid are mended from the other notes,
        `mending.mend_links`)."""
        self.vault = vault
        self.index = index
        self._embedder = embedder
        self._vectors = vectors
        # {id: note} as each would be without a model's fields: the pipeline's
        # deterministic method (`steps.construct.deterministic_versions`), given by the container.
        self._deterministic_versions = deterministic_versions
        self._vectors_seen: str | None = None  # the last vector write this process knows of
        self.problems: list[str] = []  # bad files met by sync in this run, for the caller to show (`take_problems`)
        # A long-lived process (the API) looks at the files at most this often; its own
        # writes are indexed at once, so only edits by others wait.
        self.sync_interval = sync_interval
        self._synced_at = -math.inf
        self._seen: dict[str, FileStat] | None = None  # the files as of the last full look
        self._watch = watch
        self._watcher = None  # a VaultWatcher, once the first sync looks
        # Embeddings started ahead of the write that needs them: text -> (batch, row).
        self._prefetched: OrderedDict[str, tuple[Future, int]] = OrderedDict()
        self._embedding_thread: ThreadPoolExecutor | None = None
        self._on_edit, self._on_new, self._on_saved = on_edit, on_new, on_saved

    # -- files -> SQLite --------------------------------------------------
    def pending_changes(self) -> int:
        return len(plan_changes(self.vault.scan(), self._known(self.index.files.of())))

    def _changed_paths(self, force: bool) -> list[str] | None:
        """The files worth a look (None: all of them)."""
        if self._watch and self._watcher is None:
            from ..watch import VaultWatcher

            # Started before the full look that follows, so no change after it is missed.
            self._watcher = VaultWatcher(self.vault.root).start() or False  # False: this system cannot watch
        if force or not self._watcher or self._seen is None:
            return None
        paths = self._watcher.take()
        return None if paths is None else sorted(paths)

    def take_problems(self) -> list[str]:
        """The problems met since last asked (a note file it could not read), each once."""
        found = list(dict.fromkeys(self.problems))
        self.problems.clear()
        return found

    def close(self) -> None:
        if self._watcher:
            self._watcher.close()

    def _on_disk(self, paths: list[str] | None) -> dict[str, FileStat]:
        if paths is None:
            disk = self.vault.scan()
            self.problems.extend(f"{name}: its name is not UTF-8, so it was skipped; rename it" for name in self.vault.bad_names)
            return disk
        return {p: stat for p in paths if not mend(p)[1] and (stat := self.vault.stat(p)) is not None}

    @staticmethod
    def _known(rows: dict) -> dict[str, FileStat]:
        return {p: FileStat(r.mtime_ns, r.size) for p, r in rows.items()}

    def sync(self, progress: Progress | None = None, *, force: bool = False, paths: list[str] | None = None) -> SyncReport:
        """Pick up files a person added, edited or deleted (all, or those `paths`).
        Cheap when nothing changed."""
        report = SyncReport()
        if paths is None:
            if not force and time.monotonic() - self._synced_at < self.sync_interval:
                return report
            self._synced_at = time.monotonic()
            paths = self._changed_paths(force)
        if paths == []:
            return report
        disk = self._on_disk(paths)
        if paths is None and disk == self._seen and not force:
            return report  # nothing moved since the last full look
        if not plan_changes(disk, self._known(self.index.files.of(paths))):
            if paths is None:
                self._seen = disk
            return report
        with self.vault.lock(), self.index.transaction():
            # Again under the lock: another process may have indexed them meanwhile.
            disk, rows = self._on_disk(paths), self.index.files.of(paths)
            changes = plan_changes(disk, self._known(rows))
            ids = _Settling()
            for path in changes.removed:
                row = rows[path]
                if row.note_id and self.index.notes.path_of(row.note_id) == path:
                    self.index.notes.delete(row.note_id)
                    ids.vacated.add(row.note_id)
                    ids.gone.add(row.note_id)
                    report.removed += 1
                self.index.files.remove(path)
            todo = changes.modified + changes.added
            for n, path in enumerate(todo, 1):
                self._sync_file(path, disk[path], rows.get(path), report, ids)
                if progress:
                    progress(n, len(todo))
            self._settle(ids, report)
            for note_id in sorted(ids.gone):
                if self.index.notes.path_of(note_id) is None:  # no file holds it now (not moved): its queued work goes too
                    self.index.jobs.drop(note_id)
        if paths is None:
            self._seen = disk
        self.problems.extend(report.errors)
        if report.edited and self._on_edit is not None:
            self._on_edit(report.edited)
        if report.new and self._on_new is not None:
            self._on_new(report.new)
        if report.saved and self._on_saved is not None and not self.vault.read_only:
            self._on_saved(report.saved)
        return report

    def _sync_file(self, path: str, stat: FileStat, row, report: SyncReport, ids: "_Settling", *, force: bool = False) -> None:
        try:
            data = self.vault.read_settled(path, limit=MAX_NOTE_BYTES)  # an empty file may be a save under way
        except OSError:
            return  # vanished since the scan: the next sync sees it gone
        if data is None:
            return  # being saved in place: left as indexed, for the sync that sees the save end
        if stat.size != len(data) and (now := self.vault.stat(path)) is not None:
            stat = now  # it got its bytes while amem waited: the row must say what was read
        digest = content_hash(data)
        if row is not None and row.hash == digest and not force:
            self.index.files.set(path, stat, digest, row.note_id, row.error)
            return
        note, error, named = self.vault.parse(path, data)
        if note is not None:
            wanted = note.id
            note.id, error = self._place(path, wanted, named, ids)
            ids.gave_way.pop(path, None)
            if note.id is None:
                note = None
            elif note.id != wanted:
                ids.gave_way[path] = wanted
        if row is not None and row.note_id and (note is None or note.id != row.note_id):
            if self.index.notes.path_of(row.note_id) == path:
                self.index.notes.delete(row.note_id)
                ids.vacated.add(row.note_id)
                ids.gone.add(row.note_id)
        if error:
            report.errors.append(error)
        if note is None:
            self.index.files.set(path, stat, digest, None, error)
            return
        before = self.index.notes.get_many([note.id], links=False).get(note.id) if row is not None and row.note_id == note.id else None
        if before is not None and before.content != note.content:
            report.edited.append(before)
        if note.created_at is None:
            # A file without a date (one a person wrote): the date it was first indexed
            # with, else its modification time. Not written into the file for that alone;
            # amem writes it when it rewrites the file anyway (`NoteWriter`).
            note.created_at = before.created_at if before is not None and before.created_at else file_time(stat)
        self.index.notes.upsert(note, path)
        self.index.files.set(path, stat, digest, note.id, None)
        if QUEUED in note.metadata and note.extra.get("pinned") is not True and not self.vault.read_only:
            # The file says its work is owed (a save from an editor's old copy can bring
            # that back after the work was done): it is queued, once (see `Doctor._owed`).
            self.index.jobs.enqueue([note.id], str(note.metadata[QUEUED]))
        if before is None and note.updated_at is None:  # amem writes `updated` into every note it writes
            report.new.append(note)
        if row is None:
            report.added += 1
        else:
            report.updated += 1
            report.saved.append(note.id)

    # -- ids of files that name none --------------------------------------
    def _place(self, path: str, wanted: str, named: bool, ids: "_Settling") -> tuple[str | None, str | None]:
        """The id this file gets where another file wants the same (a file name without
        an `id:`: `My Note.md` beside `My-Note.md`), or None and why. `ids.settle_ids`
        decides, from the files alone; a file it moves to another id is indexed again
        (`_settle`)."""
        contenders = self._contenders(wanted, but=path)
        holder = self.index.notes.path_of(wanted)
        if named and holder in contenders and holder != path and contenders[holder][1]:
            # Two files name the same id: the one indexed first keeps it.
            return None, f"{path}: the id {wanted} is already used by {holder}; give this note another id"
        if not contenders:
            return wanted, None
        contenders[path] = (wanted, named)
        settled = settle_ids(contenders)
        for other, new in settled.items():
            if other != path and self._id_of(other) != new:
                ids.moved.add(other)
        if settled[path] is None:
            winner = next(p for p, new in settled.items() if new == wanted)
            return None, f"{path}: the id {wanted} is already used by {winner}; give this note another id"
        return settled[path], None

    def _contenders(self, wanted: str, but: str | None = None) -> dict[str, tuple[str, bool]]:
        """The files other than `but` that want the id `wanted` (path: (wanted, whether
        it names it)): the one indexed under it and those indexed under their
        `collision_id` of it. Read from disk only when there are any (rarely)."""
        holder = self.index.notes.path_of(wanted)
        paths = {holder} | {p for i, p in self.index.notes.with_prefix(collision_prefix(wanted)) if i == collision_id(wanted, p)}
        out = {}
        for path in paths - {None, but}:
            try:
                note, _, named = self.vault.parse(path, self.vault.read_bytes(path, limit=MAX_NOTE_BYTES))
            except OSError:
                continue  # gone: the sync that sees it gone gives its id back
            if note is not None and note.id == wanted:  # (a loser amem has rewritten names its own id now)
                out[path] = (wanted, named)
        return out

    def _id_of(self, path: str) -> str | None:
        row = self.index.files.of([path]).get(path)
        return row.note_id if row else None

    def _settle(self, ids: "_Settling", report: SyncReport) -> None:
        """Give each id left free to the file that wants it most, and index again the
        files `_place` moved to another id (until none moves; each file once)."""
        done: set[str] = set()
        while ids.vacated or ids.moved - done:
            for wanted in sorted(ids.vacated):
                if self.index.notes.path_of(wanted) is None:
                    for other, new in settle_ids(self._contenders(wanted)).items():
                        if self._id_of(other) != new:
                            ids.moved.add(other)
            ids.vacated.clear()
            for path in sorted(ids.moved - done):
                done.add(path)
                stat = self.vault.stat(path)
                if stat is not None:
                    self._sync_file(path, stat, self.index.files.of([path]).get(path), report, ids, force=True)
        for path, wanted in sorted(ids.gave_way.items()):  # once all have settled: the holder named is the last
            report.errors.append(f"{path}: {self.index.notes.path_of(wanted)} has the id {wanted} this note's name gives; "
                                 f"this note is {self._id_of(path)} (give one of them an `id:` of its own)")

    def record_written(self, note: Note, path: str, stat: FileStat, text: str) -> str:
        """Index a note amem has just written (caller holds the lock). Returns the hash of its bytes."""
        digest = content_hash(text.encode("utf-8"))
        with self.index.transaction():
            self.index.notes.upsert(note, path)
            self.index.files.set(path, stat, digest, note.id, None)
        return digest

    # -- SQLite -> vectors ------------------------------------------------
    def embedder(self) -> Embedder:
        return self._embedder()

    def prefetch(self, notes: list[Note]) -> None:
        """Start embedding these notes' texts on a background thread (the model runs outside
        the GIL), so the files are written while the model works; `flush_vectors` takes the
        vectors from here. The text is the key: a note changed meanwhile is embedded anew."""
        texts = list(dict.fromkeys(text for n in notes for text in embedding_texts(n)))
        if not texts:
            return
        if self._embedding_thread is None:
            self._embedding_thread = ThreadPoolExecutor(1, thread_name_prefix="amem-embed")
        batch = self._embedding_thread.submit(self._embedder().embed, texts)
        for row, text in enumerate(texts):
            self._prefetched[text] = (batch, row)
            self._prefetched.move_to_end(text)
        while len(self._prefetched) > PREFETCHED:
            self._prefetched.popitem(last=False)

    def _embed(self, texts: list[str]) -> list[list[float]]:
        """The texts' vectors: those prefetched, and the rest embedded now."""
        out: list = [None] * len(texts)
        for k, text in enumerate(texts):
            if (ahead := self._prefetched.pop(text, None)) is not None:
                batch, row = ahead
                try:
                    out[k] = batch.result()[row]
                except Exception:
                    pass  # embedded again below, where the error (if it recurs) reaches the caller
        missing = [k for k, v in enumerate(out) if v is None]
        if missing:
            for k, vector in zip(missing, self._embedder().embed([texts[k] for k in missing])):
                out[k] = vector
        return out

    def _texts(self, notes: list[Note], deterministic: dict[str, Note]) -> dict[str, str]:
        """{vector id: text} for these notes: each note's whole text (a long note's first
        passage, with its fields) and, when a model wrote some of its fields, the note as
        it would be without the model too (`deterministic`: {id: that note}); then a long
        note's other passages. A model's fields only add a way to find a note: a small
        model's vague context or broad tags must not move the note's only vector away
        from what it says."""
        out: dict[str, str] = {}
        for note in notes:
            whole, *rest = embedding_texts(note)
            out[note.id] = whole
            if note.id in deterministic and (own := embedding_texts(deterministic[note.id])[0]) != whole:
                out[vector_ids(note.id)[1]] = own
            out.update((passage_id(note.id, n), text) for n, text in enumerate(rest, 2))
        return out

    def vectors(self) -> VectorIndex:
        """The vector store, after checking it holds vectors of this embedder."""
        embedder = self._embedder()
        stored = self.index.get_meta("embedder")
        if stored is not None and stored != embedder.identity:
            raise IndexMismatchError(
                f"the index holds vectors of {stored}, but the embedder is {embedder.identity}",
                hint="run `amem reindex` to re-embed every note with the new model",
            )
        # Opening Chroma's local store writes to its SQLite file, which is not safe
        # across processes: only under the writer lock.
        with self.vault.lock():
            vectors = self._vectors()
            if stored is None:
                self.index.set_meta("embedder", embedder.identity)
            # Another process wrote vectors since this one last looked: reload its view.
            stamp = self.index.get_meta("vectors_written")
            if stamp != self._vectors_seen:
                if self._vectors_seen is not None:
                    vectors.reload()
                self._vectors_seen = stamp
        return vectors

    def _wrote_vectors(self) -> None:
        """Caller holds the lock and has just written to the vector store."""
        self._vectors_seen = uuid.uuid4().hex
        self.index.set_meta("vectors_written", self._vectors_seen)

    def vectors_of(self, ids: list[str]) -> dict[str, list[float]]:
        with self.vault.lock():
            return self.vectors().vectors_of(ids)

    def nearest(self, vector: list[float], k: int) -> list[tuple[str, float]]:
        return self.nearest_many([vector], k)[0]

    def nearest_many(self, vectors: list[list[float]], k: int) -> list[list[tuple[str, float]]]:
        """For each vector, the k nearest notes by cosine similarity (of a note's nearest
        vector), read under the writer lock (a concurrent write to Chroma's
        local store would fail the read with 'locked')."""
        if not vectors:
            return []
        # A note takes one or two places (its own vector, its deterministic one), a long
        # note one more for each passage: read 2k places, and 4k only when a list then
        # holds fewer than k notes while the store has more (reading 4k every time cost
        # a warm search ~1 ms on a vault of short notes).
        with self.vault.lock():
            for fetch in (2 * k, 4 * k):
                rows = self.vectors().query(vectors, fetch)
                out = [_best_per_note(row, k) for row in rows]
                if all(len(notes) == k or len(row) < fetch for notes, row in zip(out, rows)):
                    break
        return out

    def flush_vectors(self, progress: Progress | None = None) -> int:
        """Embed notes whose text changed, drop vectors of deleted notes. Returns how many were embedded."""
        if not self.index.notes.unembedded() and not self.index.notes.vector_deletes():
            return 0
        done = 0
        with self.vault.lock():
            vectors = self.vectors()
            # Deletes first: a note deleted and indexed again under its id (a renamed file)
            # is embedded afresh below, and a late delete would drop that vector.
            deletes = self.index.notes.vector_deletes()
            if deletes:
                vectors.delete([v for i in deletes for v in vector_ids(i)])
                self._wrote_vectors()
                with self.index.transaction():
                    self.index.notes.clear_vector_deletes(deletes)
            pending = self.index.notes.unembedded()
            for start in range(0, len(pending), EMBED_BATCH):
                batch = pending[start : start + EMBED_BATCH]
                notes = self.index.notes.get_many(batch, links=False)
                ids = [i for i in batch if i in notes]
                deterministic = self._deterministic_versions([notes[i] for i in ids], self._embedder())
                texts = self._texts([notes[i] for i in ids], deterministic)
                vectors.upsert(list(texts), self._embed(list(texts.values())))
                # A note whose fields a person has taken over keeps one vector; a note
                # made shorter, fewer passages (only a note embedded before may have
                # any: asking Chroma to delete ids it does not hold costs ~3 ms a note).
                before = self.index.notes.embedded_before(ids)
                vectors.delete([v for i in ids for v in vector_ids(i, passages=i in before)[1:] if v not in texts])
                self._wrote_vectors()
                with self.index.transaction():
                    self.index.notes.mark_embedded(ids, deterministic)
                done += len(ids)
                if progress:
                    progress(done, len(pending))
        return done

    def reindex(self, progress: Progress | None = None) -> SyncReport:
        """Rebuild SQLite from the files and re-embed every note."""
        self.vault.check_writable()  # a read-only vault's index is rebuilt by removing it from the cache
        with self.vault.lock():
            self.index.reset()
            report = self.sync(progress=progress, force=True)
            vectors = self._vectors()
            vectors.reset()
            self._wrote_vectors()
            with self.index.transaction():
                self.index.set_meta("embedder", self._embedder().identity)
                self.index.notes.clear_vector_deletes()
                self.index.notes.clear_embedded()
        self.flush_vectors(progress=progress)
        return report

    # -- health -----------------------------------------------------------
    def status(self, vector_store: str) -> Status:
        """How the index stands against the files, read before any sync."""
        pending = self.pending_changes()
        identity = self.index.get_meta("embedder")
        name, _, dims = identity.rpartition(":") if identity else (None, "", None)
        pairs = self.index.links.pairs()
        return Status(
            vault=str(self.vault.root),
            notes=len(self.vault.scan()),
            indexed=self.index.notes.count(),
            embedded=self.index.notes.embedded_count(),
            links=len(pairs["link"]),
            sequence_links=len(pairs["sequence"]),
            boxes=len(self.index.notes.boxes()),
            pending_changes=pending,
            embedding_model=name,
            embedding_dimensions=int(dims) if dims else None,
            vector_store=vector_store,
            errors=self.index.files.errors(),
        )


def _best_per_note(row: list[tuple[str, float]], k: int) -> list[tuple[str, float]]:
    """The first k notes of a best-first list of (vector id, similarity), each with its
    nearest vector's similarity."""
    best: dict[str, float] = {}
    for vector_id, similarity in row:
        best.setdefault(note_of(vector_id), similarity)
        if len(best) == k:
            break
    return list(best.items())
