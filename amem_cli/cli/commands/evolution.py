"""What the A-MEM pipeline made and changed: boxes, a note's evolution history, undo."""

import difflib
from typing import Annotated

import typer

from ...errors import UsageError
from ..app import call, command
from ..completions import complete_ids
from ..options import IdArg, JsonOpt
from ..output import console, escape, print_json, printable, progress_bar


@command("boxes")
def boxes(
    ctx: typer.Context,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="File the notes amem filed into the vault's topics again; the boxes you gave or moved notes into stay.")] = False,
    json_output: JsonOpt = False,
) -> None:
    """List the boxes notes are filed in (topics of the vault's notes), with how many notes each holds."""
    from ...wire.vault import Boxes, RebuildBoxes

    if rebuild:
        done = call(ctx, RebuildBoxes())
        if json_output:
            print_json(done)
            return
        console.print(f"{done.filed} notes filed into {sum(b.box != 'inbox' for b in done.boxes)} boxes, {done.moved} "
                      f"moved (`amem history ID`, `amem undo ID`); {done.kept} left as they are")
    rows = call(ctx, Boxes())
    if json_output:
        print_json(rows)
    elif not rows:
        console.print("[dim]No boxes yet.[/]")
    else:
        for row in rows:
            console.print(f"{row.notes:>5}  {escape(row.box)}")


@command("history")
def history(ctx: typer.Context, note_id: IdArg, json_output: JsonOpt = False) -> None:
    """Show how amem changed a note (evolution; fields derived again after you edited its text), oldest first, as diffs."""
    from ...wire.editing import History

    revisions = call(ctx, History(note_id))
    if json_output:
        print_json(revisions)
        return
    if not revisions:
        console.print(f"[dim]{escape(note_id)} has not been changed by amem.[/]")
        return
    for r in revisions:
        cause = f" after {r.cause}" if r.cause else ""
        by = f" [dim]({escape(r.model)})[/]" if r.model else ""  # none: the deterministic method
        console.print(f"[bold]revision {r.seq}[/] {escape(str(r.at))}{escape(cause)}{by}")
        if r.change:
            console.print(f"  {escape(r.change)}")
        before = [f"context: {r.old_context}", f"tags: {', '.join(r.old_tags)}"]
        after = [f"context: {r.new_context}", f"tags: {', '.join(r.new_tags)}"]
        for line in difflib.unified_diff(before, after, "before", "after", lineterm="", n=0):
            style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
            console.print(f"[{style}]{escape(line)}[/]")


@command("undo")
def undo(
    ctx: typer.Context,
    note_id: Annotated[str, typer.Argument(help="The note's id; ID@N: the Nth newest removed version of it (`amem trash`).",
                                           show_default=False, autocompletion=complete_ids)],
    json_output: JsonOpt = False,
) -> None:
    """Restore a note's file as it was before amem's last change to it, byte for byte; or
    bring back a removed note (its newest version in the trash, or ID@N)."""
    from ...wire.editing import Undo

    note = call(ctx, Undo(note_id))
    if json_output:
        print_json(note)
        return
    restored, name = note.restored, printable(note.id)
    if restored.version is not None:
        more = f"; {restored.left} more in the trash (amem trash {name})" if restored.left else ""
        said = f"{printable(restored.version)} (removed {restored.removed} from {printable(restored.path)}){more}"
    elif restored.revision is not None:
        said = f"{name} as it was before revision {restored.revision} ({restored.cause or 'evolution'}, {restored.at})"
    else:
        said = name
    typer.echo(f"restored {said}")


@command("stats")
def stats(ctx: typer.Context, json_output: JsonOpt = False) -> None:
    """How the link graph has grown: links per note, components, diameter, clustering."""
    from ...wire.vault import Stats

    st = call(ctx, Stats())
    if json_output:
        print_json(st)
        return
    console.print(f"notes {st.notes}, boxes {st.boxes}")
    console.print(f"links {st.links} ({st.links_per_note} per note), sequence links {st.sequence_links}")
    approx = "" if st.diameter_exact else " (estimated)"
    console.print(f"components {st.components}, largest {st.largest_component} notes, diameter {st.diameter}{approx}")
    console.print(f"average clustering coefficient {st.clustering}")


@command("evolve")
def evolve(
    ctx: typer.Context,
    note_id: IdArg,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the proposed links and changes; write nothing.")] = False,
    json_output: JsonOpt = False,
) -> None:
    """Link a note again and let the notes it links evolve (context and tags)."""
    from ...wire.editing import Evolve

    result = call(ctx, Evolve(note_id, dry_run=dry_run))
    if json_output:
        print_json(result)
        return
    verb = "would" if dry_run else "did"
    if not result.links and not result.evolutions:
        console.print(f"[dim]Nothing to change for {escape(note_id)}.[/]")
    for target in result.links:
        console.print(f"{verb} link {escape(note_id)} -> {escape(target)}")
    for target, changes in result.evolutions.items():
        for key, value in changes.items():
            shown = ", ".join(value) if isinstance(value, list) else value
            console.print(f"{verb} change {escape(target)} {escape(key)}: {escape(str(shown))}")


@command("process")
def process(
    ctx: typer.Context,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, help="At most this many notes.")] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", help="Start no note after this: a time of day (18:30) or a while (90s, 20m, 2h).",
                     show_default=False),
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Do the queued model work (build, link, evolve) now, with a progress bar."""

    from ...wire.queue import Process

    request = Process(limit=limit, seconds=None if until is None else seconds_until(until))
    with progress_bar(show=not json_output, remaining=True) as bar:
        task = bar.add_task("Processing", total=None)
        result = call(ctx, request, progress=lambda n, total: bar.update(task, completed=n, total=total))
    if json_output:
        print_json(result)
    else:
        console.print(f"Processed {len(result.processed)} notes; {result.queued} still queued.")


def seconds_until(text: str) -> int:
    """`--until`: a while (90s, 20m, 2h) or a time of day (HH:MM, the next one to come), as seconds from now."""
    import re
    from datetime import datetime, timedelta

    text = text.strip().lower()
    if m := re.fullmatch(r"(\d+)\s*(s|m|h)", text):
        return int(m[1]) * {"s": 1, "m": 60, "h": 3600}[m[2]]
    if m := re.fullmatch(r"(\d{1,2}):(\d{2})", text):
        hour, minute = int(m[1]), int(m[2])
        if hour < 24 and minute < 60:
            now = datetime.now()
            at = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
            if at <= now:
                at += timedelta(days=1)
            return int((at - now).total_seconds())
    raise UsageError(f"--until wants a time of day or a while, not {text!r}", hint="for example --until 18:30 or --until 20m")
