"""The operations: the one way in to the services, one function each.

Every way in runs these through a `Facade`: the CLI (in the command's own process, or in
the vault's warm server, where `server/protocol.py` carries them), the MCP server and the
Python API. An operation takes its request (`amem_cli.wire`) and the `Call` it runs in,
calls services, and returns its result, or the services' data it is made from
(`Request.answer` turns that into the result). No Typer, no Rich: rendering is each way
in's own business.

The rules every way in shares live here, once: when the model's work is queued
(`should_queue`); the search floor and the warning about a query of only common words
(`_search`); a read sees the files as they are now (`fresh`; the services' own reads
sync too); what the index could not read is told once (`Facade.problems`).

Adding an operation: a request and its result in `wire/`, one function here
registered for the request; the CLI, the server, MCP and the API reach it as they are.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import Settings
from .container import Container, ModelWrapper
from .errors import AmemError, UsageError
from .llm.base import LLM
from .models import Note, SearchHit
from .places import INDEX_DIR
from .wire import Request
from .wire.intake import Import, ImportReport, Ingest, IngestReport
from .wire.current import (
    Consolidate, ConsolidateResult, ForgetExpired, ForgetResult, Supersede, SupersedeResult, SupersedeSuggestions,
    Suggestion,
)
from .wire.editing import (
    AddMany, AddNote, Edit, Edited, EvolveResult, Evolve, History, NoteFile, Remove, Restored, Revision, Trash, TrashEntry,
    Undo,
)
from .wire.notes import Add, Block, BlockResult, ListNotes, Search, Show
from .wire.queue import CancelQueued, CancelResult, Job, Process, ProcessResult, Queue, QueueResult
from .wire.vault import (
    BoxCount, Boxes, BoxesRebuilt, Config, Doctor, DoctorResult, Graph, GraphResult, Init, InitResult, RebuildBoxes, Reindex, ReindexResult,
    Stats, Sync, VaultStatus, VaultStatusResult,
)

Progress = Callable[[int, int | None], None]  # (done, total) of a long operation


class Facade:
    """One vault's services, and the one way to run operations on them: what every way
    in holds (the CLI's session, the servers, the Python API). The container behind it is
    built at the first operation, with what the facade was given; an operation that
    `creates` the vault (`amem init`) checks its request before the vault's folder is made."""

    def __init__(self, settings: Settings, *, create: bool = False, llm: LLM | None = None,
                 wrap_llm: ModelWrapper | None = None, between_batches: Callable[[], None] | None = None,
                 watch: bool = False, has_worker: bool = False, shared_with: Facade | None = None):
        """`create`: make the vault's folder if missing. `llm`, `wrap_llm`,
        `between_batches`, `watch`: see `Container`. `has_worker`: a worker in this
        process works the queue with this facade's model (a server's). `shared_with`: see
        `variant`."""
        self.settings = settings
        self.has_worker = has_worker
        self._create = create
        self._options = {"llm": llm, "wrap_llm": wrap_llm, "between_batches": between_batches, "watch": watch}
        self._shared = shared_with
        self._container: Container | None = None

    def _services(self, create: bool = False) -> Container:
        if self._container is None:
            if self._shared is not None:
                self._container = self._shared._services().variant(self.settings)
            else:
                self._container = Container(self.settings, create=self._create or create, **self._options)
        return self._container

    def variant(self, settings: Settings) -> Facade:
        """A facade for one command whose settings differ from these in the model choice
        only (`Container.variant`); no worker works its queue with its model."""
        return Facade(settings, shared_with=self)

    def run(self, request: Request, *, progress: Progress | None = None, warnings: list[str] | None = None) -> Any:
        """What the operation of `request` returns (`request.answer` makes its result of
        it). What it has to tell the user is added to `warnings`, even when it fails."""
        fn, fresh, creates = OPERATIONS[type(request)]
        call = Call(self, creates, progress, warnings if warnings is not None else [])
        if self._container is not None or self._shared is not None:  # (a vault is checked when it is opened)
            call.container.vault.check_index_links()  # a link planted under .amem/ since: refused before any use
        if fresh:
            call.container.indexer.sync()
        return fn(call, request)

    def problems(self) -> list[str]:
        """What the index noticed since last asked (a note file it could not read), once each."""
        if self._container is None or "indexer" not in self._container.__dict__:
            return []  # nothing was looked at
        return self._container.indexer.take_problems()

    def told(self, warnings: list[str]) -> list[str]:
        """What a caller tells its user after an operation: its warnings, then what the
        index could not read (`problems`), each once."""
        return warnings + [p for p in self.problems() if p not in warnings]

    # -- what the servers need besides operations -------------------------------
    @property
    def root(self) -> Path:
        return self._services().vault.root

    @property
    def index_dir(self) -> Path:
        return self._services().vault.index_dir

    def warm_up(self, *, model: bool = False) -> None:
        """Load the embedder and the vector store's client (and with `model` the model)
        before the first call needs them. A model that will not load is said on stderr:
        each job that needs it says so again."""
        c = self._services()
        c.embedder.embed(["warm up"])
        c.indexer.vectors().count()
        warm = getattr(c.llm, "warm", None) if model else None
        if warm is not None:
            try:
                warm()
            except Exception as exc:
                import sys

                print(f"model not loaded: {exc}", file=sys.stderr, flush=True)

    def jobs_waiting(self, *, apart: bool = True) -> int | None:
        """How many jobs the queue holds. `apart`: read on a connection of its own, so a
        server answers `amem server status` without waiting for its turn on the index (None
        when it cannot be read so)."""
        from .index.jobs import job_total

        c = self._services()
        return job_total(c.index.path) if apart else len(c.index.jobs.queued())

    def close(self) -> None:
        if self._container is not None:
            self._container.close()


@dataclass
class Call:
    """One operation's run: what it needs besides its request, and what it has to say."""

    facade: Facade
    creates: bool  # the operation makes the vault's folder if missing
    progress: Progress | None = None
    warnings: list[str] = field(default_factory=list)  # told to the user after the fact

    @property
    def container(self) -> Container:
        return self.facade._services(create=self.creates)


OPERATIONS: dict[type[Request], tuple[Callable[[Call, Any], Any], bool, bool]] = {}


def operation(request: type[Request], *, fresh: bool = False, creates: bool = False) -> Callable:
    """Register the function that does what `request` asks. `fresh`: it reads the index,
    which first catches up with the files. `creates`: it makes the vault if missing."""

    def register(fn: Callable) -> Callable:
        OPERATIONS[request] = (fn, fresh, creates)
        return fn

    return register


# -- the services' data, with what a result adds to it (`Request.answer` reads `to_dict`) --


@dataclass
class Added:
    note: Note
    queued: bool  # the model's work on it is queued
    duplicate: bool = False  # the text was this note's already (it records the date it was said again)

    def to_dict(self) -> dict[str, Any]:
        return {**self.note.to_dict(), "queued": int(self.queued), "duplicate": self.duplicate}


@dataclass
class Shown:
    note: Note
    related: dict[str, str | None] | None  # see `wire.notes.ShowResult`

    def to_dict(self) -> dict[str, Any]:
        return self.note.to_dict() if self.related is None else {**self.note.to_dict(), "related": self.related}


@dataclass
class Removed:
    notes: list[Note]
    recoverable: bool

    def to_dict(self) -> dict[str, Any]:
        return {"removed": [n.id for n in self.notes], "recoverable": self.recoverable}


@dataclass
class Undone:
    note: Note
    restored: Restored

    def to_dict(self) -> dict[str, Any]:
        return {**self.note.to_dict(), "restored": self.restored.to_json()}


@dataclass
class Found:
    """A block of notes, and the hits it was made of (the MCP server says why a block is empty)."""

    block: BlockResult
    hits: list[SearchHit]

    def to_dict(self) -> dict[str, Any]:
        return self.block.to_json()


# -- single notes -------------------------------------------------------------------


@operation(Add)
def add(call: Call, req: Add) -> Added:
    from .redact import REDACTED

    queue = should_queue(call, req.wait)
    note, duplicate = call.container.notes.remember(
        req.content, keywords=req.keywords, tags=req.tags, context=req.context, boxes=req.boxes,
        metadata=req.metadata or {}, created_at=req.created_at, after=req.after, defer=queue, redact=req.redact,
        ttl=_ttl(req.ttl), expires=req.expires,
    )
    if duplicate:
        call.warnings.append(f"the same text as {note.id}: not stored again; it records that it was said again")
    elif redacted := note.metadata.get(REDACTED):
        call.warnings.append(f"{redacted} secret{'s' if redacted != 1 else ''} redacted (--no-redact keeps them)")
    return Added(note, queue and not duplicate, duplicate)


def _ttl(text: str | None):
    """A note's time to live as a person wrote it (30d, 12h, 2w)."""
    from .timeutil import duration

    return None if text is None else duration(text)


@operation(AddMany)
def add_many(call: Call, req: AddMany) -> list[Note]:
    return call.container.notes.add_many(req.items, after=req.after, defer=should_queue(call, req.wait),
                                         redact=req.redact)


@operation(AddNote)
def add_note(call: Call, req: AddNote) -> Note:
    return call.container.notes.add_note(Note.from_dict(req.note), after=req.after)


def should_queue(call: Call, wait: bool) -> bool:
    """Whether a write queues the model's work (constructing, linking, evolving its notes)
    rather than doing it before it returns: unless `wait`, when there is a model to do it
    (with none, the deterministic methods do their part at once). Either way the notes
    are stored, indexed and embedded before the write returns; the queue's work is done
    by a server's worker, or by `amem process`. A job names no model, and they work it
    with the vault's own: work asked of another model (`amem --model X add`, in this
    process) is done before the write returns."""
    if wait or not call.container.notes.pipeline.has_model():
        return False
    return call.facade.has_worker or _the_vaults_own_model(call.container.settings)


def _the_vaults_own_model(settings: Settings) -> bool:
    from .config import MODEL_CHOICE, load_settings

    own = load_settings(dir=str(settings.dir), notices=[])  # what a worker started from the vault would use
    return all(getattr(own, name) == getattr(settings, name) for name in MODEL_CHOICE)


@operation(Show)
def show(call: Call, req: Show) -> Shown:
    notes = call.container.notes
    note = notes.get(req.id)
    related = None
    if req.related:
        related = notes.glimpses(filter(None, [note.previous, note.next, *note.links, *note.backlinks,
                                               *note.supersedes, *note.superseded_by]))
    return Shown(note, related)


@operation(ListNotes)
def list_(call: Call, req: ListNotes) -> list[Note]:
    return call.container.notes.list(tags=req.tags, boxes=req.boxes, since=_when(call, req.since),
                                     until=_when(call, req.until), limit=req.limit)


def _when(call: Call, text: str | None):
    """A date-time a person gave (`--since`), read in the vault's date order."""
    from .timeutil import to_datetime

    return to_datetime(text, call.container.settings.date_order) if text else None


@operation(NoteFile)
def note_file(call: Call, req: NoteFile) -> str:
    notes = call.container.notes
    notes.get(req.id)  # brings the index up to date with the file first
    return call.container.vault.read_bytes(notes.path_of(req.id)).decode("utf-8")


@operation(Edit)
def edit(call: Call, req: Edit) -> str:
    c = call.container
    c.vault.check_writable()  # before an editor opens a file it could not save
    c.notes.get(req.id)  # an unknown id fails here, before an editor opens
    return str(c.vault.abspath(c.notes.path_of(req.id)))


@operation(Edited)
def edited(call: Call, req: Edited) -> Note:
    c = call.container
    rel = c.notes.path_of(req.id)
    problems = [e for e in c.indexer.sync().errors if e.startswith(rel)]
    if problems:
        raise UsageError(problems[0], hint="edit the note again to fix it; it is not indexed until then")
    c.indexer.flush_vectors()
    return c.notes.get(req.id, sync=False)


@operation(Remove)
def rm(call: Call, req: Remove) -> Removed:
    notes = call.container.notes
    return Removed([notes.delete(i, purge=req.purge) for i in req.ids], not req.purge and notes.trash.days > 0)


@operation(History)
def history(call: Call, req: History) -> list[Revision]:
    revisions = []
    for r in call.container.notes.history(req.id):
        public = {k: v for k, v in r.items() if k not in ("old_bytes", "new_hash")}
        public["old_tags"], public["new_tags"] = json.loads(r["old_tags"]), json.loads(r["new_tags"])
        revisions.append(Revision(**public))
    return revisions


@operation(Undo)
def undo(call: Call, req: Undo) -> Undone:
    notes = call.container.notes
    removed = notes.removed_version(req.id)
    if removed is not None:
        note = notes.undo(req.id)
        version = req.id if "@" in req.id else f"{removed.id}@1"
        return Undone(note, Restored(version=version, removed=_iso(removed.removed), path=removed.path,
                                     left=len(notes.trash.versions(note.id))))
    last = notes.history(req.id)[-1:]
    note = notes.undo(req.id)
    return Undone(note, Restored(revision=last[0]["seq"], at=last[0]["at"], cause=last[0]["cause"]) if last else Restored())


@operation(Trash)
def trash(call: Call, req: Trash) -> list[TrashEntry]:
    """Newest first; `version` is `ID@N`, the Nth newest removal of ID."""
    from .markdown import parse_note

    rank: dict[str, int] = {}
    out = []
    for removed in call.container.notes.trash.versions(req.id):
        rank[removed.id] = rank.get(removed.id, 0) + 1
        try:
            text = parse_note(removed.data.decode("utf-8"), path=removed.path, fallback_id=removed.id).content
        except (AmemError, UnicodeDecodeError):  # a file that was no note amem could read: its bytes as they are
            text = removed.data.decode("utf-8", errors="replace")
        out.append(TrashEntry(version=f"{removed.id}@{rank[removed.id]}", id=removed.id, path=removed.path,
                              removed=_iso(removed.removed), text=" ".join(text.split()[:12])))
    return out


def _iso(timestamp: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="seconds")


@operation(Supersede)
def supersede(call: Call, req: Supersede) -> SupersedeResult:
    s = call.container.notes.supersessions
    return SupersedeResult(**(s.undo(req.old, req.new) if req.undo else s.supersede(req.old, req.new)))


@operation(SupersedeSuggestions)
def supersede_suggestions(call: Call, req: SupersedeSuggestions) -> list[Suggestion]:
    return [Suggestion(**p) for p in call.container.notes.supersessions.suggestions()]


@operation(Consolidate)
def consolidate(call: Call, req: Consolidate) -> ConsolidateResult:
    from .services.consolidate import consolidate as merge

    return ConsolidateResult(groups=merge(call.container.notes, dry_run=req.dry_run), dry_run=req.dry_run)


@operation(ForgetExpired, fresh=True)
def forget_expired(call: Call, req: ForgetExpired) -> ForgetResult:
    """Expired notes to the trash (`amem undo ID` brings one back)."""
    from .timeutil import now

    notes = call.container.notes
    expired = sorted(notes.index.notes.expired(now()))
    if not req.dry_run:
        for note_id in expired:
            notes.delete(note_id)
    return ForgetResult(removed=expired, dry_run=req.dry_run, recoverable=notes.trash.days > 0)


@operation(Evolve)
def evolve(call: Call, req: Evolve) -> EvolveResult:
    return EvolveResult(note=req.id, dry_run=req.dry_run, **call.container.notes.pipeline.revisit(req.id, dry_run=req.dry_run))


# -- finding ------------------------------------------------------------------------


@operation(Search)
def search(call: Call, req: Search) -> list[SearchHit]:
    return _search(call, req.query, limit=req.limit, mode=req.mode, tags=req.tags, boxes=req.boxes, since=req.since,
                   until=req.until, now=req.now, floor=req.floor, as_of=req.as_of, include_expired=req.include_expired)


def _search(call: Call, query: str, *, since: str | None, until: str | None, now: str | None, as_of: str | None,
            floor: bool = True,
            **options: Any) -> list:
    """The hits. With the floor, only those that mean something (`SearchService._floor`):
    a query of only common words then finds none, and the user is told why."""
    from .retrieve.query import unsearchable

    if floor and (why := unsearchable(query)):
        call.warnings.append(why)
    asked_at = _when(call, now)  # a bad date is refused before anything is searched
    return call.container.search.search(query, floor=floor, since=_when(call, since), until=_when(call, until), now=asked_at,
                                        as_of=_when(call, as_of), **options)


@operation(Block)
def block(call: Call, req: Block) -> Found:
    from .services.block import block_of

    hits = _search(call, req.query, limit=req.limit, tags=req.tags, boxes=req.boxes, since=req.since, until=req.until,
                   now=req.now, as_of=req.as_of, include_expired=req.include_expired)
    return Found(BlockResult(**block_of(req.query, hits, req.max_tokens, history=req.history)), hits)


# -- bringing notes in --------------------------------------------------------------


@operation(Ingest)
def ingest(call: Call, req: Ingest) -> list[IngestReport]:
    """One report per [name, text] pair, with its `queued` (see `should_queue`)."""
    if any(len(t) != 2 for t in req.transcripts):
        raise UsageError("each transcript is a [name, text] pair")
    ingester, queue, ttl = call.container.ingester, should_queue(call, req.wait), _ttl(req.ttl)
    return [ingester.ingest(text, name, redact_secrets=req.redact, defer=queue, ttl=ttl) for name, text in req.transcripts]


@operation(Import)
def import_(call: Call, req: Import) -> ImportReport:
    import io

    if req.path == "-" and req.stdin is None:
        raise UsageError("importing '-' needs the text of standard input")
    return call.container.importer.import_path(
        req.path, defer=should_queue(call, req.wait), batch=req.batch, progress=call.progress, redact=req.redact,
        stdin=io.StringIO(req.stdin) if req.path == "-" else None, ttl=_ttl(req.ttl),
    )


@operation(Process)
def process(call: Call, req: Process) -> ProcessResult:
    import time

    from .limits import check_seconds

    c = call.container
    if req.seconds is not None:
        check_seconds("--until", req.seconds, hint="at most a week: --until 18:30, --until 20m")
    until = None if req.seconds is None else time.monotonic() + req.seconds
    c.indexer.flush_vectors()  # the vectors of notes written elsewhere first: a job links its note by them
    done = c.notes.pipeline.process(req.limit, progress=call.progress, until=until)
    return ProcessResult(processed=done, queued=len(c.index.jobs.queued()))


@operation(Queue)
def queue(call: Call, req: Queue) -> QueueResult:
    c = call.container
    running = {n for n, _, _ in c.index.jobs.claims()} - {n for n, _ in c.queue.expired()}
    jobs = [Job(id=j["note_id"], state="running" if j["note_id"] in running else "failed" if j["failures"] else "queued",
                queued=j["queued"], failures=j["failures"], error=j["error"], content=j["content"])
            for j in c.index.jobs.listing(req.limit)]
    return QueueResult(jobs=jobs, summary=c.queue.summary())


@operation(CancelQueued)
def queue_cancel(call: Call, req: CancelQueued) -> CancelResult:
    """Drop the jobs of `ids` (None: all): see `Pipeline.cancel`."""
    return CancelResult(**call.container.notes.pipeline.cancel(req.ids, progress=call.progress))


# -- the vault ----------------------------------------------------------------------

GITIGNORE = f"# amem's index is derived from the notes: `amem reindex` rebuilds it.\n{INDEX_DIR}/\n"


@operation(Init, creates=True)
def init(call: Call, req: Init) -> InitResult:
    from .config import VAULT_CONFIG, profile_toml, trust_vault
    from .vault import content_hash

    toml = profile_toml(req.profile) if req.profile else None  # an unknown profile fails before anything is written
    c = call.container  # (the vault's folder is made here)
    if toml is not None:
        if (c.vault.root / VAULT_CONFIG).exists():
            raise UsageError(f"{c.vault.root / VAULT_CONFIG} exists already", hint="edit it, or remove it first")
        c.vault.write_text(VAULT_CONFIG, toml)
        trust_vault(c.vault.root)  # amem wrote it for this user: theirs, as long as it stays as written
    gitignore = c.vault.root / ".gitignore"
    if not gitignore.exists():
        c.vault.write_text(".gitignore", GITIGNORE)
    elif f"{INDEX_DIR}/" not in (ignored := gitignore.read_bytes()).decode("utf-8", errors="replace").split():
        c.vault.write_text(".gitignore", ignored.decode("utf-8").rstrip("\n") + "\n" + GITIGNORE, expect_hash=content_hash(ignored))
    report = c.indexer.sync()
    return InitResult(vault=str(c.vault.root), notes=c.index.notes.count(), indexed=report.added, profile=req.profile)


@operation(Boxes, fresh=True)
def boxes(call: Call, req: Boxes) -> list[BoxCount]:
    return [BoxCount(box=box, notes=n) for box, n in call.container.index.notes.boxes()]


@operation(RebuildBoxes, fresh=True)
def rebuild_boxes(call: Call, req: RebuildBoxes) -> BoxesRebuilt:
    """See `Pipeline.rebuild_boxes`."""
    call.container.vault.check_writable()
    done = call.container.notes.pipeline.rebuild_boxes()
    return BoxesRebuilt(**{**done, "boxes": [BoxCount(box=box, notes=n) for box, n in done["boxes"]]})


@operation(Stats, fresh=True)
def stats(call: Call, req: Stats):
    from .services.stats import graph_stats

    return graph_stats(call.container.index)


@operation(Graph, fresh=True)
def graph(call: Call, req: Graph) -> GraphResult:
    """The graph as text in `format` (mermaid, dot, graphml, json, or html: a page)."""
    from .services import graph as views

    c = call.container
    g = views.build_graph(c.index, around=req.around, depth=req.depth, tags=req.tags, boxes=req.boxes)
    if req.format == "html":
        title = f"{c.vault.root.name}: around {req.around}" if req.around else c.vault.root.name
        text = views.to_html(g, f"amem graph of {title}")
    else:
        text = views.render(g, req.format)
    kinds = [e.kind for e in g.edges]
    return GraphResult(text=text, format=req.format, notes=len(g.nodes), links=kinds.count("link"),
                       sequence_links=kinds.count("sequence"))


@operation(Sync)
def sync(call: Call, req: Sync):
    return call.container.indexer.sync(force=True)


@operation(Reindex)
def reindex(call: Call, req: Reindex) -> ReindexResult:
    c = call.container
    report = c.indexer.reindex(progress=call.progress)
    return ReindexResult(notes=c.index.notes.count(), embedded=c.index.notes.embedded_count(), errors=report.errors)


@operation(VaultStatus)
def vault_status(call: Call, req: VaultStatus) -> VaultStatusResult:
    """Read before any sync: how the index stands against the files."""
    c = call.container
    status = c.indexer.status(vector_store=c.settings.chroma_url or "local")
    status.queue = c.queue.summary()
    return VaultStatusResult(status=status, read_only=c.vault.read_only, index_dir=str(c.vault.index_dir))


@operation(Doctor)
def doctor(call: Call, req: Doctor) -> DoctorResult:
    report = call.container.doctor.run(fix=req.fix)
    return DoctorResult(report=report, for_a_person=report.for_a_person)


@operation(Config)
def config(call: Call, req: Config) -> dict[str, Any]:
    """The settings in effect, the model among them (a default left unset is named), and
    where each came from: this process's environment and the command's flags."""
    import dataclasses

    from .config import settings_with_sources

    settings, sources = settings_with_sources(notices=[], **(req.flags or {}))
    shown = {k: (str(v) if v is not None and not isinstance(v, (int, float, str)) else v)
             for k, v in dataclasses.asdict(settings).items()}
    shown["sources"] = {k: {"source": s.kind, "where": s.where} for k, s in sources.items()}
    shown["llm"] = shown["llm"] or ("openai" if shown["llm_url"] else "llama")
    if shown["llm"] == "llama" and not shown["model"]:
        from .llm.base import LLMError
        from .llm.llamacpp import default_model_path

        with contextlib.suppress(LLMError):  # not installed: left unset, as the command that loads it says
            shown["model"] = str(default_model_path())
    return shown
