"""The root command: global options, command registration, the error boundary."""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from .. import __version__
from ..global_options import GLOBAL_OPTIONS
from .completions import complete_embedders, complete_llms
from .output import fail
from .quick import texts_last
from .session import Session, run_guarded

class _Group(TyperGroup):
    """Typer's root group, whose usage errors (an unknown option, a bad value, a missing
    argument) are a JSON error object on stdout when the command line asks for `--json`:
    a script reading stdout gets `{"error", "hint"}` whatever went wrong, never help text.
    A note's text that starts with dashes is read as text (`quick.texts_last`)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        argv = texts_last(list(sys.argv[1:] if args is None else args))
        if not standalone_mode or "--json" not in argv:
            return super().main(argv, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(argv, prog_name, complete_var, False, **extra)
        except typer.TyperException as exc:  # Click's usage errors (its exceptions' base, in Typer's vendored Click)
            ctx = getattr(exc, "ctx", None)
            fail(exc.format_message(), f"see `{ctx.command_path if ctx else 'amem'} --help`", as_json=True)
            sys.exit(exc.exit_code)
        except typer.Abort:
            fail("aborted", None, as_json=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=_Group,
    name="amem",
    help="Local agentic memory: Markdown notes that link, evolve and are found again.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: Rich help panels cost ~0.2 s of every `--help`
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"amem {__version__}")
        raise typer.Exit()


def root(ctx: typer.Context, version: bool = False, **options: Any) -> None:
    ctx.obj = Session(options)
    ctx.call_on_close(ctx.obj.close)


_COMPLETE = {"embedder": complete_embedders, "llm": complete_llms}


def _declared(option) -> inspect.Parameter:
    """A global option (`global_options.GLOBAL_OPTIONS`) as Typer reads a parameter."""
    if option.setting:
        declared = Annotated[str | None, typer.Option(*option.flags, help=option.help, show_default=False,
                                                      autocompletion=_COMPLETE.get(option.name))]
        return inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=declared)
    declared = Annotated[bool, typer.Option(*option.flags, help=option.help)]
    return inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=False, annotation=declared)


# The root's parameters are the table's options (declared once, there) and --version.
root.__signature__ = inspect.Signature([
    inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
    *map(_declared, GLOBAL_OPTIONS),
    inspect.Parameter("version", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")]),
])
app.callback()(root)


def command(name: str | None = None, *, action: Callable[..., Any] | None = None, group: typer.Typer | None = None,
            **kwargs: Any) -> Callable:
    """Register a command (in `group`, else at the top) and put it behind the error
    boundary (`session.run_guarded`). With `action` the function only declares the
    command's options, and `action(session, **options)` does the work (the everyday
    commands: `quick` runs them without Typer)."""

    def register(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(**kw: Any) -> None:
            ctx = kw["ctx"]
            if action is not None:
                del kw["ctx"]
                work = action
            else:
                def work(_session: Session, **kw: Any) -> None:
                    fn(**kw)
            guarded(ctx, work, kw)

        (group or app).command(name, **kwargs)(wrapper)
        return fn

    return register


def guarded(ctx: typer.Context, work: Callable[..., Any], kw: dict[str, Any]) -> None:
    """`work(session, **kw)` behind the error boundary (`session.run_guarded`), its exit
    status as Typer's exit."""
    code = run_guarded(work, session(ctx), kw, passing=(typer.Exit, typer.Abort))
    if code:
        raise typer.Exit(code)


def session(ctx: typer.Context) -> Session:
    return ctx.find_root().obj


def call(ctx: typer.Context, request: Any, progress: Callable[[int, int | None], None] | None = None) -> Any:
    """The result of `request` (one of `amem_cli.wire`): see `Session.call`."""
    return session(ctx).call(request, progress)


# Register the commands (each module adds its own to `app`).
from .commands import current as _current  # noqa: E402,F401
from .commands import evolution as _evolution  # noqa: E402,F401
from .commands import graph as _graph  # noqa: E402,F401
from .commands import importer as _importer  # noqa: E402,F401
from .commands import ingest as _ingest  # noqa: E402,F401
from .commands import mcp as _mcp  # noqa: E402,F401
from .commands import notes as _notes  # noqa: E402,F401
from .commands import queue as _queue  # noqa: E402,F401
from .commands import search as _search  # noqa: E402,F401
from .commands import server as _server  # noqa: E402,F401
from .commands import vault as _vault  # noqa: E402,F401


def main() -> None:
    from .completions import COMPLETE_VAR, prepare

    if COMPLETE_VAR in os.environ:
        prepare()
    app(complete_var=COMPLETE_VAR)
