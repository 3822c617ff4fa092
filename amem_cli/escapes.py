"""Text made safe to show: what a terminal would act on, written escaped. Used by the
CLI and by the servers' logs."""

from __future__ import annotations

# Characters a terminal acts on instead of showing: the C0 and C1 controls and DEL (ESC
# starts the sequences that clear the screen or write the clipboard, OSC 52; CR and
# backspace overwrite what was shown), the bidi controls that reorder a line (Trojan
# Source), and the line and paragraph separators.
_ACTIVE = [*range(0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A),
           0x2028, 0x2029]
_SHOWN = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
_ONE_LINE = {c: _SHOWN.get(c) or (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _ACTIVE}
_LINES = {c: v for c, v in _ONE_LINE.items() if c not in (0x09, 0x0A)}
# In JSON, as JSON escapes (json.dumps escapes C0 itself; newlines outside strings are layout).
_JSON = {c: f"\\u{c:04x}" for c in _ACTIVE if c >= 0x20}


def printable(text: str, *, lines: bool = False) -> str:
    """`text` (a note's, a file name...) safe to print on a terminal: every character a
    terminal would act on shown escaped (`\\x1b`, `\\u202e`); `lines` keeps newlines and
    tabs (a note's text), else they are escaped too, so no name can start a line of its
    own. The stored text is never changed: only what is printed."""
    if text.isprintable():  # the common case: no control, format or separator character
        return text
    return text.translate(_LINES if lines else _ONE_LINE)


def json_printable(text: str) -> str:
    """JSON text with the characters `printable` escapes written as JSON escapes: the
    same data to a parser, nothing a terminal acts on."""
    if text.isascii() and "\x7f" not in text:  # the common case (json.dumps escaped C0 already)
        return text
    return text.translate(_JSON)
