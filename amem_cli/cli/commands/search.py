"""amem search."""

from __future__ import annotations

from typing import Annotated

import typer

from ..app import call, command
from ..options import BoxOpt, JsonOpt, LimitOpt, SinceOpt, TagOpt, UntilOpt
from ..output import console, day_of, escape, print_json, printable, snippet


@command("search")
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for, in your own words.", show_default=False)],
    limit: LimitOpt = 10,
    mode: Annotated[str, typer.Option("--mode", help="hybrid, semantic, keyword or graph.")] = "hybrid",
    tag: TagOpt = None,
    box: BoxOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    explain: Annotated[bool, typer.Option("--explain", help="Show each hit's rank and score in each list.")] = False,
    json_output: JsonOpt = False,
) -> None:
    """Find notes by meaning and by words."""
    hits = call(ctx, "search", {"query": query, "limit": limit, "mode": mode, "tags": tag, "boxes": box, "since": since,
                                "until": until})
    if json_output:
        print_json(hits)
        return
    if not hits:
        console.print("[dim]No matching notes.[/]")
        return
    for rank, hit in enumerate(hits, 1):
        console.print(f"{rank:>2}. [bold]{escape(hit['id'])}[/] [dim]{day_of(hit['created_at'])} score {hit['score']:.4f}[/]")
        console.print(f"    {escape(snippet(hit['content'], 110))}")
        if hit["context"]:
            console.print(f"    [dim]{escape(snippet(hit['context'], 110))}[/]")
        if explain:
            parts = [_explain(name, v) for name, v in hit["sources"].items()]
            console.print(f"    [magenta]{escape('; '.join(parts))}[/]")


def _explain(name: str, source: dict) -> str:
    if "rank" in source:
        return f"{name} #{source['rank']} ({source['score']:.4f})"
    if name == "neighbour":
        return f"neighbour of {source['of']} (+{source['gain']:.4f})"
    return f"{name} boost x{1 + source['boost']:.2f}"


@command("context")
def context(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What the agent is working on, in its own words.", show_default=False)],
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Budget for the whole block (about 4 characters a token).")] = 2000,
    limit: LimitOpt = 10,
    tag: TagOpt = None,
    box: BoxOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Print a prompt-ready block of the best notes for QUERY, to paste or pipe into an agent."""
    block = call(ctx, "context", {"query": query, "max_tokens": max_tokens, "limit": limit, "tags": tag, "boxes": box,
                                  "since": since, "until": until})
    if json_output:
        print_json(block)
    else:
        typer.echo(printable(block["context"], lines=True))
