"""The typed wire: each operation's request, and the result it answers.

Every way in asks for an operation with one of these requests: the CLI (in its own
process, or through the vault's warm server), MCP and the Python API. The server checks
a request that came as JSON against its type before anything is done (`server.daemon.read_request`); `Request.answer`
gives what an operation returned as the request's result type, which is what the client
reads a reply into. A result prints as JSON (`records.encode`) key for key as the `--json`
output of the command that asks for it.

An operation's function (`amem_cli.operations`) returns its result, or the services' own
data it is made from (a `Note`, a `SearchHit`: `answer` reads them through their
`to_dict`), so the Python API hands out notes, not their JSON.

The requests and results live by what they are about (`notes`: the everyday operations;
`editing`: the other ones on notes; `current`: which facts are current (supersession,
duplicates, expiry); `intake`: bringing notes in; `queue`; `vault`), so a
quick command (`amem search`) loads the module of its own and no other.
"""

from __future__ import annotations

from typing import Any

from ..records import Record, decode, encode

# The wire's version. A server answers a request of another version with a retry (the
# client does it in its own process and stops that server); a client reads a reply that
# names no version as one from a server older than versions (see `server.client.ask`).
PROTOCOL = 3

REQUESTS: dict[str, type[Request]] = {}  # op -> its request type (of the modules loaded: `load_all` loads every one)
MODULES = ("notes", "editing", "current", "intake", "queue", "vault")


def load_all() -> dict[str, type[Request]]:
    """Every request type (a request is known once its module is loaded)."""
    import importlib

    for module in MODULES:
        importlib.import_module(f"{__name__}.{module}")
    return REQUESTS


class Request(Record):
    """`op`: the operation's name on the wire; `result`: the type of what it answers.
    For the CLI's client: `starts_server`, worth starting the vault's warm server for (it
    loads a model); `redo`, safe to do in the command's own process after a server took
    it and died before it answered (it changes nothing, or doing it twice does no harm:
    an import skips the lines it has); `served`, done by a warm server when one runs."""

    op = ""
    result = None
    starts_server = False
    redo = False
    served = True

    def __init_subclass__(cls, op: str | None = None, result: Any = None, *, starts_server: bool = False,
                          redo: bool = False, served: bool = True, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        if op is not None:
            cls.op, cls.result = op, result
            cls.starts_server, cls.redo, cls.served = starts_server, redo, served
            REQUESTS[op] = cls

    def answer(self, value: Any) -> Any:
        """What the operation returned, as this request's result type (Misfit if it is not)."""
        return decode(self.result, encode(value))
