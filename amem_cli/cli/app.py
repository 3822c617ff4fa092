"""The root command: global options, command registration, the error boundary."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Annotated, Any

import typer

from .. import __version__
from ..errors import AmemError
from .output import err_console, fail, warn

app = typer.Typer(
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


@app.callback()
def root(
    ctx: typer.Context,
    dir: Annotated[
        str | None,
        typer.Option("--dir", "-d", help="The vault folder (else $AMEM_DIR, else the platform's data folder).", show_default=False),
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(
            "--embedder",
            help="'onnx' (default), 'sentence-transformers' (same vectors, slow start) or 'fake' (hashing, for tests).",
            show_default=False,
        ),
    ] = None,
    llm: Annotated[
        str | None,
        typer.Option("--llm", help="The model that builds, links and evolves notes: llama (default), openai, none.", show_default=False),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="A GGUF file for llama.cpp (default: the bundled SmolLM2-135M-Instruct).", show_default=False),
    ] = None,
    llm_url: Annotated[
        str | None,
        typer.Option("--llm-url", help="An OpenAI-compatible endpoint (llama-server, Ollama, vLLM), e.g. http://host:8080/v1.", show_default=False),
    ] = None,
    no_server: Annotated[
        bool, typer.Option("--no-server", help="Do the work in this process, not in the vault's warm server.")
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    ctx.obj = {"dir": dir, "embedder": embedder, "llm": llm, "model": model, "llm_url": llm_url, "no_server": no_server}


def command(name: str | None = None, **kwargs: Any) -> Callable:
    """Register a command and put it behind the error boundary: an AmemError becomes
    one line (or a JSON error object) and its exit code, never a traceback."""

    def register(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kw: Any) -> Any:
            as_json = bool(kw.get("json_output"))
            try:
                return fn(*args, **_mended(kw))
            except AmemError as exc:
                fail(exc.message, exc.hint, as_json=as_json)
                raise typer.Exit(exc.exit_code) from None
            except KeyboardInterrupt:
                err_console.print("Interrupted.")
                raise typer.Exit(130) from None
            except (typer.Exit, typer.Abort):
                raise
            except Exception as exc:
                if os.environ.get("AMEM_DEBUG"):
                    raise
                from ..server.protocol import as_error

                error = as_error(exc, _vault_root(kw.get("ctx")))
                fail(error.message, error.hint, as_json=as_json)
                raise typer.Exit(error.exit_code) from None

        app.command(name, **kwargs)(wrapper)
        return fn

    return register


def _mended(kw: dict[str, Any]) -> dict[str, Any]:
    """The command's text arguments with their bytes that were not UTF-8 replaced (see
    `utf8.mend`), and one warning if there were any. A `Path` argument is left as it is:
    a file's name may be any bytes."""
    from ..utf8 import mend, replaced

    count = 0

    def fix(value: Any) -> Any:
        nonlocal count
        if isinstance(value, str):
            value, n = mend(value)
            count += n
        elif isinstance(value, list):
            value = [fix(v) for v in value]
        return value

    kw = {name: fix(value) for name, value in kw.items()}
    if count:
        warn(replaced(count, "the arguments"))
    return kw


def read_stdin() -> str:
    """All of standard input as text, its bytes that were not UTF-8 replaced (one warning)."""
    from ..utf8 import mend, raw_stdin, replaced

    text, count = mend(raw_stdin())
    if count:
        warn(replaced(count, "standard input"))
    return text


def _vault_root(ctx: typer.Context | None) -> str:
    """The vault of the running command, as far as it is known."""
    flags = (ctx.find_root().obj if ctx is not None else None) or {}
    if "container" in flags:
        return str(flags["container"].vault.root)
    return str(flags.get("dir") or os.getcwd())


def run_settings(ctx: typer.Context, notices: list[str] | None = None):
    """The settings for this run (flags win); see `load_settings` for `notices`."""
    from ..config import load_settings

    flags = ctx.find_root().obj or {}
    return load_settings(dir=flags.get("dir"), embedder=flags.get("embedder"), llm=flags.get("llm"), model=flags.get("model"),
                         llm_url=flags.get("llm_url"), notices=notices)


def container(ctx: typer.Context, *, create: bool = False):
    """The services for this run, built from the settings (flags win)."""
    from ..container import Container

    root_ctx = ctx.find_root()
    flags = root_ctx.obj or {}
    if "container" not in flags:
        notices: list[str] = []
        c = Container(run_settings(ctx, notices), create=create)
        for notice in notices:
            warn(notice)
        flags["container"] = c

        def close() -> None:
            from ..operations import problems

            for problem in problems(c):
                warn(problem)
            c.close()

        root_ctx.call_on_close(close)
    return flags["container"]


def call(ctx: typer.Context, op: str, args: dict[str, Any],
         progress: Callable[[int, int | None], None] | None = None) -> Any:
    """The result of the operation `op` (see `amem_cli.operations`): done by the vault's
    warm server when there is one to do it, else in this process. Its warnings are told
    on stderr; its failure is raised as the AmemError it was."""
    flags = ctx.find_root().obj or {}
    reply = None
    if not flags.get("no_server"):
        from ..server.client import ask
        from ..server.protocol import FLAGS

        given = {k: flags[k] for k in FLAGS if flags.get(k) is not None}
        reply = ask(op, args, given, progress)
    if reply is None:
        from ..operations import Context, run

        cx = Context(container(ctx), progress=progress)
        try:
            return run(op, args, cx)
        finally:
            for warning in cx.warnings:
                warn(warning)
    for warning in reply.get("warnings") or []:
        warn(warning)
    if "error" in reply:
        from ..server.protocol import raise_error

        raise_error(reply["error"])
    return reply["result"]


# Register the commands (each module adds its own to `app`).
from .commands import evolution as _evolution  # noqa: E402,F401
from .commands import graph as _graph  # noqa: E402,F401
from .commands import importer as _importer  # noqa: E402,F401
from .commands import ingest as _ingest  # noqa: E402,F401
from .commands import mcp as _mcp  # noqa: E402,F401
from .commands import notes as _notes  # noqa: E402,F401
from .commands import search as _search  # noqa: E402,F401
from .commands import server as _server  # noqa: E402,F401
from .commands import vault as _vault  # noqa: E402,F401


def main() -> None:
    from .completions import COMPLETE_VAR, prepare

    if COMPLETE_VAR in os.environ:
        prepare()
    app(complete_var=COMPLETE_VAR)
