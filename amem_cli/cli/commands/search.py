"""amem search."""

from __future__ import annotations

from typing import Annotated

import typer

from ..app import command, container
from ..options import BoxOpt, JsonOpt, LimitOpt, SinceOpt, TagOpt, UntilOpt
from ..output import console, escape, print_json, snippet


@command("search")
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for, in your own words.", show_default=False)],
    limit: LimitOpt = 10,
    mode: Annotated[str, typer.Option("--mode", help="hybrid, semantic or keyword.")] = "hybrid",
    tag: TagOpt = None,
    box: BoxOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    explain: Annotated[bool, typer.Option("--explain", help="Show each hit's rank and score in each list.")] = False,
    json_output: JsonOpt = False,
) -> None:
    """Find notes by meaning and by words."""
    from ...timeutil import to_datetime

    hits = container(ctx).search.search(
        query,
        limit=limit,
        mode=mode,
        tags=tag,
        boxes=box,
        since=to_datetime(since) if since else None,
        until=to_datetime(until) if until else None,
    )
    if json_output:
        print_json([h.to_dict() for h in hits])
        return
    if not hits:
        console.print("[dim]No matching notes.[/]")
        return
    for rank, hit in enumerate(hits, 1):
        n = hit.note
        date = n.created_at.strftime("%Y-%m-%d") if n.created_at else ""
        console.print(f"{rank:>2}. [bold]{n.id}[/] [dim]{date} score {hit.score:.4f}[/]")
        console.print(f"    {escape(snippet(n.content, 110))}")
        if n.context:
            console.print(f"    [dim]{escape(snippet(n.context, 110))}[/]")
        if explain:
            parts = [f"{name} #{v['rank']} ({v['score']:.4f})" for name, v in hit.sources.items()]
            console.print(f"    [magenta]{escape('; '.join(parts))}[/]")
