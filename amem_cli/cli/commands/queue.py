"""`amem queue`: the model work the write path queued; `amem queue cancel` drops it."""

from __future__ import annotations

from typing import Annotated

import typer

from ...errors import UsageError
from ..app import app, call, command, guarded
from ..options import JsonOpt
from ..output import console, escape, print_json, progress_bar, queue_line, snippet

queue_app = typer.Typer(help="The queued model work: list it, or cancel it.", rich_markup_mode=None)
app.add_typer(queue_app, name="queue")


@queue_app.callback(invoke_without_command=True)
def queue(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="At most this many jobs.")] = 50,
    json_output: JsonOpt = False,
) -> None:
    """List the queued model work (building, linking, evolving added notes), in the order
    it is done, with the time left at the measured rate."""
    if ctx.invoked_subcommand is not None:
        return
    guarded(ctx, _list, {"limit": limit, "json_output": json_output})


def _list(s, limit: int, json_output: bool) -> None:
    from ...wire.queue import Queue

    result = s.call(Queue(limit=limit))
    if json_output:
        print_json(result)
        return
    for job in result.jobs:
        state = job.state
        if state == "failed":
            state = f"[red]failed {job.failures}x[/]"
        console.print(f"[bold]{escape(job.id)}[/] [dim]{job.queued[:19]}[/] {state} "
                      f"{escape(snippet(job.content or '', 60))}")
        if job.error:
            console.print(f"    [dim]{escape(snippet(job.error, 100))}[/]")
    console.print(queue_line(result.summary))


@command("cancel", group=queue_app)
def cancel(
    ctx: typer.Context,
    ids: Annotated[list[str] | None, typer.Argument(metavar="[ID]...", help="The notes whose queued work to drop.",
                                                    show_default=False)] = None,
    all_: Annotated[bool, typer.Option("--all", help="Drop all the queued work.")] = False,
    json_output: JsonOpt = False,
) -> None:
    """Drop queued model work. The notes stay, with what amem derives without the model
    (keywords, tags, context, boxes, links by similarity); `amem evolve ID` asks the model later."""

    from ...wire.queue import CancelQueued

    if bool(ids) == all_:
        raise UsageError("give the ids of notes whose work to drop, or --all", hint="`amem queue` lists the queued work")
    with progress_bar(show=not json_output) as bar:
        task = bar.add_task("Cancelling", total=None)
        result = call(ctx, CancelQueued(None if all_ else ids),
                      progress=lambda n, total: bar.update(task, completed=n, total=total))
    missing = UsageError(f"no queued work for {' '.join(result.not_queued)}", hint="`amem queue` lists the queued work")
    if json_output:  # the report, with the error of an id that had nothing queued: one object, the same exit code
        print_json({**result.to_json(), **({"error": missing.message, "hint": missing.hint} if result.not_queued else {})})
        if result.not_queued:
            raise typer.Exit(missing.exit_code)
        return
    n = len(result.cancelled)
    console.print(f"cancelled the model's work on {n} note{'' if n == 1 else 's'}")
    if result.running:
        console.print(f"left {len(result.running)} in hand to finish: {escape(' '.join(result.running))}")
    if result.not_queued:
        raise missing
