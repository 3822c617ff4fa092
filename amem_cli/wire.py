"""The typed wire: each operation's request, and the result it answers.

Every way in asks for an operation with one of these requests: the CLI (in its own
process, or through the vault's warm server), MCP and the Python API. `Request.read` checks
a request that came as JSON (the server's side) before anything is done; `Request.answer`
gives what an operation returned as the request's result type, which is what the client
reads a reply into. A result prints as JSON (`records.encode`) key for key as the `--json`
output of the command that asks for it.

An operation's function (`amem_cli.operations`) returns its result, or the services' own
data it is made from (a `Note`, a `SearchHit`: `answer` reads them through their
`to_dict`), so the Python API hands out notes, not their JSON.
"""

from __future__ import annotations

from typing import Any

from .errors import UsageError
from .records import Misfit, Record, decode, encode

# The wire's version. A server answers a request of another version with a retry (the
# client does it in its own process and stops that server); a client reads a reply that
# names no version as one from a server older than versions (see `server.client.ask`).
PROTOCOL = 2

REQUESTS: dict[str, type[Request]] = {}  # op -> its request type


class Request(Record):
    """`op`: the operation's name on the wire; `result`: the type of what it answers.
    For the CLI's client: `starts_server`, worth starting the vault's warm server for (it
    loads a model); `redo`, safe to do in the command's own process after a server took
    it and died before it answered (it changes nothing, or doing it twice does no harm:
    an import skips the lines it has); `served`, done by a warm server when one runs."""

    op = ""
    result = None
    starts_server = False
    redo = False
    served = True

    def __init_subclass__(cls, op: str | None = None, result: Any = None, *, starts_server: bool = False,
                          redo: bool = False, served: bool = True, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        if op is not None:
            cls.op, cls.result = op, result
            cls.starts_server, cls.redo, cls.served = starts_server, redo, served
            REQUESTS[op] = cls

    @staticmethod
    def read(op: Any, args: Any) -> Request:
        """The request a client sent as JSON; a UsageError says what is wrong with it."""
        kind = REQUESTS.get(op) if isinstance(op, str) else None
        if kind is None:
            raise UsageError(f"unknown operation {op!r}", hint=f"one of: {', '.join(sorted(REQUESTS))}")
        if not isinstance(args, dict):
            raise UsageError(f"the arguments of {op!r} are a JSON object, not {type(args).__name__}")
        hints = kind.hints()
        for key, value in args.items():
            if key not in hints:
                raise UsageError(f"{op!r} takes no argument {key!r}", hint=f"it takes: {', '.join(hints) or 'none'}")
            try:
                decode(hints[key], value)
            except Misfit:
                raise UsageError(f"{op!r}: {key!r} cannot be {value!r}") from None
        missing = [name for name in kind._fields if name not in kind._defaults and name not in args]
        if missing:
            raise UsageError(f"{op!r} needs {', '.join(map(repr, missing))}")
        return kind.from_json(args)

    def answer(self, value: Any) -> Any:
        """What the operation returned, as this request's result type (Misfit if it is not)."""
        return decode(self.result, encode(value))


# -- results: notes ----------------------------------------------------------------


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
    boxes: list[str]
    metadata: dict[str, Any]


class AddResult(NoteResult):
    queued: int  # 1 when the model's work on the note is queued


class ShowResult(NoteResult):
    # {link as written: the first words of the note it names, or None}, for the note's
    # links, backlinks, previous and next; only when asked for (`Show.related`).
    related: dict[str, str | None] | None = None

    def to_json(self) -> dict[str, Any]:
        shown = super().to_json()
        if self.related is None:
            del shown["related"]
        return shown


class HitResult(NoteResult):
    score: float
    sources: dict[str, dict[str, Any]]  # what each list said of it (`--explain`)


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


class RemoveResult(Record):
    removed: list[str]
    recoverable: bool  # whether `undo` can bring them back


class EvolveResult(Record):
    note: str
    dry_run: bool
    links: list[str]
    evolutions: dict[str, dict[str, Any]]  # {note: {field: its new value}}


class BlockResult(Record):
    """What `amem context --json` prints: the prompt-ready block of notes for a query."""

    query: str
    context: str  # the block's text (a name kept from before the glossary: it is no note's context)
    tokens: int
    notes: list[str]


# -- results: bringing notes in ------------------------------------------------------


class IngestReport(Record):
    name: str  # the transcript's: a file name, or "stdin"
    ids: list[str] = []  # the notes added, in order
    skipped: int = 0  # notes present already
    redactions: int = 0
    similar: list[dict[str, Any]] = []  # {"id", "similar_to", "score"}
    queued: int = 0  # notes whose model work is queued

    derived = ("ingested",)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ingested": len(self.ids), "skipped": self.skipped, "redactions": self.redactions,
                "ids": list(self.ids), "similar": encode(self.similar), "queued": self.queued}


