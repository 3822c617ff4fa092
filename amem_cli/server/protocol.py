"""What the CLI and the warm server say to each other over the vault's socket.

One connection, one request: a line of JSON from the client, then from the server any
number of event lines and one reply line.

    request   {"op": NAME, "args": {...}, "settings": {"flags": {...}, "env": {AMEM_*: ...}, "dir": VAULT}}
              {"op": "ping" | "status" | "stop"}            (looking after the server)
    event     {"event": "progress", "done": N, "total": N | null}   (import, process, reindex)
    reply     {"result": ..., "warnings": [...]}
              {"error": {"message", "hint", "exit_code"}, "warnings": [...]}
              {"retry": "settings" | "stopping" | "off" | "here"}   (the client does it in its own process;
                                                             "settings": and stops this server)

`NAME` and `args` are an operation of `amem_cli.operations`. `settings` are the
command's global options and environment: the server serves commands whose settings
are its own, and those that differ only in asking for no model (`--llm none`: done
without one); it leaves other settings to the client ("here"), and tells it to stop
the server ("settings") when the server's own settings changed since it started.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import AmemError, storage_error

# A request is one line of JSON. Longer ones are refused (the CLI then works alone); a
# client that sends nothing for this long is dropped, so a hung client holds no thread.
MAX_REQUEST = 64 * 2**20
READ_TIMEOUT = 60.0
# The global options a request may carry, as the root command names them.
FLAGS = ("dir", "embedder", "llm", "model", "llm_url")
# Those that choose the model: a command's own. A server a command starts runs the model
# the vault's settings and the environment name, whatever that command's flags ask for.
MODEL_FLAGS = ("llm", "model", "llm_url")


def progress_event(done: int, total: int | None) -> dict:
    return {"event": "progress", "done": done, "total": total}


def as_error(exc: Exception, where: str | os.PathLike) -> AmemError:
    """Any exception as the one line (and hint and exit code) the user is told: a full
    disk or read-only filesystem as such, anything unforeseen as an internal error (70)."""
    if isinstance(exc, AmemError):
        return exc
    known = storage_error(exc, where)
    if known is not None:
        return known
    return AmemError(f"internal error: {exc.__class__.__name__}: {exc}",
                     hint="this is a bug in amem; run again with AMEM_DEBUG=1 for the traceback and report it", exit_code=70)


def error_reply(exc: Exception, where: str | os.PathLike, warnings: list[str]) -> dict:
    error = as_error(exc, where)
    return {"error": {"message": error.message, "hint": error.hint, "exit_code": error.exit_code}, "warnings": warnings}


def raise_error(error: Any) -> None:
    """Raise the AmemError an error reply carries (a malformed one as an internal error)."""
    if isinstance(error, dict) and isinstance(error.get("message"), str) and isinstance(error.get("exit_code"), int):
        hint = error.get("hint")
        raise AmemError(error["message"], hint=hint if isinstance(hint, str) else None, exit_code=error["exit_code"])
    raise AmemError(f"internal error: the server replied {error!r}",
                    hint="this is a bug in amem; run the command with --no-server and report it", exit_code=70)


def check_settings(settings: Any) -> tuple[dict[str, str], dict[str, str], str]:
    """(flags, env, dir) of a request, or ValueError."""
    if not isinstance(settings, dict):
        raise ValueError("settings must be an object")
    flags, env, dir = settings.get("flags") or {}, settings.get("env") or {}, settings.get("dir")
    if not isinstance(flags, dict) or not all(k in FLAGS and isinstance(v, str) for k, v in flags.items()):
        raise ValueError(f"settings.flags must map some of {', '.join(FLAGS)} to text")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ValueError("settings.env must map names to text")
    if not isinstance(dir, str):
        raise ValueError("settings.dir must be the vault's folder")
    return flags, env, dir
