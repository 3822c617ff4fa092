"""The operations the CLI asks for, one function each: the one way in to the services for
the `amem` commands, whether they run in the command's own process or in the vault's
warm server (`server/protocol.py` carries them there).

An operation takes JSON-able arguments (paths absolute, standard input already read by
the client) and a `Context`, calls services, and returns a JSON-able result: the shape
the command's `--json` prints where it has one. No Typer, no Rich: rendering is the
CLI's business.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import AmemError, UsageError

if typing.TYPE_CHECKING:
    from .container import Container


@dataclass
class Context:
    """What an operation needs besides its arguments."""

    container: Container
    in_server: bool = False  # done by the warm server with its own container: its worker works the queue with this model
    progress: Callable[[int, int | None], None] | None = None  # (done, total) of a long operation
    warnings: list[str] = field(default_factory=list)  # told to the user on stderr, after the fact


OPERATIONS: dict[str, Callable[..., Any]] = {}


def operation(name: str) -> Callable:
    def register(fn: Callable) -> Callable:
        OPERATIONS[name] = fn
        return fn

    return register


def run(name: str, args: dict[str, Any], cx: Context) -> Any:
    """The operation's result. Unknown operations and arguments of the wrong name or type
    are a UsageError, before anything is done."""
    fn = OPERATIONS.get(name) if isinstance(name, str) else None
    if fn is None:
        raise UsageError(f"unknown operation {name!r}", hint=f"one of: {', '.join(sorted(OPERATIONS))}")
    _check(name, fn, args)
    try:
        return fn(cx, **args)
    finally:
        cx.warnings.extend(p for p in problems(cx.container) if p not in cx.warnings)


def problems(c: Container) -> list[str]:
    """What the index noticed since last asked (a note file it could not read), once each."""
    if "indexer" not in c.__dict__:  # not built (the container builds its parts on first use)
        return []
    found = list(dict.fromkeys(c.indexer.problems))
    c.indexer.problems.clear()
    return found


def _check(name: str, fn: Callable, args: Any) -> None:
    if not isinstance(args, dict):
        raise UsageError(f"the arguments of {name!r} are a JSON object, not {type(args).__name__}")
    hints = typing.get_type_hints(fn)
    params = list(inspect.signature(fn).parameters.values())[1:]  # after the context
    known = {p.name: p for p in params}
    for key, value in args.items():
        if key not in known:
            raise UsageError(f"{name!r} takes no argument {key!r}", hint=f"it takes: {', '.join(known) or 'none'}")
        if not _fits(value, hints[key]):
            raise UsageError(f"{name!r}: {key!r} cannot be {value!r}")
    missing = [p.name for p in params if p.default is inspect.Parameter.empty and p.name not in args]
    if missing:
        raise UsageError(f"{name!r} needs {', '.join(map(repr, missing))}")


def _fits(value: Any, hint: Any) -> bool:
    """Whether a JSON value has the annotated type (str, int, bool, None, lists and dicts of them)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if origin is dict:
        key, item = typing.get_args(hint)
        return isinstance(value, dict) and all(_fits(k, key) and _fits(v, item) for k, v in value.items())
    raise TypeError(f"no check for {hint!r}")


# -- single notes -------------------------------------------------------------------


@operation("add")
def add(cx: Context, content: str, keywords: list[str] | None = None, tags: list[str] | None = None,
        context: str | None = None, boxes: list[str] | None = None, metadata: dict[str, str] | None = None,
        created: str | None = None, after: str | None = None, wait: bool = False, redact: bool = True) -> dict:
    """The note, and `queued`: 1 when its model work is queued, else 0."""
    from .redact import REDACTED

    queue = queues(cx, wait)
    note = cx.container.notes.add(
        content, keywords=keywords, tags=tags, context=context, boxes=boxes, metadata=metadata or {}, created_at=created,
        after=after, defer=queue, redact=redact,
    )
    if redacted := note.metadata.get(REDACTED):
        cx.warnings.append(f"{redacted} secret{'s' if redacted != 1 else ''} redacted (--no-redact keeps them)")
    return {**note.to_dict(), "queued": int(queue)}


