"""Everything the CLI prints: human (Rich) or JSON, and the one error path."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from ..escapes import json_printable, printable  # noqa: F401  (the commands print through these)


class _LazyConsole:
    """A Rich console made on first use, so `amem --help` never pays for importing Rich;
    and where Rich would print no styles (a pipe, a file: what scripts and agents read)
    lines of markup are printed as the same plain text without it (~40 ms a command)."""

    def __init__(self, **options: Any):
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_console", None)

    def print(self, *objects: Any, **kw: Any) -> None:
        stream = sys.stderr if self._options.get("stderr") else sys.stdout
        if not kw and all(isinstance(o, str) for o in objects) and not _styled(stream):
            text = plain(" ".join(objects))
            if text.replace("\n", "").isprintable():  # Rich expands tabs and drops some controls: let it
                stream.write(text + "\n")
                return
        self._get().print(*objects, **kw)

    def _get(self):
        if self._console is None:
            from rich.console import Console

            object.__setattr__(self, "_console", Console(**self._options))
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._get(), name, value)


def _styled(stream) -> bool:
    """Whether Rich would print styles to `stream` (its `Console.is_terminal`)."""
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible in ("0", "1"):
        return tty_compatible == "1"
    if (force := os.environ.get("FORCE_COLOR")) is not None:
        return force != ""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# Rich's markup: a tag is `[name]`, `[/name]` or `[/]`; a backslash before one makes it text.
_TAG = re.compile(r"((\\*)\[([a-z#/@][^[]*?)])")


def plain(markup: str) -> str:
    """The text of Rich markup, as Rich prints it where it prints no styles."""
    out, position = [], 0
    for match in _TAG.finditer(markup):
        tag, escapes, _ = match.groups()
        out.append(markup[position:match.start()])
        backslashes, escaped = divmod(len(escapes), 2)
        out.append("\\" * backslashes)
        if escaped:
            out.append(tag[len(escapes):])
        position = match.end()
    out.append(markup[position:])
    return "".join(piece.replace("\\[", "[") for piece in out)


def markup_escape(text: str) -> str:
    """`text` as Rich markup that prints it as it is (Rich's `markup.escape`, without
    importing Rich)."""
    text = re.sub(r"(\\*)(\[[a-z#/@][^[]*?])", lambda m: f"{m[1]}{m[1]}\\{m[2]}", text)
    return text + "\\" if text.endswith("\\") and not text.endswith("\\\\") else text


# emoji=False: a note's ":warning:" is shown as written, not as a picture.
console = _LazyConsole(highlight=False, soft_wrap=True, emoji=False)
err_console = _LazyConsole(stderr=True, highlight=False, soft_wrap=True, emoji=False)

def echo(text: str) -> None:
    """One line on stdout, as it is (`typer.echo`, without importing Typer)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def print_json(data: Any) -> None:
    """`data` (a result of `amem_cli.wire`, or plain JSON) as JSON with stable keys."""
    from ..records import encode

    text = json.dumps(encode(data), ensure_ascii=False, indent=2, default=str)
    sys.stdout.write(json_printable(text) + "\n")


def fail(message: str, hint: str | None, *, as_json: bool) -> None:
    """One line saying what went wrong, one saying what to do."""
    if as_json:
        print_json({"error": message, "hint": hint})
        return
    err_console.print(f"[bold red]Error:[/] {escape(message)}")
    if hint:
        err_console.print(f"[dim]Hint: {escape(hint)}[/]")


def tell_queued(queued: int, served: bool) -> None:
    """One line on stderr: how much model work a write queued, and what will do it."""
    if not queued:
        return
    what = f"the model's work on {queued} note{'' if queued == 1 else 's'}"
    doer = ("the background server does it" if served
            else "`amem process` does it (or the background server, once one runs)")
    err_console.print(f"[dim]queued {what}: {doer}; `amem queue` shows it[/]")


def queue_line(q) -> str:
    """`amem queue`'s and `amem status`'s line (`q`: a `wire.queue.QueueSummary`): jobs by state, and the time left."""
    if not (q.queued or q.running):
        return "queue: empty"
    parts = [f"{q.queued} queued", f"{q.running} running"]
    if q.failed:
        parts.append(f"{q.failed} failed (tried again after the others)")
    left = q.seconds_left
    eta = (f"about {duration(left)} left at {q.seconds_per_job:.1f} s a note" if left is not None
           else "no rate measured yet")
    return f"queue: {', '.join(parts)}; {eta}"


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def wait_choice(wait: bool, no_wait: bool) -> bool:
    """Whether a write waits for the model (`--wait`); giving both flags is a usage error."""
    if wait and no_wait:
        from ..errors import UsageError

        raise UsageError("--wait and --no-wait (or --defer) contradict each other", hint="give one of them")
    return wait


def warn(message: str) -> None:
    err_console.print(f"[yellow]Warning:[/] {escape(message)}")


def escape(text: str, *, lines: bool = False) -> str:
    """`printable(text)`, with Rich's markup escaped: for text printed through the consoles."""
    return markup_escape(printable(text, lines=lines))


def day_of(iso: str | None) -> str:
    """The day of an ISO date-time a result carries (`2024-05-08`, the year's four digits
    whatever the year: `timeutil.day`, which a quick command does without importing), or ''."""
    if not iso:
        return ""
    from datetime import datetime

    return datetime.fromisoformat(iso).date().isoformat()


def snippet(text: str, width: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def progress_bar(*, show: bool = True, remaining: bool = False):
    """A transient progress bar (description, bar, done of total, time elapsed or left) on
    stderr, drawn only where a person watches it: a terminal. Stdout keeps the command's
    output alone (a bar stopping on a pipe left a blank line in it)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    stderr = Console(stderr=True)
    clock = TimeRemainingColumn() if remaining else TimeElapsedColumn()
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), clock,
                    console=stderr, disable=not (show and stderr.is_terminal), transient=True)
