"""Bringing notes in from elsewhere: import."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..app import call, command, session
from ..confirm import confirm_large
from ..options import JsonOpt, NoRedactOpt, NoWaitOpt, TtlOpt, WaitOpt, YesOpt, local_path
from ..output import console, err_console, escape, print_json, printable, progress_bar, tell_queued, wait_choice, warn


@command("import")
def import_(
    ctx: typer.Context,
    path: Annotated[
        Path,
        typer.Argument(parser=local_path, metavar="PATH", help="A JSONL file (one note a line; '-' reads standard input) or a folder of Markdown files.",
                       show_default=False),
    ],
    wait: WaitOpt = False,
    no_wait: NoWaitOpt = False,
    yes: YesOpt = False,
    batch: Annotated[int, typer.Option("--batch", min=1, help="Notes written, embedded and linked together.")] = 256,
    no_redact: NoRedactOpt = False,
    ttl: TtlOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Import notes from a JSONL file or a folder of Markdown files.

    A JSONL line holds `content` and optionally `keywords`, `tags`, `context`,
    `created_at` and `metadata`; the lines of a file are chained as a sequence. Bad lines
    are reported and skipped (exit status 1). Lines imported before are skipped, so
    importing a file again adds only what is new. Secrets (API keys, tokens, passwords)
    are redacted. Returns once the notes are stored and searchable; the model's work on
    them is queued (unless --wait)."""

    from ...utf8 import raw_stdin
    from ...wire.intake import Import

    # Standard input read here, each byte that is not UTF-8 kept as a surrogate escape: the
    # line holding one is reported as not UTF-8, as a file's would be.
    stdin = raw_stdin() if str(path) == "-" else None
    where = "-" if stdin is not None else str(path.expanduser().absolute())
    wait = wait_choice(wait, no_wait)
    notes, size = _measure(stdin, Path(where))
    confirm_large(session(ctx), f"import {printable(str(path))}", notes, size, wait=wait, yes=yes)
    with progress_bar() as bar:
        task = bar.add_task("Importing", total=None)
        report = call(ctx, Import(where, wait=wait, batch=batch, redact=not no_redact, stdin=stdin, ttl=ttl),
                      progress=lambda done, total: bar.update(task, completed=done, total=total))
    for problem in report.problems:
        err_console.print(escape(problem))
    for warning in report.warnings:
        warn(warning)
    if json_output:
        print_json(report)
    else:
        n = len(report.ids)
        summary = [f"imported {n} note{'' if n == 1 else 's'}"]
        if report.skipped:
            summary.append(f"skipped {report.skipped} (see above)")
        if report.duplicates:
            summary.append(f"skipped {report.duplicates} already imported")
        if report.redactions:
            summary.append(f"redacted {report.redactions} secret{'' if report.redactions == 1 else 's'}")
        console.print(", ".join(summary))
        tell_queued(report.queued, session(ctx).served)
    if report.skipped:
        raise typer.Exit(1)


def _measure(stdin: str | None, path: Path) -> tuple[int, int]:
    """(notes, bytes) an import would bring in at most: lines of JSONL, or Markdown files."""
    from ...places import hidden

    if stdin is not None:
        return sum(1 for line in stdin.splitlines() if line.strip()), len(stdin.encode("utf-8", "surrogateescape"))
    if path.is_dir():
        files = [f for f in path.rglob("*.md") if f.is_file() and not any(map(hidden, f.relative_to(path).parts))]
        return len(files), sum(f.stat().st_size for f in files)
    try:
        with open(path, "rb") as fh:
            return sum(1 for line in fh if line.strip()), path.stat().st_size
    except OSError:
        return 0, 0  # the import says what is wrong with it
