"""Everything the CLI prints: human (Rich) or JSON, and the one error path."""

from __future__ import annotations

import json
import sys
from typing import Any



class _LazyConsole:
    """A Rich console made on first use, so `amem --help` never pays for importing Rich."""

    def __init__(self, **options: Any):
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_console", None)

    def _get(self):
        if self._console is None:
            from rich.console import Console

            object.__setattr__(self, "_console", Console(**self._options))
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._get(), name, value)


console = _LazyConsole(highlight=False, soft_wrap=True)
err_console = _LazyConsole(stderr=True, highlight=False, soft_wrap=True)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def fail(message: str, hint: str | None, *, as_json: bool) -> None:
    """One line saying what went wrong, one saying what to do."""
    if as_json:
        print_json({"error": message, "hint": hint})
        return
    err_console.print(f"[bold red]Error:[/] {escape(message)}")
    if hint:
        err_console.print(f"[dim]Hint: {escape(hint)}[/]")


def warn(message: str) -> None:
    err_console.print(f"[yellow]Warning:[/] {escape(message)}")


def escape(text: str) -> str:
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def snippet(text: str, width: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"
