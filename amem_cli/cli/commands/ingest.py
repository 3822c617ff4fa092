"""`amem ingest`: transcripts into notes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ...errors import NotFoundError, UsageError
from ..app import command, container
from ..options import JsonOpt, NoRedactOpt
from ..output import print_json, printable


def _read(file: str) -> tuple[str, str]:
    """(the transcript's name, its text); '-' is standard input."""
    if file == "-":
        if sys.stdin.isatty():
            raise UsageError("no transcript to ingest", hint="give a file, or pipe it: cat session.jsonl | amem ingest")
        return "stdin", sys.stdin.read()
    path = Path(file).expanduser()
    if not path.is_file():
        raise NotFoundError(f"no file at {file}", hint="give a transcript file, or '-' for standard input")
    try:
        return path.name, path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"{file} is not UTF-8 text", hint="ingest reads text, Markdown, JSON and JSONL transcripts") from None
    except OSError as exc:
        raise UsageError(f"cannot read {file}: {exc.strerror}") from None


@command("ingest")
def ingest(
    ctx: typer.Context,
    files: Annotated[
        list[str] | None, typer.Argument(help="Transcript files; '-' or nothing reads standard input.", show_default=False)
    ] = None,
    no_redact: NoRedactOpt = False,
    defer: Annotated[
        bool, typer.Option("--defer", help="Store the notes now; queue the model's work for `amem process`.")
    ] = False,
    json_output: JsonOpt = False,
) -> None:
    """Split chat transcripts (text, Markdown, JSON, JSONL) into notes, one sequence each.
    Secrets are redacted; a transcript ingested again adds nothing."""
    transcripts = [_read(f) for f in files or ["-"]]  # every file read before any is ingested
    ingester = container(ctx).ingester
    reports = [ingester.ingest(text, name, redact_secrets=not no_redact, defer=defer) for name, text in transcripts]
    if json_output:
        total = {"ingested": 0, "skipped": 0, "redactions": 0, "ids": [], "similar": []}
        for report in reports:
            for key, value in report.to_dict().items():
                total[key] += value
        print_json(total)
        return
    for r in reports:
        typer.echo(f"ingested {len(r.ids)} notes from {printable(r.name)} ({r.redactions} redactions, {r.skipped} already present)")
        for s in r.similar:
            typer.echo(f"similar: {printable(s['id'])} ~ {printable(s['similar_to'])} ({s['score']:.2f})")
