"""One command's run, without Typer: its global options, the operation it calls (in the
vault's warm server or in this process), the services when it works here, and the error
boundary every command runs behind. Both ways of reading the command line (`app`, the
Typer app, and `quick`, for the everyday commands) end here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from ..errors import AmemError
from .output import err_console, fail, warn

# The root command's options, as its parameters name them.
GLOBAL_OPTIONS = ("dir", "embedder", "llm", "model", "llm_url", "no_server")


class Session:
    def __init__(self, flags: dict[str, Any]):
        self.flags = flags  # GLOBAL_OPTIONS -> the value given, or None / False
        self._container = None
        self.served = False  # the last `call` was done by the warm server

    def settings(self, notices: list[str] | None = None):
        """The settings for this run (flags win); see `load_settings` for `notices`."""
        from ..config import load_settings

        f = self.flags
        return load_settings(dir=f.get("dir"), embedder=f.get("embedder"), llm=f.get("llm"), model=f.get("model"),
                             llm_url=f.get("llm_url"), notices=notices)

    def container(self, *, create: bool = False):
        """The services for this run, built on first use from the settings."""
        if self._container is None:
            from ..container import Container

            notices: list[str] = []
            self._container = Container(self.settings(notices), create=create)
            for notice in notices:
                warn(notice)
        return self._container

    def call(self, op: str, args: dict[str, Any], progress: Callable[[int, int | None], None] | None = None) -> Any:
        """The result of the operation `op` (see `amem_cli.operations`): done by the vault's
        warm server when there is one to do it, else in this process. Its warnings are told
        on stderr; its failure is raised as the AmemError it was."""
        reply = None
        self.served = False
        if not self.flags.get("no_server"):
            from ..server.client import ask
            from ..server.protocol import FLAGS

            reply = ask(op, args, {k: self.flags[k] for k in FLAGS if self.flags.get(k) is not None}, progress)
        if reply is None:
            from ..operations import Context, run

            cx = Context(self.container(), progress=progress)
            try:
                return run(op, args, cx)
            finally:
                for warning in cx.warnings:
                    warn(warning)
        self.served = True
        for warning in reply.get("warnings") or []:
            warn(warning)
        if "error" in reply:
            from ..server.protocol import raise_error

            raise_error(reply["error"])
        return reply["result"]

    def vault_root(self) -> str:
        """The vault of this run, as far as it is known."""
        if self._container is not None:
            return str(self._container.vault.root)
        return str(self.flags.get("dir") or os.getcwd())

    def close(self) -> None:
        """Tell what the index noticed (a note file it could not read), and let go of the services."""
        if self._container is None:
            return
        from ..operations import problems

        for problem in problems(self._container):
            warn(problem)
        self._container.close()


def run_guarded(action: Callable[..., Any], session: Session, kw: dict[str, Any],
                passing: tuple[type[BaseException], ...] = ()) -> int:
    """Run a command's `action(session, **kw)` and return its exit status: an AmemError
    becomes one line (or a JSON error object) and its exit code, never a traceback.
    Exceptions of the types `passing` (Typer's own exits) go through."""
    as_json = bool(kw.get("json_output"))
    try:
        action(session, **mended(kw))
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return 0
    except passing:
        raise
    except AmemError as exc:
        fail(exc.message, exc.hint, as_json=as_json)
        return exc.exit_code
    except KeyboardInterrupt:
        err_console.print("Interrupted.")
        return 130
    except BrokenPipeError:
        # The reader went away (`amem search x | head -1`): say nothing, as click does.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (the flush at exit would fail again)
        return 1
    except Exception as exc:
        if os.environ.get("AMEM_DEBUG"):
            raise
        from ..server.protocol import as_error

        error = as_error(exc, session.vault_root())
        fail(error.message, error.hint, as_json=as_json)
        return error.exit_code


def mended(kw: dict[str, Any]) -> dict[str, Any]:
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
