"""Bringing notes in from elsewhere: import."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..app import call, command
from ..options import JsonOpt, NoRedactOpt, local_path
from ..output import console, err_console, escape, print_json, warn


@command("import")
def import_(
    ctx: typer.Context,
    path: Annotated[
        Path,
        typer.Argument(parser=local_path, metavar="PATH", help="A JSONL file (one note a line; '-' reads standard input) or a folder of Markdown files.",
                       show_default=False),
    ],
    defer: Annotated[
        bool, typer.Option("--defer", help="Store the notes now; queue the model's work for `amem process`.")
    ] = False,
    batch: Annotated[int, typer.Option("--batch", min=1, help="Notes written, embedded and linked together.")] = 256,
    no_redact: NoRedactOpt = False,
    json_output: JsonOpt = False,
) -> None:
    """Import notes from a JSONL file or a folder of Markdown files.

    A JSONL line holds `content` and optionally `keywords`, `tags`, `context`,
    `created_at` and `metadata`; the lines of a file are chained as a sequence. Bad lines
    are reported and skipped (exit status 1). Lines imported before are skipped, so
    importing a file again adds only what is new. Secrets (API keys, tokens, passwords)
    are redacted."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ...utf8 import raw_stdin

    # Standard input read here, each byte that is not UTF-8 kept as a surrogate escape: the
    # line holding one is reported as not UTF-8, as a file's would be.
    stdin = raw_stdin() if str(path) == "-" else None
    where = "-" if stdin is not None else str(path.expanduser().absolute())
    stderr = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr, disable=not stderr.is_terminal, transient=True) as bar:
        task = bar.add_task("Importing", total=None)
        report = call(ctx, "import", {"path": where, "defer": defer, "batch": batch, "redact": not no_redact, "stdin": stdin},
                      progress=lambda done, total: bar.update(task, completed=done, total=total))
    for problem in report["problems"]:
        err_console.print(escape(problem))
    for warning in report["warnings"]:
        warn(warning)
    if json_output:
        print_json(report)
    else:
        n = len(report["ids"])
        summary = [f"imported {n} note{'' if n == 1 else 's'}"]
        if report["skipped"]:
            summary.append(f"skipped {report['skipped']} (see above)")
        if report["duplicates"]:
            summary.append(f"skipped {report['duplicates']} already imported")
        if report["redactions"]:
            summary.append(f"redacted {report['redactions']} secret{'' if report['redactions'] == 1 else 's'}")
        queued = " (their model work is queued: run `amem process`)" if defer and report["ids"] else ""
        console.print(", ".join(summary) + queued)
    if report["skipped"]:
        raise typer.Exit(1)
