"""amem search, amem context: the declarations (what each does: `cli/actions.py`)."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import actions
from ..app import command
from ..completions import complete_modes
from ..options import AsOfOpt, BoxOpt, IncludeExpiredOpt, JsonOpt, LimitOpt, NowOpt, SinceOpt, TagOpt, UntilOpt


@command("search", action=actions.search)
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for, in your own words.", show_default=False)],
    limit: LimitOpt = 10,
    mode: Annotated[str, typer.Option("--mode", autocompletion=complete_modes, help="hybrid, semantic, keyword or graph.")] = "hybrid",
    tag: TagOpt = None,
    box: BoxOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    now: NowOpt = None,
    as_of: AsOfOpt = None,
    include_expired: IncludeExpiredOpt = False,
    explain: Annotated[bool, typer.Option("--explain", help="Show each hit's rank and score in each list.")] = False,
    json_output: JsonOpt = False,
) -> None:
    """Find notes by meaning and by words. A note that superseded another ranks above it;
    the older one is marked."""


@command("context", action=actions.context)
def context(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What the agent is working on, in its own words.", show_default=False)],
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Budget for the whole block (about 4 characters a token).")] = 2000,
    limit: LimitOpt = 10,
    tag: TagOpt = None,
    box: BoxOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    now: NowOpt = None,
    as_of: AsOfOpt = None,
    include_expired: IncludeExpiredOpt = False,
    history: Annotated[bool, typer.Option("--history", help="Also the notes a later one superseded (marked).")] = False,
    json_output: JsonOpt = False,
) -> None:
    """Print a prompt-ready block of the best notes for QUERY, to paste or pipe into an agent.
    A note that replaces another says so; the older one is left out unless --history."""
