"""The warm server: `amem serve` runs it; `amem server status|stop|logs` look after it."""

from __future__ import annotations

from collections import deque
from typing import Annotated

import typer

from ...errors import VaultError
from .. import actions
from ..app import app, command, session
from ..options import JsonOpt
from ..output import console, printable

server_app = typer.Typer(help="Look after the vault's warm background server.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(server_app, name="server")


@command("serve")
def serve(
    ctx: typer.Context,
    idle_timeout: Annotated[
        float | None,
        typer.Option("--idle-timeout", min=1, help="Stop after this many seconds without a request (default: server_idle, 900).", show_default=False),
    ] = None,
) -> None:
    """Run the vault's warm server in the foreground (the CLI starts one on demand)."""
    from ...server.client import call, socket_path
    from ...server.daemon import Server

    s = session(ctx)
    index_dir = s.facade().index_dir
    try:
        socket_path(index_dir)
    except OSError as exc:
        raise VaultError(str(exc), hint="set XDG_RUNTIME_DIR to a folder only you can use, or use a shorter vault path") from None
    try:
        if call(index_dir, {"op": "ping"}, timeout=2).get("ok"):
            # (the words and exit code of the daemon's own lock check, which a racing start meets instead)
            raise VaultError("another amem server is serving this vault", hint="`amem server status` shows it")
    except (OSError, ValueError):
        pass  # nobody listening: ours to start
    Server(s.facade().settings, idle_timeout=idle_timeout, settings_now=s.settings).run()


def _root(ctx: typer.Context):
    return actions.vault_root(session(ctx))


def _ask(ctx: typer.Context, op: str) -> dict | None:
    return actions.ask_server(session(ctx), op)


@command("status", action=actions.server_status, group=server_app)
def status(ctx: typer.Context, json_output: JsonOpt = False) -> None:
    """Whether the server runs, since when, its memory and queued work."""


@server_app.command("stop")
def stop(ctx: typer.Context) -> None:
    """Stop the server (queued work stays queued for the next one). Returns once it has
    exited: it first finishes the note in hand."""
    from ...places import INDEX_DIR

    import json

    try:  # written by the server when it starts listening
        pid = int(json.loads((_root(ctx) / INDEX_DIR / "server.json").read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        pid = None
    if _ask(ctx, "stop") is None:
        console.print("no server was running")
    elif pid is None or _exited(pid, STOP_WAIT):
        console.print("stopped")
    else:
        console.print(f"asked to stop; it is still finishing its work (pid {pid})")


STOP_WAIT = 60.0  # seconds: a note in hand may be waiting on the model


def _exited(pid: int, timeout: float) -> bool:
    import os
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # another user's process under that pid: ours has gone
            return True
        if _zombie(pid):  # exited, not yet reaped by its parent
            return True
        time.sleep(0.05)
    return False


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


@server_app.command("logs")
def logs(
    ctx: typer.Context,
    lines: Annotated[int, typer.Option("--lines", "-n", min=1, help="How many of the last lines.")] = 50,
) -> None:
    """The end of the server's log (.amem/server.log)."""
    path = session(ctx).facade().index_dir / "server.log"
    if not path.exists():
        console.print("no server log yet")
        return
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in deque(fh, maxlen=lines):
            console.print(printable(line.rstrip("\n")), markup=False)
