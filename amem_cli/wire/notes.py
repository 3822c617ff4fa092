"""The everyday operations, which the quick commands run (`cli/quick.py`): `add`, `show`,
`list`, `search` and `context` (a block); and a note as a result."""

from typing import Any

from . import Request
from ..records import Record


# -- results -----------------------------------------------------------------------


class NoteResult(Record):
    """A note as `--json` shows it (`Note.to_dict`)."""

    id: str
    content: str
    keywords: list[str]
    tags: list[str]
    context: str
    created_at: str | None
    updated_at: str | None
    links: list[str]
    backlinks: list[str]
    previous: str | None
    next: str | None
    supersedes: list[str]  # older notes whose facts this one changes
    superseded_by: list[str]  # newer notes that change this one's facts
    expires: str | None  # when it stops being true (it leaves search then)
    boxes: list[str]
    metadata: dict[str, Any]


class AddResult(NoteResult):
    queued: int  # 1 when the model's work on the note is queued
    duplicate: bool = False  # the text was this note's already: it records the date it was said again


class ShowResult(NoteResult):
    # {link as written: the first words of the note it names, or None}, for the note's
    # links, backlinks, previous and next; only when asked for (`Show.related`).
    related: dict[str, str | None] | None = None

    def to_json(self) -> dict[str, Any]:
        shown = super().to_json()
        if self.related is None:
            del shown["related"]
        return shown


class Replacement(Record):
    id: str
    date: str | None


class HitResult(NoteResult):
    score: float
    sources: dict[str, dict[str, Any]]  # what each list said of it (`--explain`)
    replaces: list[Replacement] = []  # older notes this one supersedes (it ranks above them)
    replaced_by: list[Replacement] = []  # newer notes that supersede it


class BlockResult(Record):
    """What `amem context --json` prints: the prompt-ready block of notes for a query."""

    query: str
    context: str  # the block's text (a name kept from before the glossary: it is no note's context)
    tokens: int
    notes: list[str]

# -- requests ----------------------------------------------------------------------


class Add(Request, op="add", result=AddResult, starts_server=True):
    """One note. Secrets become `[REDACTED:kind]` unless not `redact`. `wait`: do the
    model's work before answering (else it may be queued: `operations.should_queue`)."""

    content: str
    keywords: list[str] | None = None
    tags: list[str] | None = None
    context: str | None = None
    boxes: list[str] | None = None
    metadata: dict[str, Any] | None = None
    created_at: str | None = None
    after: str | None = None  # continue the sequence of this note
    wait: bool = False
    redact: bool = True
    ttl: str | None = None  # it stops being true this long after its date: 30d, 12h, 2w
    expires: str | None = None  # or then


class Show(Request, op="show", result=ShowResult, redo=True):
    id: str
    related: bool = False  # with the first words of each note it names (`ShowResult.related`)


class ListNotes(Request, op="list", result=list[NoteResult], redo=True):
    """Newest first."""

    tags: list[str] | None = None
    boxes: list[str] | None = None
    since: str | None = None
    until: str | None = None
    limit: int | None = 50  # None: all


class Search(Request, op="search", result=list[HitResult], starts_server=True, redo=True):
    query: str
    limit: int = 10
    mode: str = "hybrid"
    tags: list[str] | None = None
    boxes: list[str] | None = None
    since: str | None = None
    until: str | None = None
    floor: bool = True  # only the notes the query matched (the Python API may ask for `limit` hits regardless)
    now: str | None = None  # when the query is asked: "four weeks ago" in it is read against it (default: now)
    as_of: str | None = None  # as things stood then: later notes and supersessions do not count
    include_expired: bool = False


class Block(Request, op="block", result=BlockResult, starts_server=True, redo=True):
    """The prompt-ready block of the best notes for a query (`amem context`)."""

    query: str
    max_tokens: int | None = 2000  # None: no budget
    limit: int = 10
    tags: list[str] | None = None
    boxes: list[str] | None = None
    since: str | None = None
    until: str | None = None
    now: str | None = None  # as for `Search`
    as_of: str | None = None
    include_expired: bool = False
    history: bool = False  # the notes a later one superseded too (else only the current one, which says what it replaces)
