"""Adding, reading, changing and removing notes: files first, then the index."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from ..errors import ConflictError, NotFoundError, UsageError
from ..ids import check_id, new_id
from ..limits import MAX_CONTENT_BYTES, MAX_RESULTS, check_context, check_count, check_terms
from ..markdown import normalise_text, parse_note, render_note, str_list
from ..index.notes import content_key
from ..index.sqlite import SqliteIndex
from ..models import OCCURRENCES, Note
from ..redact import REDACTED, redact_data
from ..retrieve.fields import speaker_of
from ..timeutil import now, to_datetime, to_utc
from ..vault import Vault, content_hash
from .indexer import Indexer
from .jobs import QUEUED
from .pipeline import Pipeline
from .supersession import Supersessions
from .trash import VERSION, Removed, Trash
from .writer import NoteWriter

NOTE_FIELDS = ("content", "keywords", "tags", "context", "created_at", "boxes", "metadata", "expires")


def new_note(
    content: str,
    *,
    keywords: Iterable[str] | None = None,
    tags: Iterable[str] | None = None,
    context: str | None = None,
    boxes: Iterable[str] | None = None,
    created_at: datetime | str | None = None,
    metadata: Mapping[str, Any] | None = None,
    id: str | None = None,
    redact: bool = True,
    date_order: str = "auto",
    expires: datetime | str | None = None,
    ttl: timedelta | None = None,
) -> Note:
    """A new, unsaved note with a fresh id (no model: `Pipeline.construct` writes what it
    lacks once it is added). Raises UsageError on empty content. `redact`: secrets in any
    field become `[REDACTED:kind]` (see `redact_note`). `date_order`: how a `created_at`
    that reads both ways is read (`timeutil.DATE_ORDERS`). `expires`: when it stops
    being true; `ttl`: that long after it was created."""
    if not isinstance(content, str) or not content.strip():
        raise UsageError("the note is empty", hint="give the note some text")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:  # a byte that was not UTF-8, smuggled in as a surrogate
        raise UsageError("the note's text is not valid UTF-8", hint="convert it to UTF-8 first") from None
    if "\x00" in content:  # the vault reads a file holding one as binary, and skips it
        raise UsageError("the note's text holds a NUL character", hint="a note is text; remove it")
    if size > MAX_CONTENT_BYTES:
        raise UsageError(f"the note is larger than {MAX_CONTENT_BYTES // 2**20} MiB",
                         hint="split it into smaller notes (`amem ingest` splits a transcript into turns)")
    created = to_datetime(created_at, date_order) if created_at is not None else now()
    if metadata is not None and not isinstance(metadata, Mapping):
        raise UsageError("metadata must be a mapping of keys to values")
    try:
        note = Note(
            id=check_id(id) if id else new_id(created),
            content=normalise_text(content).strip(),
            keywords=str_list(_as_list(keywords), "keywords"),
            tags=[t.lstrip("#") for t in str_list(_as_list(tags), "tags")],
            context=" ".join((context or "").split()),
            created_at=created,
            updated_at=now(),
            boxes=str_list(_as_list(boxes), "boxes"),
            metadata=dict(metadata or {}),
            expires=to_datetime(expires, date_order) if expires is not None else created + ttl if ttl is not None else None,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for values, what in ((note.keywords, "keyword"), (note.tags, "tag"), (note.boxes, "box")):
        check_terms(values, what)
    check_context(note.context)
    if redact:
        redact_note(note)
    return note


class NoteService:
    def __init__(self, vault: Vault, index: SqliteIndex, indexer: Indexer, writer: NoteWriter, pipeline: Pipeline,
                 supersessions: Supersessions, trash: Trash, date_order: str = "auto"):
        """`pipeline`: the A-MEM pipeline, which constructs new notes before they are
        written and links them after; `supersessions`: newer notes that change older ones,
        found as notes are stored; `trash`: removed notes, for undo; `date_order`: how a
        date given for a new note that reads both ways is read."""
        self.vault = vault
        self.index = index
        self.indexer = indexer
        self.writer = writer
        self.pipeline = pipeline
        self.trash = trash
        self.date_order = date_order
        self.supersessions = supersessions

    # -- writes -----------------------------------------------------------
    def add_note(self, note: Note, *, after: str | None = None, embed: bool = True) -> Note:
        return self.add_notes([note], after=after, embed=embed)[0]

    def add_notes(
        self, notes: list[Note], *, chain: bool = False, after: str | None = None, embed: bool = True, defer: bool = False
    ) -> list[Note]:
        """Write each note's file, index it, then embed them in one batch.

        `chain` links the notes in order as a sequence (each records its predecessor and
        successor); `after` continues the sequence of an existing note. `defer` stores the
        notes as given and queues the pipeline's work for `process`."""
        self.prepare(notes, embed=embed, defer=defer)
        return self.store(notes, chain=chain, after=after, embed=embed, defer=defer)

    def prepare(self, notes: list[Note], *, embed: bool = True, defer: bool = False) -> None:
        """The first half of `add_notes`: check the notes and build them (the pipeline's
        keywords, tags, context), then start embedding them in the background, so the
        files are written meanwhile. An import prepares the next batch before it stores
        this one."""
        self.vault.check_writable()  # before the model's work, not after it
        self.indexer.sync()
        if len({n.id for n in notes}) != len(notes):
            raise UsageError("two of the notes share an id", hint="give each note its own id, or none")
        for note in notes:
            if not note.content.strip():
                raise UsageError("the note is empty", hint="give the note some text")
        # A note is complete when stored: with the model's work queued, the deterministic
        # method writes every field now, and the model replaces those it writes later.
        self.pipeline.construct(notes, model=not defer)
        if embed:
            self.indexer.prefetch(notes)

    def store(
        self, notes: list[Note], *, chain: bool = False, after: str | None = None, embed: bool = True, defer: bool = False
    ) -> list[Note]:
        """The second half of `add_notes`, for notes `prepare` has seen: write, index,
        embed, link."""
        queued_at = now().isoformat()
        if defer:
            for note in notes:
                note.metadata = {**note.metadata, QUEUED: queued_at}
        if chain:
            for before, note in zip(notes, notes[1:]):
                before.next, note.previous = note.id, before.id
        with self.vault.lock():
            paths = [self._check_new(note) for note in notes]
            if after is not None and notes:
                self._insert_after(after, notes[0], notes[-1])
            texts = []
            for note in notes:
                # When amem writes the file, not when the note was built: a model may take
                # seconds, and a file saved after its `updated` looks hand-edited (and is
                # never evolved).
                note.updated_at = now()
                texts.append(render_note(note))
            # One index transaction for the batch; a crash half-way leaves files the next sync indexes.
            with self.index.transaction():
                stats = self.vault.write_many([(path, text, None) for path, text in zip(paths, texts)],
                                              [n.updated_at for n in notes])
                for note, path, stat, text in zip(notes, paths, stats, texts):
                    self.writer.record(note, path, stat, text)
                if defer:
                    self.index.jobs.enqueue([n.id for n in notes], queued_at)
        if embed:
            self.indexer.flush_vectors()
            self._connect(notes, evolve=not defer)  # linked now; the model's evolution waits in the queue
        self.supersessions.detect(self._as_stored(notes))  # with their links
        return self._as_stored(notes)  # with their new links and supersessions

    def _as_stored(self, notes: list[Note]) -> list[Note]:
        """The notes as the index has them now (one read for the batch, not one a note)."""
        stored = self.index.notes.get_many([n.id for n in notes])
        return [stored.get(n.id) or n for n in notes]

    def _connect(self, notes: list[Note], *, evolve: bool = True) -> None:
        """Link the stored notes. When a person keeps saving a note they would link to, the
        linking is queued instead (the worker tries again later): the notes are stored, so
        the write must not fail, or be run again and add them twice."""
        try:
            self.pipeline.connect(notes, evolve=evolve)
        except ConflictError:
            with self.index.transaction():
                self.index.jobs.enqueue([n.id for n in notes], now().isoformat())

    def _check_new(self, note: Note) -> str:
        """The path for a new note, after checking nothing is in its way."""
        if not note.content.strip():
            raise UsageError("the note is empty", hint="give the note some text")
        note.id = check_id(note.id)  # in NFC, as the file will be read back
        if self.index.notes.path_of(note.id) is not None:
            raise UsageError(f"a note with the id {note.id} exists already", hint="leave the id out to get a new one")
        path = self.vault.path_for_new(note.id)
        if self.vault.stat(path) is not None:
            raise UsageError(f"the file {path} exists already", hint="leave the id out to get a new one")
        return path

    def _insert_after(self, after: str, first: Note, last: Note) -> None:
        """Put the notes first..last into the sequence right after the note `after`."""
        old_next = self.get(after, sync=False).next
        first.previous, last.next = after, old_next

        def relink(field: str, value: str):
            return lambda n: replace(n, **{field: value})

        self.update(after, relink("next", first.id), embed=False, sync=False)  # store follows a sync
        if old_next and self.index.notes.path_of(old_next):
            self.update(old_next, relink("previous", last.id), embed=False, sync=False)

    def add(self, content: str, *, after: str | None = None, defer: bool = False, embed: bool = True, **fields: Any) -> Note:
        """Add one note (`fields`: those of `new_note`, `redact` too)."""
        return self.add_notes([self.new_note(content, **fields)], after=after, defer=defer, embed=embed)[0]

    def remember(self, content: str, *, after: str | None = None, defer: bool = False, **fields: Any) -> tuple[Note, bool]:
        """`add`, unless the text (whitespace aside, once redacted) is a note's already, said
        by the same speaker: then that note records this occurrence's date
        (`metadata.amem_occurrences`; not a pinned note's file) and is returned. (note,
        whether it was there already)."""
        note = self.new_note(content, **fields)
        self.indexer.sync()
        said = speaker_of(note)
        same = [n for n in self.index.notes.get_many(self.index.notes.same_content(content_key(note.content)), links=False).values()
                if speaker_of(n) == said]
        if not same:
            return self.add_notes([note], after=after, defer=defer)[0], False
        return self.record_occurrences(min(same, key=_created).id, [note.created_at]), True

    def record_occurrences(self, note_id: str, dates: list[datetime | None], *, what: str = "said again") -> Note:
        """The note records these dates as more times it was said (a revision), unless it is pinned."""
        existing = self.get(note_id, sync=False)
        if existing.extra.get("pinned") is True:
            return existing
        seen = [d.isoformat() for d in dates if d is not None]

        def record(n: Note) -> Note:
            known = [str(d) for d in n.metadata.get(OCCURRENCES) or [] if isinstance(d, str)]
            return replace(n, metadata={**n.metadata, OCCURRENCES: sorted(set(known) | set(seen))})

        self.writer.revise_with(note_id, record, cause=what, model=None, redo=True, what=f"occurrences: {', '.join(seen)}")
        return self.get(note_id, sync=False)

    def add_many(
        self, items: Iterable[Mapping[str, Any]], *, after: str | None = None, defer: bool = False, redact: bool = True,
        ttl: timedelta | None = None,
    ) -> list[Note]:
        """Add notes that arrive together, in order, chained as a sequence. `ttl`: each
        expires that long after its date (unless the item says when)."""
        notes = []
        for n, item in enumerate(items, 1):
            if not isinstance(item, Mapping):
                raise UsageError(f"item {n} is not a mapping", hint="give dicts with a 'content' key")
            unknown = set(item) - set(NOTE_FIELDS) - {"id"}
            if unknown:
                raise UsageError(f"item {n} has unknown keys: {', '.join(sorted(unknown))}")
            item = dict(item)
            content = item.pop("content", None)
            notes.append(self.new_note(content, redact=redact, ttl=ttl, **item))
        return self.add_notes(notes, chain=True, after=after, defer=defer)

    def new_note(self, content: str, **fields: Any) -> Note:
        """`new_note`, its date read in this vault's date order."""
        return new_note(content, date_order=self.date_order, **fields)

    def update(self, note_id: str, change, **options: Any) -> Note:
        """`NoteWriter.update`: re-read a note from its file, apply `change(note) -> note`, write it back."""
        return self.writer.update(note_id, change, **options)

    def revise(self, note_id: str, changes: dict[str, Any], *, cause: str | None, model: str | None) -> Note:
        """`NoteWriter.revise`: evolution of a note's context and/or tags, as a revision."""
        return self.writer.revise(note_id, changes, cause=cause, model=model)

    def history(self, note_id: str) -> list[dict]:
        """The note's revisions (by evolution, and by fields derived again after an edit), oldest first."""
        self.get(note_id)
        return self.index.revisions.of(note_id)

    def undo(self, ref: str) -> Note:
        """Put back the file as it was before the note's last revision, byte for byte; or,
        for a note removed (`delete`) and still in the trash, the note: its newest removed
        version, or the one `ref` names (`ID@N`, the Nth newest: `amem trash`)."""
        if (removed := self.removed_version(ref)) is not None:
            return self._restore(removed)
        note_id = check_id(ref)
        with self.vault.lock():
            path = self.writer.path(note_id)
            revisions = self.index.revisions.of(note_id)
            if not revisions:
                raise UsageError(f"the note {note_id} has no revision to undo", hint=self._trash_hint(note_id))
            last = revisions[-1]
            # The model's version of fields derived again after a person's edit continues that
            # edit's revision: undo goes back past both, to the person's save.
            while (len(revisions) > 1 and last["cause"] == "edit" and revisions[-2]["cause"] == "edit"
                   and revisions[-2]["new_hash"] == content_hash(bytes(last["old_bytes"]))
                   and content_hash(self.vault.read_bytes(path)) == last["new_hash"]):
                with self.index.transaction():
                    self.index.revisions.drop(last["seq"])
                revisions.pop()
                last = {**revisions[-1], "new_hash": last["new_hash"]}
            if content_hash(self.vault.read_bytes(path)) != last["new_hash"]:
                raise UsageError(
                    f"the note {note_id} was changed after its last revision; undo would lose that change",
                    hint="edit the note by hand (`amem edit ID`), `amem history ID` shows what evolution changed",
                )
            text = bytes(last["old_bytes"]).decode("utf-8")
            stat = self.vault.write_text(path, text, expect_hash=last["new_hash"])
            note = parse_note(text, path=path, fallback_id=note_id, date_order=self.vault.date_order)
            with self.index.transaction():
                self.indexer.record_written(note, path, stat, text)
                self.index.revisions.drop(last["seq"])
        self.indexer.flush_vectors()
        return note

    def removed_version(self, ref: str) -> Removed | None:
        """The removed note `undo(ref)` brings back: the newest version of an id no note
        holds now, or the version `ID@N` names; None when `ref` is a note's id (undo then
        reverts its last revision)."""
        note_id, _, version = ref.partition(VERSION)
        note_id = check_id(note_id)
        self.indexer.sync()
        if version:
            if not version.isdigit() or not 0 < int(version) <= len(self.trash.versions(note_id)):
                raise NotFoundError(f"the trash holds no version {version} of {note_id}", hint=self._trash_hint(note_id))
            if self.index.notes.path_of(note_id) is not None:
                raise UsageError(f"a note with the id {note_id} exists; bringing back {ref} would overwrite it",
                                 hint=f"remove it first (`amem rm {note_id}` keeps it in the trash too), then undo {ref}")
            return self.trash.get(note_id, int(version))
        return self.trash.get(note_id) if self.index.notes.path_of(note_id) is None else None

    def _trash_hint(self, note_id: str) -> str:
        n = len(self.trash.versions(note_id))
        if not n:
            return "see `amem history ID`"
        return (f"the trash holds {n} removed note{'s' if n > 1 else ''} of this id (`amem trash {note_id}` lists "
                f"them); to bring one back, remove the note that has the id now, then `amem undo {note_id}@N`")

    def delete(self, note_id: str, *, purge: bool = False) -> Note:
        """Remove a note's file and index entry, and the links other notes have to it.
        The file goes to the trash, for `undo`, unless `purge`: then nothing of it is
        kept (the trash's copy of an earlier removal of the id goes too). The index keeps
        no byte of its text either way (its revisions go: they hold its text)."""
        self.indexer.sync()
        with self.vault.lock():
            note = self.get(note_id, sync=False)
            path = self.writer.path(note_id)
            referrers = self.index.links.referrers(note_id)
            if purge:
                self.trash.purge(note_id)
            else:
                self.trash.put(Removed(note_id, path, self.vault.read_bytes(path), self._linking(note_id, referrers)))

            def unlink(n: Note) -> Note:
                """Without the links (however written) and pointers that name the note."""
                ids = self.index.links.resolve([*n.links, *n.backlinks, *n.supersedes, *n.superseded_by,
                                                *(p for p in (n.previous, n.next) if p)])
                return _without(n, {w for w, i in ids.items() if i == note_id} | {note_id})

            for other in sorted(referrers - {note.previous, note.next}):
                self.update(other, unlink, embed=False)
            # Close the gap in a sequence: the neighbours now follow each other.
            if note.previous and self.index.notes.path_of(note.previous):
                self.update(note.previous, lambda n: replace(unlink(n), next=note.next), embed=False)
            if note.next and self.index.notes.path_of(note.next):
                self.update(note.next, lambda n: replace(unlink(n), previous=note.previous), embed=False)
            self.vault.delete(path)
            with self.index.transaction():
                self.index.notes.delete(note_id)
                self.index.revisions.drop_note(note_id)
                self.index.jobs.drop(note_id)  # its queued work (a deferred note, one a person edited) goes too
                self.index.files.remove(path)
        self.indexer.flush_vectors()  # its vector goes now, not at the next search
        return note

    def _linking(self, note_id: str, referrers: set[str]) -> dict[str, list[str]]:
        """{"links": notes whose links name the note, "backlinks": whose backlinks do, and
        so for "supersedes" and "superseded_by" (as their files say it)}."""
        others = self.index.notes.get_many(referrers)
        raw = self.index.notes.get_many(referrers, links=False)  # as their files write them
        out = {field: sorted(n.id for n in others.values() if note_id in getattr(n, field)) for field in ("links", "backlinks")}
        for field in ("supersedes", "superseded_by"):
            out[field] = sorted(i for i, n in raw.items() if note_id in self.index.links.resolve(getattr(n, field)).values())
        return out

    def _restore(self, removed: Removed) -> Note:
        """A removed note back where it was: its file, the links other notes had to it
        (those that still exist), and its place in its sequence if the gap it left is
        still there."""
        with self.vault.lock():
            if self.vault.stat(removed.path) is not None:
                raise UsageError(f"the file {removed.path} exists again; undo would overwrite it",
                                 hint="move that file away first")
            self.vault.write_text(removed.path, removed.data.decode("utf-8"))
        self.indexer.sync(paths=[removed.path])
        note = self.get(removed.id, sync=False)
        for field, ids in removed.linked_from.items():
            for other in ids:
                if self.index.notes.path_of(other) and note.id not in getattr(self.get(other, sync=False), field):
                    self.update(other, lambda n, f=field: replace(n, **{f: [*getattr(n, f), note.id]}), embed=False)
        before, after = note.previous, note.next
        if before and self.index.notes.path_of(before) and self.get(before, sync=False).next == after:
            self.update(before, lambda n: replace(n, next=note.id), embed=False)
        if after and self.index.notes.path_of(after) and self.get(after, sync=False).previous == before:
            self.update(after, lambda n: replace(n, previous=note.id), embed=False)
        self.trash.take(removed)
        self.indexer.flush_vectors()
        return self.get(removed.id, sync=False)

    # -- reads ------------------------------------------------------------
    def get(self, note_id: str, *, sync: bool = True) -> Note:
        return self.writer.get(note_id, sync=sync)

    def path_of(self, note_id: str) -> str:
        return self.writer.path_of(note_id)


    def glimpses(self, written: Iterable[str], words: int = 8) -> dict[str, str | None]:
        """{link as written: the first words of the note it names, or None when it names none}."""
        written = list(dict.fromkeys(written))
        ids = self.index.links.resolve(written)
        notes = self.index.notes.get_many(ids.values(), links=False)
        return {w: _first_words(notes[ids[w]].content, words) if ids.get(w) in notes else None for w in written}

    def list(self, **filters: Any) -> list[Note]:
        if filters.get("limit") is not None:
            check_count("limit", filters["limit"], 1, MAX_RESULTS)
        self.indexer.sync()
        return self.index.notes.list(**filters)