class ImportReport(Record):
    ids: list[str] = []  # the notes imported, in order
    skipped: int = 0  # lines or files that could not be imported (see `problems`)
    duplicates: int = 0  # imported before, so left alone
    problems: list[str] = []  # "path:line: what is wrong", one per skipped
    warnings: list[str] = []
    redactions: int = 0  # secrets replaced by [REDACTED:kind] in the notes imported
    queued: int = 0  # notes whose model work is queued

    derived = ("imported",)

    def to_json(self) -> dict[str, Any]:
        return {"imported": len(self.ids), "skipped": self.skipped, "duplicates": self.duplicates, "ids": list(self.ids),
                "problems": list(self.problems), "warnings": list(self.warnings), "redactions": self.redactions,
                "queued": self.queued}

    to_dict = to_json  # (the Python API's name for it)


# -- results: the queue --------------------------------------------------------------


class ProcessResult(Record):
    processed: list[str]  # the notes whose queued work was done, in order
    queued: int  # jobs left


class Job(Record):
    id: str  # the note's
    state: str  # queued, running or failed
    queued: str  # when
    failures: int
    error: str | None
    content: str | None  # the note's first words


class QueueSummary(Record):
    """The queue in numbers: jobs waiting, running, failed (and waiting to be tried
    again), the seconds a job takes at the rate measured and all of them would take."""

    queued: int
    running: int
    failed: int
    seconds_per_job: float | None
    seconds_left: float | None


class QueueResult(Record):
    jobs: list[Job]  # in the order they are worked
    summary: QueueSummary


class CancelResult(Record):
    cancelled: list[str]
    running: list[str]  # held by a worker, left to it
    not_queued: list[str]


# -- results: the vault --------------------------------------------------------------


class BoxCount(Record):
    box: str
    notes: int


class BoxesRebuilt(Record):
    """What `amem boxes --rebuild` did."""

    filed: int  # notes amem filed (again)
    moved: int  # of those, the notes now in another box (each a revision)
    kept: int  # notes left as they are: boxes a person gave or moved them into, pinned, not embedded yet
    boxes: list[BoxCount]  # where amem filed its notes, biggest first


class GraphStats(Record):
    """How the link graph has grown: the small-world measures of the A-MEM write-up."""

    notes: int
    links: int  # A-MEM links (each counted once), without sequence links
    sequence_links: int
    links_per_note: float
    components: int
    largest_component: int
    diameter: int  # of the largest component, over links and sequence links
    diameter_exact: bool
    clustering: float  # average clustering coefficient
    boxes: int


class GraphResult(Record):
    text: str  # the graph in `format`
    format: str
    nodes: int
    edges: int


class ReindexResult(Record):
    notes: int
    embedded: int
    errors: list[str]


class SyncResult(Record):
    added: int
    updated: int
    removed: int
    errors: list[str]


class Status(Record):
    """What `amem status --json` prints: how the index stands against the files."""

    vault: str
    notes: int
    indexed: int
    embedded: int
    links: int
    boxes: int
    pending_changes: int
    embedding_model: str | None
    embedding_dimensions: int | None
    vector_store: str
    errors: list[str] = []
    queue: QueueSummary | None = None


class VaultStatusResult(Record):
    status: Status
    read_only: bool  # amem changes nothing in the vault (its index is kept in `index_dir`)
    index_dir: str


# Problems only a person can mend (a fix would be a guess at what they meant).
PERSON = {"bad_file", "dangling_link"}


class Problem(Record):
    kind: str  # a stable name, e.g. "missing_vector" (see `services.doctor`)
    subject: str  # the note id or path it is about
    detail: str  # one line for a person
    hint: str = ""  # what to do, when `--fix` does not do it

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"

    to_dict = Record.to_json


