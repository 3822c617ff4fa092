"""The `amem` command's entry point."""

from __future__ import annotations

import sys


def main() -> None:
    # Text that cannot be encoded (a file name's byte that is not UTF-8, a character the
    # terminal's encoding lacks) is printed escaped, as on stderr, never a crash.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    from .app import main as run

    run()