def redact_note(note: Note) -> int:
    """Replace the secrets in every field a caller gives (text, keywords, tags, context,
    boxes, metadata, other frontmatter) before the note is written, embedded or shown to
    a model; the count goes into `metadata.amem_redacted`, and is returned."""
    count = 0

    def clean(value):
        nonlocal count
        value, n = redact_data(value)
        count += n
        return value

    note.content, note.context = clean(note.content), clean(note.context)
    note.keywords, note.tags, note.boxes = clean(note.keywords), clean(note.tags), clean(note.boxes)
    note.metadata, note.extra = clean(note.metadata), clean(note.extra)
    if count:
        note.metadata[REDACTED] = count
    return count


def _without(note: Note, gone: set[str]) -> Note:
    """The note without the links, backlinks, supersessions and pointers written as one of `gone`."""
    return replace(
        note,
        links=[x for x in note.links if x not in gone],
        backlinks=[x for x in note.backlinks if x not in gone],
        supersedes=[x for x in note.supersedes if x not in gone],
        superseded_by=[x for x in note.superseded_by if x not in gone],
        previous=None if note.previous in gone else note.previous,
        next=None if note.next in gone else note.next,
    )


def _created(note: Note) -> str:
    return to_utc(note.created_at).isoformat() if note.created_at else ""


def _first_words(text: str, n: int) -> str:
    found = text.split()
    return " ".join(found[:n]) + (" …" if len(found) > n else "")


def _as_list(values: Iterable[str] | str | None) -> list:
    """One string is one item (not its characters)."""
    return [values] if isinstance(values, str) else list(values or [])