class DoctorReport(Record):
    problems: list[Problem] = []
    fixed: list[str] = []  # what --fix did, one line each
    warnings: list[str] = []  # shown, not counted as problems (an id used twice)
    notes: int = 0  # note files on disk

    derived = ("ok", "summary")

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def for_a_person(self) -> bool:
        """Every problem is one `--fix` does not mend: a person must edit a file."""
        return bool(self.problems) and self.kinds() <= PERSON

    def kinds(self) -> set[str]:
        return {p.kind for p in self.problems}

    def summary(self) -> str:
        if self.ok:
            return f"consistent: {plural(self.notes, 'note')}"
        counts: dict[str, int] = {}
        for p in self.problems:
            counts[p.kind] = counts.get(p.kind, 0) + 1
        return f"{plural(len(self.problems), 'problem')}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "notes": self.notes, "summary": self.summary(), "problems": encode(self.problems),
                "fixed": list(self.fixed), "warnings": list(self.warnings)}

    to_dict = to_json  # (the Python API's name for it)


def plural(n: int, word: str) -> str:
    """`1 note`, `2 notes`."""
    return f"{n} {word}{'' if n == 1 else 's'}"


class DoctorResult(Record):
    report: DoctorReport
    for_a_person: bool  # only a person can mend what is wrong


class InitResult(Record):
    vault: str
    notes: int
    indexed: int  # notes indexed now
    profile: str | None


# -- requests: single notes ----------------------------------------------------------


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


class Undo(Request, op="undo", result=NoteResult):
    id: str


class Evolve(Request, op="evolve", result=EvolveResult, starts_server=True):
    id: str
    dry_run: bool = False


# -- requests: finding ---------------------------------------------------------------


class Search(Request, op="search", result=list[HitResult], starts_server=True, redo=True):
    query: str
    limit: int = 10
    mode: str = "hybrid"
    tags: list[str] | None = None
    boxes: list[str] | None = None
    since: str | None = None
    until: str | None = None
    floor: bool = True  # only the notes the query matched (the Python API may ask for `limit` hits regardless)


class Block(Request, op="block", result=BlockResult, starts_server=True, redo=True):
    """The prompt-ready block of the best notes for a query (`amem context`)."""

    query: str
    max_tokens: int | None = 2000  # None: no budget
    limit: int = 10
    tags: list[str] | None = None
    boxes: list[str] | None = None
    since: str | None = None
    until: str | None = None


# -- requests: bringing notes in -----------------------------------------------------


class Ingest(Request, op="ingest", result=list[IngestReport], starts_server=True):
    transcripts: list[list[str]]  # [name, text] pairs, read by the client
    redact: bool = True
    wait: bool = False


class Import(Request, op="import", result=ImportReport, starts_server=True, redo=True):
    path: str  # absolute, or '-' for `stdin`
    wait: bool = False
    batch: int = 256
    redact: bool = True
    stdin: str | None = None  # the JSONL text the client read from its standard input


class Process(Request, op="process", result=ProcessResult, starts_server=True, redo=True):
    """Work the queue: at most `limit` jobs, none started after `seconds`."""

    limit: int | None = None
    seconds: float | None = None


class Queue(Request, op="queue", result=QueueResult, redo=True):
    limit: int | None = None


class CancelQueued(Request, op="queue_cancel", result=CancelResult, redo=True):
    ids: list[str] | None = None  # None: all


# -- requests: the vault -------------------------------------------------------------


class Init(Request, op="init", result=InitResult, served=False):
    """Make the vault ready: its folder and index, a .gitignore that leaves the index
    out, and with a `profile` its amem.toml. (Not served: it makes the vault a server
    would serve, and writes the user's own record of trusted vaults.)"""

    profile: str | None = None


class Boxes(Request, op="boxes", result=list[BoxCount]):
    pass


class RebuildBoxes(Request, op="rebuild_boxes", result=BoxesRebuilt):
    """File the notes amem filed into the vault's topics again (`amem boxes --rebuild`)."""


class Stats(Request, op="stats", result=GraphStats):
    pass


class Graph(Request, op="graph", result=GraphResult):
    format: str = "mermaid"  # mermaid, dot, graphml, json, or html (a page)
    around: str | None = None
    depth: int = 2
    tags: list[str] | None = None
    boxes: list[str] | None = None


class Sync(Request, op="sync", result=SyncResult):
    """Pick up the files others changed, now."""


class Reindex(Request, op="reindex", result=ReindexResult):
    pass


class VaultStatus(Request, op="vault_status", result=VaultStatusResult):  # "status" is the server's own
    pass


class Doctor(Request, op="doctor", result=DoctorResult):
    fix: bool = False


class Config(Request, op="config", result=dict[str, Any]):
    """The settings in effect, as text and numbers."""
