"""One command's run, without Typer: its global options, the operation it calls (in the
vault's warm server or in this process), the services when it works here, and the error
boundary every command runs behind. Both ways of reading the command line (`app`, the
Typer app, and `quick`, for the everyday commands) end here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AmemError
from .output import err_console, escape, fail, warn

if TYPE_CHECKING:
    from ..operations import Facade
    from ..wire import Request


class Session:
    def __init__(self, flags: dict[str, Any]):
        self.flags = flags  # `global_options.GLOBAL_OPTIONS` -> the value given, or None / False
        self._facade: Facade | None = None
        self.served = False  # the last `call` was done by the warm server

    def settings(self, notices: list[str] | None = None):
        """The settings for this run (flags win); see `load_settings` for `notices`."""
        from ..server.client import settings_for

        return settings_for(self.flags, notices=notices)

    def told_settings(self):
        """The settings for this run, with what an untrusted vault's amem.toml may not set told on stderr."""
        notices: list[str] = []
        settings = self.settings(notices)
        for notice in notices:
            warn(notice)
        return settings

    def facade(self) -> Facade:
        """The services for this run (built on first use, from the settings)."""
        if self._facade is None:
            from ..operations import Facade

            self._facade = Facade(self.told_settings())
        return self._facade

    def call(self, request: Request, progress: Callable[[int, int | None], None] | None = None) -> Any:
        """The result of `request` (one of `amem_cli.wire`): done by the vault's warm
        server when there is one to do it, else in this process. Its warnings are told on
        stderr; its failure is raised as the AmemError it was."""
        reply = None
        self.served = False
        if not self.flags.get("no_server"):
            from ..global_options import SETTINGS
            from ..server.client import ask

            reply = ask(request, {k: self.flags[k] for k in SETTINGS if self.flags.get(k) is not None}, progress)
        if reply is None:
            facade = self.facade()
            warnings: list[str] = []
            try:
                return request.answer(facade.run(request, progress=progress, warnings=warnings))
            finally:
                for warning in facade.told(warnings):
                    warn(warning)
        self.served = True
        for warning in reply.warnings:
            warn(warning)
        if reply.error is not None:
            reply.error.raise_it()
        from ..records import Misfit, decode

        try:
            return decode(request.result, reply.result)
        except Misfit:
            from ..server.protocol import unreadable

            raise unreadable(reply.result) from None

    def vault_root(self) -> str:
        """The vault of this run, as far as it is known."""
        if self._facade is not None:
            return str(Path(self._facade.settings.dir).expanduser().resolve())
        return str(self.flags.get("dir") or os.getcwd())

    def close(self) -> None:
        """Tell what the index noticed (a note file it could not read), and let go of the services."""
        if self._facade is None:
            return
        for problem in self._facade.problems():
            warn(problem)
        self._facade.close()


def run_guarded(action: Callable[..., Any], session: Session, kw: dict[str, Any],
                passing: tuple[type[BaseException], ...] = ()) -> int:
    """Run a command's `action(session, **kw)` and return its exit status: an AmemError
    becomes one line (or a JSON error object) and its exit code, never a traceback.
    Exceptions of the types `passing` (Typer's own exits) go through."""
    as_json = bool(kw.get("json_output"))
    try:
        action(session, **read_dates(mended(kw)))
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


def read_dates(kw: dict[str, Any]) -> dict[str, Any]:
    """`--since` and `--until` as a person types them: a relative or partial date (`7d`,
    `yesterday`, `last week`, `2025-03`; `timeutil.span`) becomes the first instant it
    names for --since and the last for --until, in the local timezone, and what it became
    is said on stderr. Other dates go on as given, read where every date is."""
    from ..timeutil import span

    kw = dict(kw)
    for name, which in (("since", 0), ("until", 1)):
        text = kw.get(name)
        bounds = span(text) if isinstance(text, str) else None
        if bounds:
            kw[name] = bounds[which].isoformat(timespec="seconds")
            err_console.print(f"amem: --{name} {escape(text)} means {kw[name]}", highlight=False)
    return kw
