"""Text that came in as bytes (argv, standard input, a file's lines), made safe to store.

Python keeps a byte of argv or stdin that is not UTF-8 as a lone surrogate ("\\udcff"),
which no file, SQLite or JSON writer can encode: one such byte used to end the whole
command with an internal error. Text is mended instead: each such byte becomes U+FFFD
(the replacement character, as every editor shows it) and the caller says how many,
so one bad byte never costs the rest of the text.
"""

from __future__ import annotations

import re
import sys

REPLACEMENT = "\ufffd"
_NOT_UTF8 = re.compile("[\ud800-\udfff]")  # surrogate escapes of bad bytes, and lone surrogates


def mend(text: str) -> tuple[str, int]:
    """`text` with each byte that was not UTF-8 replaced by U+FFFD, and how many were."""
    return _NOT_UTF8.subn(REPLACEMENT, text)


def as_text(data: bytes) -> str:
    """UTF-8 bytes (a leading BOM dropped) as text, each byte that is not UTF-8 kept as a
    surrogate escape: nothing lost yet, for `mend` or to pass on unchanged."""
    return data.decode("utf-8-sig", "surrogateescape")


def replaced(count: int, what: str) -> str:
    """The warning for `count` bytes of `what` mended."""
    return f"{count} byte{'s' if count != 1 else ''} of {what} {'were' if count != 1 else 'was'} not UTF-8: replaced by U+FFFD"


def raw_stdin() -> str:
    """All of standard input, `as_text`. Read as bytes where there are bytes: a strict
    decoder stops at the first bad one."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # text already (a test's)
        return sys.stdin.read()
    return as_text(buffer.read())
