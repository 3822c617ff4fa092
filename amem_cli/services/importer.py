"""Batch import: a JSONL file (one note a line) or a folder of Markdown files.

Notes go in through `NoteService.add_notes` in batches, so each batch is one SQLite
transaction, one embedding call and one vector write, and the pipeline (or, with
`defer`, the queue) sees the whole batch. A JSONL file is one sequence: its notes are
chained in order, across batches too. A folder is not: its files have no order of their
own (names sort, but rarely by time), so each file becomes a note on its own.

Each note records where it came from in `metadata.source` (`chat.jsonl#L12`,
`notes/idea.md`; a `source` the note's own metadata gives is kept) and a hash of that
source and its content in `metadata.source_hash`. Importing the same file again skips
the lines whose hash is already in the vault, and continues the sequence after them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any, BinaryIO

from ..errors import AmemError, NotFoundError, UsageError
from ..index.sqlite import SqliteIndex
from ..models import Note
from ..utf8 import mend
from ..vault import Vault, content_hash, parse_note_file
from ..wire.intake import ImportReport
from .indexer import Indexer
from .notes import NOTE_FIELDS, NoteService, new_note, redact_note

BATCH = 256
SOURCE_HASH = "source_hash"

# A line or file as read: (where it is, for messages; its source, for metadata; the
# note's fields, or a message "where: what is wrong").
_Entry = tuple[str, str, "dict[str, Any] | str"]


class Importer:
    def __init__(self, vault: Vault, index: SqliteIndex, indexer: Indexer, notes: NoteService,
                 between_batches: Callable[[], None] = lambda: None, date_order: str = "auto"):
        """`between_batches`: the server lets waiting commands in there. `date_order`: how
        a date that reads both ways is read (`timeutil.DATE_ORDERS`)."""
        self.vault = vault
        self.index = index
        self.indexer = indexer
        self.notes = notes
        self.between_batches = between_batches
        self.date_order = date_order

    def import_path(
        self,
        path: str | Path,
        *,
        defer: bool = False,
        batch: int = BATCH,
        progress: Callable[[int, int | None], None] | None = None,
        redact: bool = True,
        stdin: IO | None = None,
        ttl: timedelta | None = None,
    ) -> ImportReport:
        """Import a JSONL file ('-': `stdin`, else this process's standard input) or a folder of Markdown files.
        Bad lines and files are reported and skipped; the rest is imported. `redact`:
        secrets in the notes become `[REDACTED:kind]` before anything is stored. `ttl`:
        each note expires that long after its date (unless it says when: `expires`)."""
        if batch < 1:
            raise UsageError("the batch size must be at least 1")
        report = ImportReport()
        entries, total, chain = self._entries(path, report, stdin)
        return self._run(entries, total, chain, report, defer=defer, batch=batch, progress=progress, redact=redact, ttl=ttl)

    def _entries(self, path: str | Path, report: ImportReport, stdin: IO | None) -> tuple[Iterator[_Entry], int | None, bool]:
        """What to import, how many entries there are (if known), and whether they are a sequence."""
        if str(path) == "-":
            stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", sys.stdin)
            return _jsonl(stream, "<stdin>", "stdin", report), None, True
        # Absolute now: the files are read batch by batch, and a server runs other
        # commands (each in its own working folder) between the batches.
        path = Path(path).expanduser().absolute()
        if path.is_dir():
            root = self.vault.root
            if path.resolve().is_relative_to(root):
                raise UsageError(f"the notes in {path} are in the vault already", hint="see `amem status`")
            # As the vault finds its notes (no hidden folders, no symlinks out), less any in this vault.
            folder = Vault(path)
            names = sorted(rel for rel in folder.scan() if not (path / rel).resolve().is_relative_to(root))
            report.problems.extend(f"{mend(str(path))[0]}/{name}: its name is not UTF-8; rename it" for name in folder.bad_names)
            report.skipped += len(folder.bad_names)
            return _markdown_files(path, names, self.date_order), len(names), False
        if not path.is_file():
            raise NotFoundError(
                f"no file or folder at {path}", hint="give a .jsonl file, '-' for standard input, or a folder of .md files"
            )
        if path.suffix == ".md":
            return _markdown_files(path.parent, [path.name], self.date_order), 1, False
        with open(path, "rb") as fh:
            total = sum(1 for line in fh if line.strip())
        return _jsonl_file(path, report), total, True

    def _run(
        self,
        entries: Iterable[_Entry],
        total: int | None,
        chain: bool,
        report: ImportReport,
        *,
        defer: bool,
        batch: int,
        progress: Callable[[int, int | None], None] | None,
        redact: bool,
        ttl: timedelta | None,
    ) -> ImportReport:
        self.indexer.sync()
        known = self.index.notes.by_metadata(SOURCE_HASH)  # one query, not one per line
        batches = _Batches(
            self.notes, report, total=total, chain=chain, defer=defer, size=batch, progress=progress,
            between_batches=self.between_batches,
        )
        batches.report_progress()
        for n, (where, source, item) in enumerate(entries, 1):
            batches.read = n
            if isinstance(item, str):
                report.skipped += 1
                report.problems.append(item)
                continue
            try:
                note, redactions = _new(source, item, redact, self.date_order, ttl)
            except AmemError as exc:
                report.skipped += 1
                report.problems.append(f"{where}: {exc.message}")
                continue
            existing = known.get(note.metadata[SOURCE_HASH])
            if existing is not None:
                report.duplicates += 1
                if chain:
                    batches.continue_after(existing)
                continue
            report.redactions += redactions
            batches.add(note)
        batches.flush(last=True)
        report.queued = len(report.ids) if defer else 0
        return report


@dataclass
class _Batches:
    """An import's notes on their way in, a batch at a time. A batch is prepared (built,
    its embedding started) before the one ahead of it is stored: the model embeds it
    while the files of the one ahead are written and linked."""

    notes: NoteService
    report: ImportReport
    total: int | None  # entries to read, if known
    chain: bool  # the notes are one sequence
    defer: bool
    size: int  # notes in a batch
    progress: Callable[[int, int | None], None] | None
    between_batches: Callable[[], None]
    read: int = 0  # entries read so far
    pending: list[Note] = field(default_factory=list)  # read, to be prepared
    ready: list[Note] = field(default_factory=list)  # prepared (built, embedding on the way), to be stored next
    after: str | None = None  # the sequence so far ends with this note

    def add(self, note: Note) -> None:
        self.pending.append(note)
        if len(self.pending) >= self.size:
            self.flush()

    def continue_after(self, existing: str) -> None:
        """The sequence goes on from `existing`, a note imported before: the notes read
        next follow it."""
        self.flush(last=True)
        self.after = existing

    def flush(self, last: bool = False) -> None:
        """Prepare the pending notes, store those prepared before them (all, when `last`)."""
        batch, self.pending = self.pending, []
        if batch:
            self.notes.prepare(batch, defer=self.defer)
        self._store_ready()
        self.ready.extend(batch)
        if last:
            self._store_ready()
        self.report_progress()
        if not last:
            self.between_batches()

    def report_progress(self) -> None:
        if self.progress:
            self.progress(self.read - len(self.ready), self.total)

    def _store_ready(self) -> None:
        if self.ready:
            added = self.notes.store(self.ready, chain=self.chain, after=self.after, defer=self.defer)
            self.report.ids.extend(n.id for n in added)
            self.after = added[-1].id if self.chain else None
            self.ready = []


def _new(source: str, fields: dict[str, Any], redact: bool, date_order: str, ttl: timedelta | None) -> tuple[Note, int]:
    """The note, and how many secrets were redacted from it."""
    fields = dict(fields)
    extra = fields.pop("extra", {})
    note = new_note(fields.pop("content"), redact=False, date_order=date_order, ttl=ttl, **fields)
    note.extra = extra
    note.metadata.setdefault("source", source)
    redactions = redact_note(note) if redact else 0  # before the hash: not even a hash of a secret is kept
    note.metadata[SOURCE_HASH] = content_hash(f"{source}\n{note.content}".encode("utf-8"))[:16]
    return note, redactions


# -- JSONL ------------------------------------------------------------------

_LISTS = ("keywords", "tags", "boxes")


def _jsonl_file(path: Path, report: ImportReport) -> Iterator[_Entry]:
    with open(path, "rb") as fh:
        yield from _jsonl(fh, str(path), mend(path.name)[0], report)


def _jsonl(stream: BinaryIO, where: str, name: str, report: ImportReport) -> Iterator[_Entry]:
    """One entry per non-blank line; an unknown field is ignored, with one warning per name."""
    unknown: set[str] = set()
    for n, raw in enumerate(stream, 1):
        at = f"{where}:{n}"
        if isinstance(raw, str):  # standard input read by the client: a byte that was not UTF-8 is a surrogate now
            raw = raw.encode("utf-8", "surrogatepass")  # and not UTF-8 again, as in a file
        try:
            line = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            yield at, "", f"{at}: not UTF-8 text"
            continue
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            yield at, "", f"{at}: not JSON ({exc.msg} at column {exc.colno})"
            continue
        if not isinstance(obj, dict):
            yield at, "", f"{at}: not a JSON object but {_json_type(obj)}"
            continue
        for key in sorted(set(obj) - set(NOTE_FIELDS) - unknown):
            unknown.add(key)
            report.warnings.append(f"{at}: unknown field {key!r} ignored (on every line)")
        fields = {k: v for k, v in obj.items() if k in NOTE_FIELDS}
        problem = _type_problem(fields)
        yield at, f"{name}#L{n}", f"{at}: {problem}" if problem else fields


def _type_problem(obj: dict[str, Any]) -> str | None:
    """What is wrong with the fields' JSON types, if anything (`new_note` checks their values)."""
    content = obj.get("content")
    if content is None:
        return "no 'content'"
    if not isinstance(content, str):
        return f"'content' must be a string, not {_json_type(content)}"
    if not content.strip():
        return "'content' is empty"
    for key in _LISTS:
        value = obj.get(key)
        if value is not None and not isinstance(value, str) and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            return f"'{key}' must be a list of strings"
    for key, kind, name in (("context", str, "a string"), ("created_at", (str, int, float), "a date or a Unix time"),
                            ("expires", (str, int, float), "a date or a Unix time"), ("metadata", dict, "an object")):
        if obj.get(key) is not None and not isinstance(obj[key], kind):
            return f"'{key}' must be {name}, not {_json_type(obj[key])}"
    return None


