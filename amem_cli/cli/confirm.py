"""Large inputs say what they will do before they do it.

An `ingest` or `import` of more than LARGE_NOTES notes or LARGE_BYTES bytes asks first
when a person is at a terminal (`--yes` does not ask). A script (no terminal) goes on,
and is told on stderr what was queued: the notes are what it came to keep, and nobody
would read a refusal in an agent's end-of-session hook; the model's work it queues is
shown by `amem status` and dropped by `amem queue cancel`.
"""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

from ..errors import AmemError
from .output import duration, err_console

if TYPE_CHECKING:
    from .session import Session

# The bundled model takes ~0.7 s a note on two cores with the default fields, ~3.4 s with
# every field (benchmarks/README.md), so 500 notes are 6 to 28 minutes of its work: past
# that, a person should say yes.
LARGE_NOTES = 500
# For inputs whose notes are not counted before they are split: 2 MiB of text is about
# 1,300 notes at the ~1.5 kB a note of an ingested text file.
LARGE_BYTES = 2 * 2**20


def confirm_large(session: Session, what: str, notes: int, size: int, *, wait: bool, yes: bool) -> None:
    """Ask before `what` (e.g. "ingest 3 files") of `notes` notes and `size` bytes, when it
    is large. Raises AmemError when the answer is no. Without a model (`--llm none`)
    there is no long work to warn of: the notes are stored at ~100 a second."""
    from ..llm import no_model
    from ..wire.queue import Queue

    if yes or (notes <= LARGE_NOTES and size <= LARGE_BYTES) or no_model(session.settings().llm):
        return
    work = "the model's work on each is done before it returns" if wait else "the model's work on each is queued"
    per_note = session.call(Queue(limit=1)).summary.seconds_per_job
    if per_note:
        work += f" (about {duration(notes * per_note)} at the rate measured)"
    plan = f"{what}: up to {notes:,} notes from {size / 2**20:.1f} MiB; {work}"
    tty = _terminal()
    if tty is None:
        err_console.print(f"[dim]{plan}; `amem queue cancel --all` drops queued work[/]")
        return
    with tty:
        err_console.print(f"{plan}.")
        tty.write("Go on? [y/N] ")
        tty.flush()
        answer = tty.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise AmemError("nothing was stored", hint="--yes goes on without asking", exit_code=1)


def _terminal() -> IO | None:
    """The terminal of the person who runs the command (standard input may be the pipe
    the input comes from), or None in a script."""
    if not sys.stderr.isatty():
        return None
    try:
        return open("/dev/tty", "r+", encoding="utf-8")  # noqa: SIM115 (closed by the caller)
    except OSError:
        return None
