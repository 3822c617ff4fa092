"""`amem doctor`: is the vault consistent? `--fix` repairs it from the files (the truth).

Consistent: every note file can be read; the note ids on disk, in SQLite and in the
vector store are one set; SQLite's and the full-text tables' own checks pass; every link
names a note (however it is written: `links.NameTable`), and a note that keeps backlinks
has one for each; no temp file of an interrupted write is left; sequence pointers agree
(a note's `next` names a note whose `previous` names it back); the queue holds no lost or
duplicated job (a deferred note's file says its work is owed until it is done, so a lost
queue is noticed). A repair never deletes a note file or changes a note's text or the
links a person wrote: the index is rebuilt from the files, and only backlinks and
sequence pointers in the frontmatter are mended. A file that cannot be read (an empty
one too), a link that names no note and a note whose text opens with a second
frontmatter block (a save in two steps that amem wrote into) are the person's to mend:
reported, never touched. A symlink under `.amem/` is refused before doctor runs, as by
every command (`vault.refuse_links`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..ids import settle_ids
from ..index.vectors import note_of
from ..links import NameTable
from ..markdown import second_frontmatter
from ..models import Note
from ..places import hidden
from ..vault import content_hash
from ..wire.vault import DoctorReport, Problem, plural
from .indexer import Indexer
from .jobs import QUEUED, JobQueue

if TYPE_CHECKING:
    from ..index.sqlite import SqliteIndex
    from ..index.vectors import VectorIndex
    from ..vault import Vault
    from .notes import NoteService

# What `Vault.write_many` leaves when killed between its temp files and the renames.
TEMP_FILE = re.compile(r"^\..+\.[A-Za-z0-9_]+\.tmp$")

# Problems only a rebuild of the index mends (a sync does not look at them).
REBUILD = {"sqlite_integrity", "fts_integrity", "fts_mismatch", "embedder_mismatch"}
INDEX = {"unindexed_file", "stale_index", "orphaned_index"}
VECTORS = {"missing_vector", "stale_vector", "orphaned_vector"}
LINKS = {"missing_backlink", "stale_backlink", "broken_sequence"}
# (Those only a person can mend: `wire.vault.PERSON`.)


@dataclass
class _Disk:
    """The vault's note files as they are: path -> hash, id -> (path, note), path -> why
    it cannot be read as a note."""

    hashes: dict[str, str] = field(default_factory=dict)
    notes: dict[str, tuple[str, Note]] = field(default_factory=dict)
    bad: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def names(self) -> NameTable:
        table = NameTable()
        for note_id, (path, note) in self.notes.items():
            table.add(note_id, path, note.extra)
        return table


class Doctor:
    def __init__(self, vault: Vault, index: SqliteIndex, indexer: Indexer, notes: NoteService, queue: JobQueue,
                 vectors: Callable[[], VectorIndex]):
        self.vault = vault
        self.index = index
        self.indexer = indexer
        self.notes = notes  # writes mended backlinks and pointers as any change to a note is written
        self.queue = queue
        # The vector store as it is: `indexer.vectors()` records the embedder, and a check writes nothing.
        self.vectors = vectors

    def run(self, fix: bool = False) -> DoctorReport:
        return self.fix() if fix else self.check()

    # -- checking -----------------------------------------------------------
    def check(self) -> DoctorReport:
        """Look, change nothing. Under the vault's write lock, so no writer is half-way."""
        with self.vault.lock():
            disk = self._read_disk()
            report = DoctorReport(warnings=disk.warnings, notes=len(disk.notes))
            add = report.problems.append
            for path, why in disk.bad.items():
                add(Problem("bad_file", path, why, hint=f"edit {path} by hand (amem never rewrites a file it cannot read)"))
            for note_id, (path, note) in disk.notes.items():
                if second_frontmatter(note.content):
                    add(Problem("second_frontmatter", note_id, f"{path} holds two frontmatter blocks: its text opens with a second",
                                hint=f"keep one of them in {path} (a save in two steps, truncate then write, can leave two)"))
            self._check_temp_files(add)
            self._check_sqlite(add)
            self._check_files(disk, add)
            embedder_ok = self._check_embedder(add)
            if embedder_ok:
                self._check_vectors(add)
            self._check_links(disk, add)
            self._check_queue(disk, add)
            self._check_revisions(disk, add)
        return report

    def _read_disk(self) -> _Disk:
        disk = _Disk()
        vault = self.vault
        read: dict[str, Note] = {}
        claims: dict[str, tuple[str, bool]] = {}
        paths = sorted(vault.scan())
        disk.warnings.extend(f"{name}: its name is not UTF-8, so it is not indexed; rename it" for name in vault.bad_names)
        for path in paths:
            try:
                data = vault.read_bytes(path)
            except OSError as exc:
                disk.bad[path] = f"{path}: cannot read it: {exc.strerror}"
                continue
            disk.hashes[path] = content_hash(data)
            note, error, named = self.vault.parse(path, data)
            if note is None:
                disk.bad[path] = error or f"{path}: not a note"
            else:
                read[path], claims[path] = note, (note.id, named)
        settled = settle_ids(claims)  # as the index gives ids: two files that want one (`Indexer._place`)
        holders = {wanted: path for path, wanted in settled.items() if wanted == claims[path][0]}
        for path, note_id in sorted(settled.items()):
            wanted = claims[path][0]
            if note_id is None:
                disk.warnings.append(f"{path}: the id {wanted} is already used by {holders[wanted]}")
                continue
            if note_id != wanted:
                disk.warnings.append(f"{path}: {holders[wanted]} has the id {wanted} this note's name gives; this note is {note_id}")
            disk.notes[note_id] = (path, replace(read[path], id=note_id))
        return disk

    def temp_files(self) -> list[str]:
        """Temp files of interrupted writes, relative to the vault (hidden folders, where
        amem writes no notes, and the index folder are not looked into)."""
        root = self.vault.root
        found = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not hidden(d)]
            found += [os.path.relpath(os.path.join(folder, f), root) for f in files if TEMP_FILE.match(f)]
        return sorted(found)

    def _check_temp_files(self, add) -> None:
        for rel in self.temp_files():
            add(Problem("temp_file", rel, f"{rel} is left from an interrupted write"))

    def _check_sqlite(self, add) -> None:
        if errors := self.index.integrity_errors():
            add(Problem("sqlite_integrity", "index.db", "SQLite integrity check: " + "; ".join(errors[:3])))
        for table, error in self.index.fulltext.errors().items():
            add(Problem("fts_integrity", table, f"full-text index {table}: {error}"))
        for table, missing, extra in self.index.fulltext.mismatches():
            for note_id in missing:
                add(Problem("fts_mismatch", note_id, f"the note {note_id} has no row in {table}"))
            if extra:
                add(Problem("fts_mismatch", table, f"{extra} rows of {table} belong to no note"))

    def _check_files(self, disk: _Disk, add) -> None:
        rows = self.index.files.of()
        indexed = self.index.notes.paths()
        on_disk = {path: note_id for note_id, (path, _) in disk.notes.items()}
        for path, digest in disk.hashes.items():
            row = rows.get(path)
            note_id = on_disk.get(path)
            if row is None or (note_id is not None and note_id not in indexed):
                add(Problem("unindexed_file", path, f"{path} is not in the index"))
            elif row.hash != digest or row.note_id != note_id or (note_id and indexed[note_id] != path):
                add(Problem("stale_index", path, f"{path} changed since it was indexed"))
        for path in sorted(set(rows) - set(disk.hashes)):
            add(Problem("orphaned_index", path, f"the index lists {path}, which is not on disk"))
        for note_id, path in sorted(indexed.items()):
            # A note whose path is on disk or listed is reported above, by its path.
            if note_id not in disk.notes and path not in disk.hashes and path not in rows:
                add(Problem("orphaned_index", note_id, f"the index holds the note {note_id}, which has no file"))

    def _check_embedder(self, add) -> bool:
        stored = self.index.get_meta("embedder")
        configured = self.indexer.embedder().identity
        if stored is not None and stored != configured:
            add(Problem("embedder_mismatch", stored, f"the index holds vectors of {stored}, the embedder is {configured}"))
            return False
        return True

    def _check_vectors(self, add) -> None:
        index = self.index
        vectors = self.vectors()
        vectors.reload()  # what other processes wrote, not this process's cached view
        stored = set(vectors.ids())
        pending = set(index.notes.unembedded())
        deleting = set(index.notes.vector_deletes())
        ids = index.notes.ids()
        known = set(ids)
        for note_id in ids:
            if note_id not in stored:
                add(Problem("missing_vector", note_id, f"the note {note_id} has no vector"))
            elif note_id in pending:
                add(Problem("stale_vector", note_id, f"the vector of {note_id} is of an older text"))
        for vid in sorted(v for v in stored if note_of(v) not in known):
            state = " (its delete is pending)" if note_of(vid) in deleting else ""
            add(Problem("orphaned_vector", vid, f"the vector store holds {vid}, which is no note{state}"))

    def _check_links(self, disk: _Disk, add) -> None:
        graph = _Links(disk)
        for note_id, (path, note) in disk.notes.items():
            for written in note.links:
                if graph.resolve(written) is None:
                    add(Problem("dangling_link", note_id, f"{path} links {written}, which names no note",
                                hint=f"create that note, or correct the link in {path}"))
            for target in sorted(graph.links[note_id] - {note_id}):
                if disk.notes[target][1].keeps_backlinks and note_id not in graph.backlinks[target]:
                    add(Problem("missing_backlink", target, f"{note_id} links {target}, which lacks the backlink"))
            for written in note.backlinks:
                source = graph.resolve(written)
                if source is None or note_id not in graph.links[source]:
                    add(Problem("stale_backlink", note_id, f"{note_id} has a backlink from {written}, which does not link it"))
            seq = graph.sequence[note_id]
            for end, written in (("next", note.next), ("previous", note.previous)):
                if written and getattr(seq, end) is None:
                    add(Problem("broken_sequence", note_id, f"{note_id} names {written} as its {end}, which does not exist"))
            if seq.next is not None and graph.sequence[seq.next].previous != note_id:
                add(Problem("broken_sequence", note_id, f"{note_id} is followed by {seq.next}, which does not follow it"))
            if seq.previous is not None and graph.sequence[seq.previous].next != note_id:
                add(Problem("broken_sequence", note_id, f"{note_id} follows {seq.previous}, which is followed by another"))

    def _check_queue(self, disk: _Disk, add) -> None:
        for note_id, n in self.index.jobs.duplicates():
            add(Problem("duplicate_job", note_id, f"the note {note_id} is queued {n} times"))
        for note_id in self.index.jobs.queued():
            if note_id not in disk.notes:
                add(Problem("orphaned_job", note_id, f"queued work for {note_id}, which does not exist"))
        for note_id, holder in self.queue.expired():
            add(Problem("expired_claim", note_id, f"the work on {note_id} was claimed by {holder}, which is gone"))
        for note_id in self._owed(disk):
            add(Problem("lost_job", note_id, f"the work on {note_id} was queued (its file says so) but is in no queue"))

    def _owed(self, disk: _Disk) -> dict[str, str]:
        """{note id: when queued} of deferred notes whose work is in no queue."""
        queued = set(self.index.jobs.queued())
        owed = {i: n.metadata[QUEUED] for i, (_, n) in disk.notes.items() if QUEUED in n.metadata}
        return {i: str(when) for i, when in sorted(owed.items()) if i not in queued}

    def _unapplied_revisions(self, disk: _Disk) -> list[tuple[str, int]]:
        """(note id, seq) of latest revisions whose file is still as it was before them:
        recorded ahead of a write that a kill prevented."""
        out = []
        for note_id, seq, old_bytes, new_hash in self.index.revisions.last():
            path = disk.notes[note_id][0] if note_id in disk.notes else None
            now_hash = disk.hashes.get(path) if path else None
            if now_hash is not None and now_hash != new_hash and now_hash == content_hash(bytes(old_bytes)):
                out.append((note_id, seq))
        return out

    def _check_revisions(self, disk: _Disk, add) -> None:
        for note_id, seq in self._unapplied_revisions(disk):
            add(Problem("unapplied_revision", note_id, f"revision {seq} of {note_id} was recorded but never written"))

    # -- repairing ----------------------------------------------------------
    def fix(self) -> DoctorReport:
        """Repair what `check` finds, from the files; then check again. The returned report
        holds what is still wrong (nothing, normally) and what was done."""
        self.vault.check_writable()
        with self.vault.lock():
            before = self.check()
            fixed: list[str] = []
            if not before.ok:
                self._repair(before, fixed)
            after = self.check()
        after.fixed = fixed
        return after

    def _repair(self, report: DoctorReport, fixed: list[str]) -> None:
        kinds = report.kinds()
        for p in report.problems:
            if p.kind == "temp_file":
                (self.vault.root / p.subject).unlink(missing_ok=True)
                fixed.append(f"removed {p.subject}")
        if kinds & REBUILD:
            self.indexer.reindex()
            fixed.append("rebuilt the index from the files and re-embedded every note")
            kinds = self.check().kinds()
        elif kinds & INDEX:
            sync = self.indexer.sync(force=True)
            fixed.append(f"indexed the files again ({sync.added} added, {sync.updated} updated, {sync.removed} removed)")
            if self.check().kinds() & INDEX:  # rows a sync does not see (no file row to go by)
                self.indexer.reindex()
                fixed.append("rebuilt the index from the files and re-embedded every note")
            kinds = self.check().kinds()
        if kinds & LINKS:
            fixed += self._mend_links()
        if kinds & VECTORS or self.index.notes.unembedded():
            fixed += self._mend_vectors()
        if kinds & {"orphaned_job", "duplicate_job", "expired_claim", "lost_job"}:
            fixed += self._mend_queue()
        if "unapplied_revision" in kinds:
            with self.index.transaction():
                for note_id, seq in self._unapplied_revisions(self._read_disk()):
                    self.index.revisions.drop(seq)
                    fixed.append(f"dropped revision {seq} of {note_id}, which was never written")

    def _mend_links(self) -> list[str]:
        """Links are the person's and the truth of the graph: never changed. Backlinks
        follow them, in the notes that keep backlinks; sequence pointers as
        `_agreed_sequence` (one naming no note goes)."""
        disk = self._read_disk()
        graph = _Links(disk)
        after = _agreed_sequence(graph.sequence)
        before = {b: a for a, b in after.items()}
        done = []
        for note_id, (_, note) in sorted(disk.notes.items()):
            changes: dict[str, Any] = {}
            if note.keeps_backlinks:
                kept = [w for w in note.backlinks if note_id in graph.links.get(graph.resolve(w) or "", ())]
                named = {graph.resolve(w) for w in kept}
                changes["backlinks"] = kept + sorted(graph.linked_from[note_id] - named - {note_id})
            seq = graph.sequence[note_id]
            for end, agreed in (("previous", before.get(note_id)), ("next", after.get(note_id))):
                if getattr(seq, end) != agreed or (getattr(note, end) and agreed is None):
                    changes[end] = agreed
            if replace(note, **changes) != note:
                self.notes.update(note_id, lambda n, changes=changes: replace(n, **changes), embed=False, sync=False)
                done.append(f"mended the backlinks and sequence of {note_id}")
        return done

    def _mend_vectors(self) -> list[str]:
        index = self.index
        vectors = self.indexer.vectors()
        vectors.reload()
        stored, ids = set(vectors.ids()), set(index.notes.ids())
        missing, orphaned = sorted(ids - stored), sorted(v for v in stored if note_of(v) not in ids)
        with index.transaction():
            index.notes.forget_embedded(missing)
            index.notes.queue_vector_deletes(sorted({note_of(v) for v in orphaned}))
        embedded = self.indexer.flush_vectors()
        done = [f"embedded {plural(embedded, 'note')}"] if embedded else []
        return done + ([f"removed {plural(len(orphaned), 'vector')} of no note"] if orphaned else [])

    def _mend_queue(self) -> list[str]:
        index, done = self.index, []
        disk = self._read_disk()
        ids = set(disk.notes)
        with index.transaction():
            for note_id, holder in self.queue.expired():
                index.jobs.release(note_id, holder)
                done.append(f"released the work on {note_id} claimed by {holder}")
            for note_id in index.jobs.queued():
                if note_id not in ids:
                    index.jobs.drop(note_id)
                    done.append(f"dropped the queued work for {note_id}, which does not exist")
            for note_id, when in self._owed(disk).items():
                index.jobs.enqueue([note_id], when)
                done.append(f"queued the work on {note_id} again")
        return done


