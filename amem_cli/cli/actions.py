"""What the everyday commands (search, context, add, show, list) do once their options
are read: build the operation's arguments, call it, print its result.

No Typer here: `quick` runs these straight from the command line, `app` from Typer's
parse of it (the declarations in `commands/`), and the two must give the same call.
"""

from __future__ import annotations

import sys

from ..errors import UsageError
from .output import console, day_of, echo, escape, print_json, printable, snippet, tell_queued, wait_choice
from .session import Session, read_stdin


def search(session: Session, query: str, limit: int, mode: str, tag: list[str] | None, box: list[str] | None,
           since: str | None, until: str | None, now: str | None, as_of: str | None, include_expired: bool, explain: bool,
           json_output: bool) -> None:
    from ..wire.notes import Search

    hits = session.call(Search(query, limit=limit, mode=mode, tags=tag, boxes=box, since=since, until=until, now=now,
                               as_of=as_of, include_expired=include_expired))
    if json_output:
        print_json(hits)
        return
    if not hits:
        console.print("[dim]No matching notes.[/]")
        return
    for rank, hit in enumerate(hits, 1):
        console.print(f"{rank:>2}. [bold]{escape(hit.id)}[/] [dim]{day_of(hit.created_at)} score {hit.score:.4f}[/]")
        console.print(f"    {escape(snippet(hit.content, 110))}")
        if _context_shown(hit.context, hit.content):
            console.print(f"    [dim]{escape(snippet(hit.context, 110))}[/]")
        for r in hit.replaced_by:
            console.print(f"    [yellow]superseded {day_of(r.date)} by {escape(r.id)}[/]")
        for r in hit.replaces:
            console.print(f"    [green]replaces {escape(r.id)} of {day_of(r.date)}[/]")
        if explain:
            parts = [_explain(name, v) for name, v in hit.sources.items()]
            console.print(f"    [magenta]{escape('; '.join(parts))}[/]")


def _context_shown(context: str, content: str) -> bool:
    """Whether a note's context is printed: it has one, and it is not the text again
    (never the text twice). The rule's module is imported only then (~1.5 ms of a warm
    search's client): a reply whose hits have no context needs none of it."""
    if not context:
        return False
    from ..text import repeats

    return repeats(context, content) is None


def _explain(name: str, source: dict) -> str:
    if "rank" in source:
        return f"{name} #{source['rank']} ({source['score']:.4g})"  # (a tiny BM25 score is not 0.0000)
    if name == "neighbour":
        return f"neighbour of {source['of']} (+{source['gain']:.4f})"
    if name == "replaces":
        return f"brought in: it superseded {source['of']}"
    return f"{name} boost x{1 + source['boost']:.2f}"


def context(session: Session, query: str, max_tokens: int, limit: int, tag: list[str] | None, box: list[str] | None,
            since: str | None, until: str | None, now: str | None, as_of: str | None, include_expired: bool, history: bool,
            json_output: bool) -> None:
    from ..wire.notes import Block

    block = session.call(Block(query, max_tokens=max_tokens, limit=limit, tags=tag, boxes=box, since=since, until=until,
                               now=now, as_of=as_of, include_expired=include_expired, history=history))
    if json_output:
        print_json(block)
    else:
        echo(printable(block.context, lines=True))


def add(session: Session, text: str | None, keyword: list[str] | None, tag: list[str] | None, context: str | None,
        box: list[str] | None, meta: list[str] | None, created: str | None, after: str | None, wait: bool,
        no_wait: bool, no_redact: bool, ttl: str | None, json_output: bool) -> None:
    from ..wire.notes import Add

    metadata = _parse_meta(meta)
    note = session.call(Add(
        _read_text(text), keywords=keyword, tags=tag, context=context, boxes=box, metadata=metadata, created_at=created,
        after=after, wait=wait_choice(wait, no_wait), redact=not no_redact, ttl=ttl,
    ))
    if json_output:
        print_json(note)
    else:
        echo(printable(note.id))
        tell_queued(note.queued, session.served)


def _parse_meta(items: list[str] | None) -> dict[str, str]:
    meta = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--meta wants key=value, got {item!r}", hint="for example --meta source=chat")
        meta[key.strip()] = value
    return meta


