"""Option aliases reused across commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .completions import complete_boxes, complete_ids, complete_tags

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON with stable keys (for scripts and agents).")]
LimitOpt = Annotated[int, typer.Option("--limit", "-n", min=1, help="At most this many results.")]
TagOpt = Annotated[list[str] | None, typer.Option("--tag", "-t", autocompletion=complete_tags, help="Only notes with this tag (repeatable).")]
BoxOpt = Annotated[list[str] | None, typer.Option("--box", "-b", autocompletion=complete_boxes, help="Only notes in this box (repeatable).")]
SinceOpt = Annotated[str | None, typer.Option("--since", help="Only notes created at or after this date-time.")]
UntilOpt = Annotated[str | None, typer.Option("--until", help="Only notes created at or before this date-time.")]
AsOfOpt = Annotated[
    str | None,
    typer.Option("--as-of", help="As things stood then: later notes, and what they superseded, left out.", show_default=False),
]
IncludeExpiredOpt = Annotated[bool, typer.Option("--include-expired", help="Show notes past their expiry date too.")]
TtlOpt = Annotated[
    str | None,
    typer.Option("--ttl", help="The note stops being true this long after its date (30d, 12h, 2w): left out of search then.",
                 show_default=False),
]
NowOpt = Annotated[str | None, typer.Option("--now", help="When the query is asked (default: now): 'four weeks ago' in it is read against it.")]
IdArg = Annotated[str, typer.Argument(help="The note's id.", show_default=False, autocompletion=complete_ids)]
NoRedactOpt = Annotated[
    bool, typer.Option("--no-redact", help="Keep API keys, tokens, private keys and passwords as they are (default: redacted).")
]

# The write path never waits on the model unless asked: `--wait` does its work before the
# command returns; `--no-wait` (the default; `--defer`, its old name) queues it.
WaitOpt = Annotated[
    bool, typer.Option("--wait", help="Do the model's work (build, link, evolve) before returning.")
]
NoWaitOpt = Annotated[
    bool,
    typer.Option("--no-wait", "--defer",
                 help="Return once stored and searchable; queue the model's work (the default; --defer: its old name)."),
]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before a large input.")]


def local_path(value: str) -> Path:
    """A path given on the command line (the `parser` of path parameters): Typer's own
    `Path` check (typer < 0.29) fails with a traceback on a NUL byte."""
    if "\0" in value:
        raise typer.BadParameter("a file name cannot hold a NUL byte")
    return Path(value)