class _Links:
    """The links of the notes on disk, each resolved to the note it names."""

    def __init__(self, disk: _Disk):
        self.resolve = disk.names().resolve
        self.links: dict[str, set[str]] = {}  # note -> the notes its links name
        self.backlinks: dict[str, set[str]] = {}  # note -> the notes its backlinks name
        self.linked_from: dict[str, set[str]] = {i: set() for i in disk.notes}
        self.sequence: dict[str, Note] = {}  # note -> a stand-in holding its resolved pointers
        for note_id, (_, note) in disk.notes.items():
            self.links[note_id] = {t for w in note.links if (t := self.resolve(w))}
            self.backlinks[note_id] = {t for w in note.backlinks if (t := self.resolve(w))}
            self.sequence[note_id] = Note(note_id, "", previous=self.resolve(note.previous), next=self.resolve(note.next))
            for target in self.links[note_id]:
                self.linked_from[target].add(note_id)


def _agreed_sequence(notes: dict[str, Note]) -> dict[str, str]:
    """{note: the note after it} that both ends can agree on. A pointer stays when the
    other end points back, or when the other end's slot is empty and no other note
    claims it (then the slot is filled); a pointer the other end contradicts goes."""
    claims_next: dict[str, int] = {}  # how many notes name this one as their next
    claims_prev: dict[str, int] = {}
    for n in notes.values():
        if n.next in notes:
            claims_next[n.next] = claims_next.get(n.next, 0) + 1
        if n.previous in notes:
            claims_prev[n.previous] = claims_prev.get(n.previous, 0) + 1
    after: dict[str, str] = {}
    for x, n in notes.items():
        y = n.next
        if y in notes and (notes[y].previous == x or (notes[y].previous is None and claims_next[y] == 1)):
            after[x] = y
    for y, n in notes.items():
        x = n.previous
        if x in notes and notes[x].next is None and claims_prev[x] == 1:
            after[x] = y
    return after