def queues(cx: Context, wait: bool) -> bool:
    """Whether a write queues the model's work (building, linking, evolving its notes)
    rather than doing it before it returns: unless `wait`, when there is a model to do it
    (with none, the deterministic methods do their part at once). Either way the notes
    are stored, indexed and embedded before the write returns; the queue's work is done
    by the warm server's worker, or by `amem process`. A job names no model, and they
    work it with the vault's own: work asked of another model (`amem --model X add`, in
    this process) is done before the write returns."""
    if wait or not cx.container.notes.pipeline.has_model():
        return False
    return cx.in_server or _the_vaults_own_model(cx.container.settings)


def _the_vaults_own_model(settings) -> bool:
    from .config import MODEL_CHOICE, load_settings

    own = load_settings(dir=str(settings.dir), notices=[])  # what a worker started from the vault would use
    return all(getattr(own, name) == getattr(settings, name) for name in MODEL_CHOICE)


@operation("show")
def show(cx: Context, id: str, related: bool = False) -> dict:
    """The note; `related` adds {"related": {link as written: the first words of the note
    it names, or None}} for its links, backlinks, previous and next (the human view)."""
    notes = cx.container.notes
    note = notes.get(id)
    shown = note.to_dict()
    if related:
        shown["related"] = notes.glimpses(filter(None, [note.previous, note.next, *note.links, *note.backlinks]))
    return shown


@operation("list")
def list_(cx: Context, tags: list[str] | None = None, boxes: list[str] | None = None, since: str | None = None,
          until: str | None = None, limit: int = 50) -> list[dict]:
    from .timeutil import to_datetime

    notes = cx.container.notes.list(tags=tags, boxes=boxes, since=to_datetime(since) if since else None,
                                    until=to_datetime(until) if until else None, limit=limit)
    return [n.to_dict() for n in notes]


@operation("rm")
def rm(cx: Context, ids: list[str], purge: bool = False) -> dict:
    """`purge`: keep nothing of them (else `undo` brings each back, within `trash_days`).
    `recoverable`: whether `undo` can (not when purged, nor with `trash_days` 0)."""
    notes = cx.container.notes
    return {"removed": [notes.delete(i, purge=purge).id for i in ids], "recoverable": not purge and notes.trash.days > 0}


@operation("history")
def history(cx: Context, id: str) -> list[dict]:
    import json

    revisions = []
    for r in cx.container.notes.history(id):
        public = {k: v for k, v in r.items() if k not in ("old_bytes", "new_hash")}
        public["old_tags"], public["new_tags"] = json.loads(r["old_tags"]), json.loads(r["new_tags"])
        revisions.append(public)
    return revisions


@operation("undo")
def undo(cx: Context, id: str) -> dict:
    """The note as restored, and `restored`: what undo brought back (a removed version,
    with how many `left` in the trash; or the file before a revision)."""
    notes = cx.container.notes
    removed = notes.removed_version(id)
    if removed is not None:
        note = notes.undo(id)
        version = id if "@" in id else f"{removed.id}@1"
        restored = {"version": version, **_removal(removed), "left": len(notes.trash.versions(note.id))}
    else:
        last = notes.history(id)[-1:]
        note = notes.undo(id)
        restored = {"revision": last[0]["seq"], "at": last[0]["at"], "cause": last[0]["cause"]} if last else {}
    return {**note.to_dict(), "restored": restored}


