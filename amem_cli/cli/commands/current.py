"""Keeping facts current: supersede, consolidate, forget --expired."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ...errors import UsageError
from ..app import call, command
from ..completions import complete_ids
from ..options import JsonOpt
from ..output import console, day_of, escape, print_json, snippet

if TYPE_CHECKING:
    from ...wire.current import Suggestion

# The requests are imported where they run: `amem --help` loads no wire module.
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Say what would change; change nothing.")]


@command("supersede")
def supersede(
    ctx: typer.Context,
    old: Annotated[str | None, typer.Argument(help="The older note.", show_default=False, autocompletion=complete_ids)] = None,
    new: Annotated[str | None, typer.Argument(help="The newer note, which changes a fact of the older.", show_default=False,
                                              autocompletion=complete_ids)] = None,
    undo: Annotated[bool, typer.Option("--undo", help="NEW does not supersede OLD after all (or dismiss a suggestion).")] = False,
    suggest: Annotated[bool, typer.Option("--suggest", help="List the pairs amem was unsure of, with why.")] = False,
    json_output: JsonOpt = False,
) -> None:
    """Say that NEW supersedes OLD: search and context put NEW first and mark OLD. amem finds
    most such pairs itself when a note is added; --suggest lists those it was unsure of."""
    from ...wire.current import Supersede, SupersedeSuggestions
    if suggest:
        if old or new or undo:
            raise UsageError("--suggest takes no notes", hint="amem supersede --suggest, or amem supersede OLD NEW")
        _suggestions(call(ctx, SupersedeSuggestions()), json_output)
        return
    if not (old and new):
        raise UsageError("give the older note, then the newer", hint="amem supersede OLD NEW (or --suggest)")
    result = call(ctx, Supersede(old, new, undo=undo))
    if json_output:
        print_json(result)
    elif undo:
        console.print(f"{escape(result.new)} no longer supersedes {escape(result.old)}")
    else:
        console.print(f"{escape(result.new)} supersedes {escape(result.old)} (amem supersede --undo "
                      f"{escape(result.old)} {escape(result.new)} takes it back)")


def _suggestions(pairs: list[Suggestion], json_output: bool) -> None:
    if json_output:
        print_json(pairs)
        return
    if not pairs:
        console.print("[dim]No pairs to confirm.[/]")
        return
    for p in pairs:
        console.print(f"[bold]{escape(p.new)}[/] may supersede [bold]{escape(p.old)}[/]: {escape(p.reason)}")
        console.print(f"  old {day_of(p.old_date)}: {escape(snippet(p.old_content, 100))}")
        console.print(f"  new {day_of(p.new_date)}: {escape(snippet(p.new_content, 100))}")
        console.print(f"  [dim]confirm: amem supersede {escape(p.old)} {escape(p.new)}   "
                      f"dismiss: amem supersede --undo {escape(p.old)} {escape(p.new)}[/]")


@command("consolidate")
def consolidate(ctx: typer.Context, dry_run: DryRunOpt = False, json_output: JsonOpt = False) -> None:
    """Merge near-duplicates (the same fact said again): one note keeps every date it was
    said; the others go to the trash (`amem undo ID` brings one back). Pinned notes stay."""
    from ...wire.current import Consolidate
    result = call(ctx, Consolidate(dry_run=dry_run))
    if json_output:
        print_json(result)
        return
    if not result.groups:
        console.print("[dim]No near-duplicates.[/]")
    verb = "would keep" if dry_run else "kept"
    for g in result.groups:
        console.print(f"{verb} {escape(g.kept)}, said {len(g.dates) + 1} times; "
                      f"{'would move' if dry_run else 'moved'} {escape(', '.join(g.merged))} to the trash")


@command("forget")
def forget(
    ctx: typer.Context,
    expired: Annotated[bool, typer.Option("--expired", help="The notes past their expiry date (`expires:`, `--ttl`).")] = False,
    dry_run: DryRunOpt = False,
    json_output: JsonOpt = False,
) -> None:
    """Move notes that stopped being true to the trash (`amem undo ID` brings one back)."""
    from ...wire.current import ForgetExpired
    if not expired:
        raise UsageError("say which notes to forget", hint="amem forget --expired")
    result = call(ctx, ForgetExpired(dry_run=dry_run))
    if json_output:
        print_json(result)
        return
    if not result.removed:
        console.print("[dim]No expired notes.[/]")
    for note_id in result.removed:
        console.print(f"{'would remove' if dry_run else 'removed'} {escape(note_id)}"
                      + (" (amem undo brings it back)" if result.recoverable and not dry_run else ""))