def _json_type(value: Any) -> str:
    for kind, name in ((bool, "true/false"), (str, "a string"), (int, "a number"), (float, "a number"),
                       (list, "a list"), (dict, "an object")):
        if isinstance(value, kind):
            return name
    return "null"


# -- Markdown ---------------------------------------------------------------

# Frontmatter keys read as the creation date besides amem's own `created`.
_DATE_KEYS = ("created_at", "date")


def _markdown_files(folder: Path, names: list[str], date_order: str) -> Iterator[_Entry]:
    """One entry per file: the body is the content; frontmatter, if any, gives the rest
    (amem's own keys; others are kept as they are). No date given: the file's mtime."""
    name = folder.resolve().name
    for rel in names:
        path = folder / rel
        at = str(path)
        source = mend(f"{name}/{rel}" if name else rel)[0]  # a file's name may be any bytes; a note's text may not
        try:
            data = path.read_bytes()
            mtime = path.stat().st_mtime
        except OSError as exc:
            yield at, source, f"{at}: cannot read it: {exc.strerror}"
            continue
        # As the vault reads a note file ("path:line: ..." on error); the note gets a new id.
        parsed, error, _ = parse_note_file(at, data, own_id=False, date_order=date_order)
        if parsed is None:
            yield at, source, error
            continue
        extra = dict(parsed.extra)
        dates = [extra.pop(k) for k in _DATE_KEYS if k in extra]
        created = parsed.created_at or next((d for d in dates if d), None) or datetime.fromtimestamp(int(mtime)).astimezone()
        if not parsed.content.strip():
            yield at, source, f"{at}: the note is empty"
            continue
        yield at, source, {
            "content": parsed.content, "keywords": parsed.keywords, "tags": parsed.tags, "context": parsed.context,
            "boxes": parsed.boxes, "created_at": created, "metadata": parsed.metadata, "extra": extra,
            "expires": parsed.expires,
        }
