"""The CLI prints lines of Rich markup without Rich where Rich would print no styles (a
pipe, a file): the text must be Rich's own, character for character."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console
from rich.markup import escape as rich_escape

from amem_cli.cli import output
from amem_cli.cli.output import escape, markup_escape, plain

# Lines as the commands print them, with hostile text escaped into them.
HOSTILE = ["[bold]", "\\[dim]", "a\\", "a\\\\", "\\", "[/]", "x[@click]y", "[#fff]", "[ not a tag ]", "[a=b]",
           "C:\\new\\[folder]", "[[bold]]", "back\\\\\\[x]", "ünïcödé 東京", ""]


def _rich(markup: str) -> str:
    out = io.StringIO()
    Console(file=out, highlight=False, soft_wrap=True, emoji=False).print(markup)
    return out.getvalue()


def _strings(n: int = 2000):
    rng = random.Random(7)
    alphabet = "[]\\/ab@#=: "
    return HOSTILE + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(n)]


def test_escape_is_richs():
    for text in _strings():
        assert markup_escape(text) == rich_escape(text), text


def test_markup_lines_print_as_rich_prints_them_to_a_pipe():
    for text in _strings():
        for line in (f"[bold]{escape(text)}[/]  [dim]2024-05-08[/]", f"[red]problem:[/] {escape(text)}",
                     f"{escape(text)} [cyan]{escape('#' + text)}[/]", escape(text)):
            assert plain(line) + "\n" == _rich(line), line


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_the_consoles_print_plain_text_to_a_pipe_without_rich(monkeypatch, stream):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    out = io.StringIO()
    monkeypatch.setattr(f"sys.{stream}", out)
    console = output.console if stream == "stdout" else output.err_console
    made = console._console
    console.print(f"[bold]{escape('[x] a note')}[/] [dim]2024[/]")
    console.print()
    assert out.getvalue() == "[x] a note 2024\n\n"
    assert console._console is made  # no Rich console was made for it


def test_text_rich_would_change_is_left_to_rich(monkeypatch):
    """A note's tabs (kept by `escape(..., lines=True)`): Rich expands them; so must the output."""
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    line = escape("a\ttabbed\tline", lines=True)
    output.console.print(line)
    assert out.getvalue() == _rich(line) == "a       tabbed  line\n"
