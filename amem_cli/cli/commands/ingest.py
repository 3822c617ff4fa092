"""`amem ingest`: transcripts into notes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ...errors import NotFoundError, UsageError
from ...utf8 import as_text, mend, raw_stdin, replaced
from ..app import call, command, session
from ..confirm import confirm_large
from ..options import JsonOpt, NoRedactOpt, NoWaitOpt, TtlOpt, WaitOpt, YesOpt, local_path
from ..output import print_json, printable, tell_queued, wait_choice, warn


def _read(file: Path) -> tuple[str, str]:
    """(the transcript's name, its text); '-' is standard input. A byte that is not UTF-8
    is replaced (with one warning), not a reason to drop the transcript; a file holding
    NUL bytes is not text (binary, or UTF-16) and is refused."""
    if str(file) == "-":
        if sys.stdin.isatty():
            raise UsageError("no transcript to ingest", hint="give a file, or pipe it: cat session.jsonl | amem ingest")
        name = shown = "stdin"
        raw = raw_stdin()
    else:
        shown = mend(str(file))[0]  # a file's name may be any bytes; what amem prints and stores may not
        path = file.expanduser()
        if not path.is_file():
            raise NotFoundError(f"no file at {shown}", hint="give a transcript file, or '-' for standard input")
        try:
            raw = as_text(path.read_bytes())
        except OSError as exc:
            raise UsageError(f"cannot read {shown}: {exc.strerror}") from None
        name = mend(path.name)[0]
    if "\0" in raw:
        raise UsageError(f"{shown} is not text: it holds NUL bytes",
                         hint="ingest reads UTF-8 text, Markdown, JSON and JSONL transcripts")
    text, bad = mend(raw)
    if bad:
        warn(replaced(bad, shown))
    return name, text


@command("ingest")
def ingest(
    ctx: typer.Context,
    files: Annotated[
        list[Path] | None, typer.Argument(parser=local_path, metavar="FILES", help="Transcript files; '-' or nothing reads standard input.", show_default=False)
    ] = None,
    no_redact: NoRedactOpt = False,
    wait: WaitOpt = False,
    no_wait: NoWaitOpt = False,
    yes: YesOpt = False,
    ttl: TtlOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Split chat transcripts (text, Markdown, JSON, JSONL) into notes, one sequence each.
    Secrets are redacted; a transcript ingested again adds nothing. Returns once the notes
    are stored and searchable; the model's work on them is queued (unless --wait)."""
    from ...wire.intake import Ingest

    from ...transcripts import read, split

    transcripts = [list(_read(f)) for f in files or [Path("-")]]  # every file read before any is ingested
    wait = wait_choice(wait, no_wait)
    notes = sum(len(split(read(text).messages, name)) for name, text in transcripts)
    size = sum(len(text.encode("utf-8", "surrogatepass")) for _, text in transcripts)
    confirm_large(session(ctx), f"ingest {_named(transcripts)}", notes, size, wait=wait, yes=yes)
    reports = call(ctx, Ingest(transcripts, redact=not no_redact, wait=wait, ttl=ttl))
    if json_output:
        print_json({"ingested": sum(len(r.ids) for r in reports), "skipped": sum(r.skipped for r in reports),
                    "redactions": sum(r.redactions for r in reports), "ids": [i for r in reports for i in r.ids],
                    "similar": [s for r in reports for s in r.similar], "queued": sum(r.queued for r in reports)})
        return
    for r in reports:
        typer.echo(f"ingested {len(r.ids)} notes from {printable(r.name)} ({r.redactions} redactions, "
                   f"{r.skipped} already present)")
        for s in r.similar:
            typer.echo(f"similar: {printable(s['id'])} ~ {printable(s['similar_to'])} ({s['score']:.2f})")
    tell_queued(sum(r.queued for r in reports), session(ctx).served)


def _named(transcripts: list[list[str]]) -> str:
    return printable(transcripts[0][0]) if len(transcripts) == 1 else f"{len(transcripts)} transcripts"
