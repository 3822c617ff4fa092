"""The `amem` command's entry point: the vault's warm server if it answers, else the
Typer app in this process. Imports nothing heavy before it knows which."""

from __future__ import annotations

import sys


def main() -> None:
    from ..server.client import run_via_server

    # Text that cannot be encoded (a file name's byte that is not UTF-8, a character the
    # terminal's encoding lacks) is printed escaped, as on stderr, never a crash.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")

    code = run_via_server(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from .app import main as run_here

    run_here()
