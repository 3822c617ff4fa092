"""The `amem` command's entry point."""

from __future__ import annotations

import os
import sys


def main() -> None:
    # Text that cannot be encoded (a file name's byte that is not UTF-8, a character the
    # terminal's encoding lacks) is printed escaped, as on stderr, never a crash.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    if "_AMEM_COMPLETE" not in os.environ:  # (completions.COMPLETE_VAR: a shell asks Typer what TAB offers)
        from .quick import main as run_quickly

        code = run_quickly(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    from .app import main as run

    run()
