"""The operations on notes besides the everyday ones (`notes`): editing, removing,
history, undo and the trash, evolving, and the Python API's and MCP's own ways to add and read."""

from typing import Any

from . import Request
from ..records import Record
from .notes import NoteResult


class Revision(Record):
    """One change amem made to a note (evolution; fields derived again after an edit)."""

    seq: int
    note_id: str
    cause: str | None
    model: str | None  # None: the deterministic method
    at: str
    old_context: str | None
    new_context: str | None
    old_tags: list[str]
    new_tags: list[str]
    change: str | None = None  # what else it changed (a supersession made or undone, a date recorded)


class Restored(Record):
    """What `undo` brought back: a removed `version` of the note (`ID@N`, removed when and
    from which `path`, and how many more versions are `left` in the trash), or the file as
    it was before amem's `revision` (made `at`, for its `cause`). Only the fields that
    apply are written."""

    version: str | None = None
    removed: str | None = None
    path: str | None = None
    left: int | None = None
    revision: int | None = None
    at: str | None = None
    cause: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in super().to_json().items() if v is not None}


class UndoResult(NoteResult):
    restored: Restored


class TrashEntry(Record):
    """A removed note `undo` can bring back (`amem trash`)."""

    version: str  # ID@N: the Nth newest removal of ID, what `undo` takes
    id: str
    path: str  # where its file was
    removed: str  # when, ISO 8601
    text: str  # its first words


class RemoveResult(Record):
    removed: list[str]
    recoverable: bool  # whether `undo` can bring them back


class EvolveResult(Record):
    note: str
    dry_run: bool
    links: list[str]
    evolutions: dict[str, dict[str, Any]]  # {note: {field: its new value}}


# -- requests ----------------------------------------------------------------------


class AddMany(Request, op="add_many", result=list[NoteResult]):
    """Notes that arrive together, chained in order (each item: the fields of `Add`, and
    an `id`)."""

    items: list[dict[str, Any]]
    after: str | None = None
    wait: bool = False
    redact: bool = True


class AddNote(Request, op="add_note", result=NoteResult):
    """A note made already (`NoteBuilder`), as `Note.to_dict` gives it and its `extra`."""

    note: dict[str, Any]
    after: str | None = None


class NoteFile(Request, op="note_file", result=str, redo=True):
    """The note's Markdown file, as it is on disk."""

    id: str


class Edit(Request, op="edit", result=str, redo=True):
    """Before a person edits a note: the absolute path of its file, once it is sure the
    vault may be written and the note exists."""

    id: str


class Edited(Request, op="edited", result=NoteResult):
    """After a person edited a note's file: index it now (a file amem cannot read is
    refused, and left as it is)."""

    id: str


class Remove(Request, op="rm", result=RemoveResult):
    ids: list[str]
    purge: bool = False  # keep nothing of them (else `undo` brings each back, within `trash_days`)


class History(Request, op="history", result=list[Revision]):
    id: str


class Undo(Request, op="undo", result=UndoResult):
    id: str  # or ID@N, a removed version (`Trash`)


class Trash(Request, op="trash", result=list[TrashEntry], redo=True):
    """The removed notes `undo` can bring back (of one id, or all), newest first."""

    id: str | None = None


class Evolve(Request, op="evolve", result=EvolveResult, starts_server=True):
    id: str
    dry_run: bool = False