def _read_text(text: str | None) -> str:
    if text is None or text == "-":
        if text is None and sys.stdin.isatty():
            raise UsageError("no text to add", hint="give it as an argument, or pipe it: echo TEXT | amem add")
        return read_stdin()
    return text


def show(session: Session, note_id: str, json_output: bool) -> None:
    from ..wire.notes import Show

    if json_output:
        print_json(session.call(Show(note_id)))
        return
    note = session.call(Show(note_id, related=True))
    related = note.related or {}
    console.print(f"[bold]{escape(note.id)}[/]")
    for label, when in (("created", note.created_at), ("updated", note.updated_at)):
        if when:
            console.print(f"[dim]{label}:[/] {escape(when)}")
    for label, names in (("keywords", note.keywords), ("tags", note.tags), ("boxes", note.boxes)):
        if names:
            console.print(f"[dim]{label}:[/] {escape(', '.join(names))}")
    if _context_shown(note.context, note.content):
        console.print(f"[dim]context:[/] {escape(note.context)}")
    if note.expires:
        console.print(f"[dim]expires:[/] {escape(note.expires)}")
    for label, link in (("previous", note.previous), ("next", note.next)):
        if link:
            console.print(f"[dim]{label}:[/] {_glimpse(link, related)}")
    for label, links in (("supersedes", note.supersedes), ("superseded_by", note.superseded_by), ("links", note.links),
                         ("backlinks", note.backlinks)):
        if links:
            console.print(f"[dim]{label}:[/]")
            for link in links:
                console.print(f"  {_glimpse(link, related)}")
    if note.metadata:
        from ..markdown import yaml_text

        console.print("[dim]metadata:[/]")
        for line in yaml_text(note.metadata).splitlines():
            console.print(f"  {escape(line)}")
    console.print()
    console.print(escape(note.content, lines=True))


def _glimpse(link: str, related: dict[str, str | None]) -> str:
    """A link and the first words of the note it names ("(no such note)" when none)."""
    words = related.get(link)
    return f"{escape(link)}  " + (f"[dim]{escape(words)}[/]" if words is not None else "[red](no such note)[/]")


def list_(session: Session, tag: list[str] | None, box: list[str] | None, since: str | None, until: str | None,
          limit: int, json_output: bool) -> None:
    from ..wire.notes import ListNotes

    notes = session.call(ListNotes(tags=tag, boxes=box, since=since, until=until, limit=limit))
    if json_output:
        print_json(notes)
        return
    if not notes:
        console.print("[dim]No notes.[/]")
        return
    for n in notes:
        tags = f" [cyan]{escape(' '.join('#' + t for t in n.tags))}[/]" if n.tags else ""
        later = f" [yellow](superseded by {escape(', '.join(n.superseded_by))})[/]" if n.superseded_by else ""
        console.print(f"[bold]{escape(n.id)}[/] [dim]{day_of(n.created_at)}[/] {escape(snippet(n.content, 80))}{tags}{later}")


def server_status(session: Session, json_output: bool) -> None:
    info = ask_server(session, "status")
    if json_output:
        print_json({"running": info is not None, **(info or {})})
    elif info is None:
        console.print(f"no server runs for {escape(str(vault_root(session)))}")
    else:
        console.print(
            f"running: pid {info['pid']}, since {info['started']}, {info['requests']} requests, "
            f"{info['queued']} queued, {info['rss_mb']} MB resident; stops after {info['idle_timeout']:.0f} s idle"
        )


def vault_root(session: Session):
    """The vault's folder, found as the server's client finds it: without building the
    services (that cost `amem server status` ~0.4 s of its 0.7 s)."""
    from ..server.client import vault_dir

    return vault_dir(session.flags)


def ask_server(session: Session, op: str) -> dict | None:
    """The reply of the vault's server to one of its own requests (status, stop), or None when none runs."""
    from ..places import INDEX_DIR

    from ..server.client import call

    try:
        return call(vault_root(session) / INDEX_DIR, {"op": op}, timeout=10)
    except (OSError, ValueError):
        return None
