"""What the CLI and the warm server say to each other over the vault's socket.

One connection, one request: a line of JSON from the client, then from the server any
number of event lines and one reply line.

    request   `Envelope`: an operation (its name and the JSON of its request, a request
              of `amem_cli.wire`), the command's settings, the wire's version
              {"op": "ping" | "status" | "stop"}        (looking after the server)
    event     {"event": "progress", "done": N, "total": N | null}   (import, process, reindex)
    reply     `Reply`: the operation's result (its request's `result` type) and the
              warnings, or its error (`Failure`) and the warnings; or a retry, when the
              client is to do it in its own process: "settings" (and stop this server),
              "stopping", "off" or "here"

The server serves commands whose settings are its own, and those that differ only in
asking for no model (`--llm none`: done without one); it leaves other settings to the
client ("here"), and tells it to stop the server ("settings") when the server's own
settings changed since it started, or the client speaks another version of the wire.
"""

import os
from typing import Any

from ..errors import AmemError, storage_error
from ..global_options import SETTINGS
from ..records import Record, encode
from ..wire import PROTOCOL, Request

# A request is one line of JSON. Longer ones are refused (the CLI then works alone); a
# client that sends nothing for this long is dropped, so a hung client holds no thread.
MAX_REQUEST = 64 * 2**20
READ_TIMEOUT = 60.0


class CommandSettings(Record):
    """What a command's settings are made of: the global options it was given that are
    settings (`global_options.SETTINGS`), its AMEM_* environment, its vault."""

    flags: dict[str, str]
    env: dict[str, str]
    dir: str

    def check(self) -> None:
        if unknown := set(self.flags) - set(SETTINGS):
            raise ValueError(f"settings.flags must map some of {', '.join(SETTINGS)} to text, not {sorted(unknown)[0]!r}")


class Envelope(Record):
    """A request line: the operation's name and arguments (checked by `daemon.read_request`)."""

    op: str
    args: Any = {}
    settings: CommandSettings
    protocol: int | None = None  # the client's version of the wire (None: one from before versions)


def request_line(request: Request, flags: dict[str, str], env: dict[str, str], dir: str) -> dict:
    """The `Envelope` a client sends for `request`, as JSON."""
    return Envelope(op=request.op, args=encode(request), settings=CommandSettings(flags=flags, env=env, dir=dir),
                    protocol=PROTOCOL).to_json()


class Failure(Record):
    message: str
    hint: str | None
    exit_code: int

    def raise_it(self) -> None:
        raise AmemError(self.message, hint=self.hint, exit_code=self.exit_code)


class Reply(Record):
    """The reply line: one of `result`, `error` or `retry`."""

    protocol: int = PROTOCOL
    result: Any = None
    error: Failure | None = None
    retry: str | None = None
    warnings: list[str] = []

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in super().to_json().items() if v is not None}


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


def error_reply(exc: Exception, where: str | os.PathLike, warnings: list[str]) -> Reply:
    error = as_error(exc, where)
    return Reply(error=Failure(error.message, error.hint, error.exit_code), warnings=warnings)


def unreadable(reply: Any) -> AmemError:
    """The error for a reply the client cannot read."""
    return AmemError(f"internal error: the server replied {reply!r}",
                     hint="this is a bug in amem; run the command with --no-server and report it", exit_code=70)
