"""Commands on single notes: add, show, list, edit, rm, and the trash of removed ones."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from typing import Annotated

import typer

from ...errors import UsageError
from .. import actions
from ..app import call, command
from ..completions import complete_boxes, complete_ids, complete_tags
from ..options import BoxOpt, IdArg, JsonOpt, LimitOpt, NoRedactOpt, NoWaitOpt, SinceOpt, TagOpt, TtlOpt, UntilOpt, WaitOpt
from ..output import console, escape, print_json, printable


@command("add", action=actions.add)
def add(
    ctx: typer.Context,
    text: Annotated[str | None, typer.Argument(help="The note's text; '-' or nothing reads standard input.", show_default=False)] = None,
    keyword: Annotated[list[str] | None, typer.Option("--keyword", "-k", help="A keyword (repeatable).")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t", autocompletion=complete_tags, help="A tag (repeatable).")] = None,
    context: Annotated[str | None, typer.Option("--context", help="One sentence: the note's topic and purpose.")] = None,
    box: Annotated[
        list[str] | None, typer.Option("--box", "-b", autocompletion=complete_boxes, help="A box to file the note in (repeatable).")
    ] = None,
    meta: Annotated[list[str] | None, typer.Option("--meta", "-m", help="Free-form metadata key=value (repeatable).")] = None,
    created: Annotated[str | None, typer.Option("--created", help="When it happened (default: now).")] = None,
    after: Annotated[
        str | None,
        typer.Option("--after", autocompletion=complete_ids,
                     help="Continue the sequence of this note (it becomes the new note's previous)."),
    ] = None,
    wait: WaitOpt = False,
    no_wait: NoWaitOpt = False,
    no_redact: NoRedactOpt = False,
    ttl: TtlOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Add a note. Prints its id. Secrets in it (API keys, tokens, passwords) are redacted.
    It is stored, indexed and embedded at once; the model's work on it is queued. The
    same text as a note's already is not stored again: that note records the date."""


@command("show", action=actions.show)
def show(ctx: typer.Context, note_id: IdArg, json_output: JsonOpt = False) -> None:
    """Show one note."""


@command("list", action=actions.list_)
def list_(
    ctx: typer.Context,
    tag: TagOpt = None,
    box: BoxOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: LimitOpt = 50,
    json_output: JsonOpt = False,
) -> None:
    """List notes, newest first."""


@command("edit")
def edit(ctx: typer.Context, note_id: IdArg, json_output: JsonOpt = False) -> None:
    """Open a note in $EDITOR, then index the result."""
    from ...wire.editing import Edit, Edited

    path = call(ctx, Edit(note_id))
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        rc = subprocess.call([*shlex.split(editor), path])
    except OSError as exc:
        raise UsageError(f"cannot start the editor {editor!r}: {exc.strerror}", hint="set $EDITOR") from None
    if rc != 0:
        raise UsageError(f"the editor exited with status {rc}; the note was left as it is on disk")
    note = call(ctx, Edited(note_id))
    if json_output:
        print_json(note)
    else:
        typer.echo(printable(note.id))


@command("rm")
def rm(
    ctx: typer.Context,
    note_ids: Annotated[list[str], typer.Argument(help="The ids of the notes to remove.", show_default=False, autocompletion=complete_ids)],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask (in a terminal, rm asks first).")] = False,
    purge: Annotated[
        bool, typer.Option("--purge", help="Keep nothing of them: no `amem undo` (a secret, say). Default: kept in .amem/trash.")
    ] = False,
    json_output: JsonOpt = False,
) -> None:
    """Remove notes, and the links other notes have to them. `amem undo ID` brings one
    back (for trash_days days, 30) unless --purge."""
    from ...wire.editing import Remove

    # Like rm(1): ask a person at a terminal, never a script (no terminal: go on; the
    # notes are recoverable anyway, unless --purge, which a script asks for on purpose).
    if not yes and sys.stdin.isatty():
        names = ", ".join(printable(i) for i in note_ids)
        after = "for good" if purge else "(`amem undo ID` brings one back)"
        typer.confirm(f"Remove {len(note_ids)} note{'s' if len(note_ids) != 1 else ''} ({names}) {after}?", abort=True, err=True)
    result = call(ctx, Remove(note_ids, purge=purge))
    if json_output:
        print_json({"removed": result.removed})
    else:
        for i in map(printable, result.removed):
            typer.echo(f"removed {i}" + (f" (amem undo {i} brings it back)" if result.recoverable else ""))


@command("trash")
def trash(
    ctx: typer.Context,
    note_id: Annotated[str | None, typer.Argument(help="Only the removed versions of this id.", show_default=False,
                                                  autocompletion=complete_ids)] = None,
    json_output: JsonOpt = False,
) -> None:
    """The removed notes `amem undo` can bring back, newest first: ID@N is the Nth newest
    removed version of ID (`amem undo ID@N`). Each is kept for trash_days days (30)."""
    from ...wire.editing import Trash

    entries = call(ctx, Trash(note_id))
    if json_output:
        print_json(entries)
    elif not entries:
        console.print("[dim]The trash is empty.[/]")
    else:
        for e in entries:
            console.print(f"[bold]{escape(e.version)}[/] [dim]removed {escape(e.removed)} from {escape(e.path)}[/] {escape(e.text)}")