@operation("trash")
def trash(cx: Context, id: str | None = None) -> list[dict]:
    """The removed notes `undo` can bring back (of one id, or all), newest first: each
    with `version` (`ID@N`, what `undo` takes), when it was removed, from where, and its
    first words."""
    from .markdown import parse_note

    notes = cx.container.notes
    versions = notes.trash.versions(id)
    rank: dict[str, int] = {}
    out = []
    for removed in versions:
        rank[removed.id] = rank.get(removed.id, 0) + 1
        try:
            text = parse_note(removed.data.decode("utf-8"), path=removed.path, fallback_id=removed.id).content
        except (AmemError, UnicodeDecodeError):  # a file that was no note amem could read: its bytes as they are
            text = removed.data.decode("utf-8", errors="replace")
        out.append({"version": f"{removed.id}@{rank[removed.id]}", **_removal(removed), "text": " ".join(text.split()[:12])})
    return out


def _removal(removed) -> dict:
    from datetime import datetime, timezone

    return {"id": removed.id, "path": removed.path,
            "removed": datetime.fromtimestamp(removed.removed, timezone.utc).isoformat(timespec="seconds")}


@operation("evolve")
def evolve(cx: Context, id: str, dry_run: bool = False) -> dict:
    return {"note": id, "dry_run": dry_run, **cx.container.notes.pipeline.revisit(id, dry_run=dry_run)}


# -- finding ------------------------------------------------------------------------


@operation("search")
def search(cx: Context, query: str, limit: int = 10, mode: str = "hybrid", tags: list[str] | None = None,
           boxes: list[str] | None = None, since: str | None = None, until: str | None = None) -> list[dict]:
    hits = _search(cx, query, limit=limit, mode=mode, tags=tags, boxes=boxes, since=since, until=until)
    return [h.to_dict() for h in hits]


def _search(cx: Context, query: str, **options: Any) -> list:
    """The hits that mean something (the floor: `SearchService._floor`); a query of only
    common words finds none, and the user is told why."""
    from .retrieve.query import unsearchable

    if why := unsearchable(query):
        cx.warnings.append(why)
    return cx.container.search.search(query, floor=True, **options)


@operation("context")
def context(cx: Context, query: str, max_tokens: int = 2000, limit: int = 10, tags: list[str] | None = None,
            boxes: list[str] | None = None, since: str | None = None, until: str | None = None) -> dict:
    from .services.context import context_of

    hits = _search(cx, query, limit=limit, tags=tags, boxes=boxes, since=since, until=until)
    return context_of(query, (h.note for h in hits), max_tokens)


# -- bringing notes in --------------------------------------------------------------


@operation("ingest")
def ingest(cx: Context, transcripts: list[list[str]], redact: bool = True, wait: bool = False) -> list[dict]:
    """`transcripts`: [name, text] pairs, read by the client. One report each, with its
    name and `queued`: how many of its notes' model work is queued (see `queues`)."""
    if any(len(t) != 2 for t in transcripts):
        raise UsageError("each transcript is a [name, text] pair")
    ingester, queue = cx.container.ingester, queues(cx, wait)
    reports = [ingester.ingest(text, name, redact_secrets=redact, defer=queue) for name, text in transcripts]
    return [{"name": r.name, **r.to_dict(), "queued": len(r.ids) if queue else 0} for r in reports]


@operation("import")
def import_(cx: Context, path: str, wait: bool = False, batch: int = 256, redact: bool = True,
            stdin: str | None = None) -> dict:
    """`path`: absolute, or '-' for `stdin` (the JSONL text the client read). The report
    has `queued`: how many notes' model work is queued (see `queues`)."""
    import io

    if path == "-" and stdin is None:
        raise UsageError("importing '-' needs the text of standard input")
    queue = queues(cx, wait)
    report = cx.container.importer.import_path(
        path, defer=queue, batch=batch, progress=cx.progress, redact=redact,
        stdin=io.StringIO(stdin) if path == "-" else None,
    )
    return {**report.to_dict(), "queued": len(report.ids) if queue else 0}


@operation("process")
def process(cx: Context, limit: int | None = None, seconds: int | None = None) -> dict:
    """Work the queue: at most `limit` jobs, none started after `seconds`."""
    import time

    from .limits import MAX_SECONDS, check_count

    c = cx.container
    if seconds is not None:
        check_count("--until (in seconds from now)", seconds, 0, MAX_SECONDS, hint="at most a week: --until 18:30, --until 20m")
    until = None if seconds is None else time.monotonic() + seconds
    done = c.notes.pipeline.process(limit, progress=cx.progress, until=until)
    return {"processed": done, "queued": len(c.index.queued())}


@operation("queue")
def queue(cx: Context, limit: int | None = None) -> dict:
    """The queue's jobs in the order they are worked (`state`: queued, running or failed),
    and its `summary` (`JobQueue.summary`)."""
    q = cx.container.notes.pipeline.queue
    running = {n for n, _, _ in cx.container.index.claims()} - {n for n, _ in q.expired()}
    jobs = []
    for j in cx.container.index.jobs(limit):
        state = "running" if j["note_id"] in running else "failed" if j["failures"] else "queued"
        jobs.append({"id": j["note_id"], "state": state, "queued": j["queued"], "failures": j["failures"],
                     "error": j["error"], "content": j["content"]})
    return {"jobs": jobs, "summary": q.summary()}


@operation("queue_cancel")
def queue_cancel(cx: Context, ids: list[str] | None = None) -> dict:
    """Drop the jobs of `ids` (None: all): see `Pipeline.cancel`."""
    return cx.container.notes.pipeline.cancel(ids, progress=cx.progress)


# -- the vault ----------------------------------------------------------------------


@operation("boxes")
def boxes(cx: Context) -> list[dict]:
    c = cx.container
    c.indexer.sync()
    return [{"box": box, "notes": n} for box, n in c.index.boxes()]


@operation("stats")
def stats(cx: Context) -> dict:
    from .services.stats import graph_stats

    c = cx.container
    c.indexer.sync()
    return graph_stats(c.index).to_dict()


@operation("graph")
def graph(cx: Context, format: str = "mermaid", around: str | None = None, depth: int = 2,
          tags: list[str] | None = None, boxes: list[str] | None = None) -> dict:
    """The graph as text in `format` (mermaid, dot, graphml, json, or html: a page)."""
    from .services import graph as views

    c = cx.container
    c.indexer.sync()
    g = views.build_graph(c.index, around=around, depth=depth, tags=tags, boxes=boxes)
    if format == "html":
        title = f"{c.vault.root.name}: around {around}" if around else c.vault.root.name
        text = views.to_html(g, f"amem graph of {title}")
    else:
        text = views.render(g, format)
    return {"text": text, "format": format, "nodes": len(g.nodes), "edges": len(g.edges)}


@operation("reindex")
def reindex(cx: Context) -> dict:
    c = cx.container
    report = c.indexer.reindex(progress=cx.progress)
    return {"notes": c.index.count(), "embedded": c.index.embedded_count(), "errors": report.errors}


@operation("vault_status")  # "status" is the server's own (`amem server status`)
def vault_status(cx: Context) -> dict:
    """`status`: what `amem status --json` prints; the rest is for the human view."""
    c = cx.container
    st = c.indexer.status(vector_store=c.settings.chroma_url or "local")
    return {"status": {**st.to_dict(), "queue": c.notes.pipeline.queue.summary()}, "read_only": c.vault.read_only,
            "index_dir": str(c.vault.index_dir)}


@operation("doctor")
def doctor(cx: Context, fix: bool = False) -> dict:
    """`report`: what `amem doctor --json` prints; `for_a_person`: only a person can mend it."""
    report = cx.container.doctor.run(fix=fix)
    return {"report": report.to_dict(), "for_a_person": report.for_a_person}


@operation("config")
def config(cx: Context) -> dict:
    import dataclasses

    return {k: (str(v) if v is not None and not isinstance(v, (int, float, str)) else v)
            for k, v in dataclasses.asdict(cx.container.settings).items()}
