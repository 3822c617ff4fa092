"""The most a caller may hand amem in one call, the same by every way in (the command
line, the warm server, MCP, Python): checked where the services take the input, and
declared in the MCP tools' schemas, so that a client knows them beforehand.

Generous for any note or question a person or an agent writes; small enough that no one
call holds a server for long (on bae2764 a 50 MB query held the MCP server for 130 s,
every other call waiting), and that a note's frontmatter stays a list of words.
"""

from __future__ import annotations

import unicodedata

from .errors import UsageError

# A note's text: half what a note file may be (`vault.MAX_NOTE_BYTES`), the rest room for
# its frontmatter, so amem never writes a file it would refuse to read back.
MAX_CONTENT_BYTES = 1024 * 1024
MAX_QUERY_CHARS = 4000  # a question, or the paragraph an agent is working on
MAX_TERM_CHARS = 200  # one keyword, tag or box
MAX_TERMS = 100  # keywords, tags or boxes of one note
MAX_CONTEXT_CHARS = 2000  # a note's context: one sentence
MAX_RESULTS = 1000  # hits of one search, notes of one listing
MAX_TOKENS = 1_000_000  # the budget of one context block
MAX_SECONDS = 7 * 86400  # the longest a call may be asked to go on (`amem process --until`)


def check_query(query: str) -> None:
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(f"the query is {len(query):,} characters long; at most {MAX_QUERY_CHARS:,} are searched",
                         hint="search for the question, not a document (a few sentences at most)")


def check_count(name: str, value: int, low: int, high: int, hint: str = "give a value within that range") -> None:
    """A count a caller gives (a limit, a budget) within low..high."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."  # (a 400-digit number)
        raise UsageError(f"{name} must be a whole number from {low:,} to {high:,}, not {shown}", hint=hint)


def check_seconds(name: str, value: float, hint: str) -> None:
    """A while a call may go on, in seconds (a number, not NaN), up to `MAX_SECONDS`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_SECONDS:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."  # (a 400-digit number)
        raise UsageError(f"{name} must be from 0 to {MAX_SECONDS:,} seconds, not {shown}", hint=hint)


def check_terms(values: list[str], what: str) -> None:
    """Keywords, tags or boxes (`what`: "keyword"...): how many, how long, and no control
    character (an escape sequence in a tag is not a word)."""
    if len(values) > MAX_TERMS:
        raise UsageError(f"{len(values):,} {what}s given; a note has at most {MAX_TERMS}", hint=f"keep the {what}s that matter")
    for value in values:
        if len(value) > MAX_TERM_CHARS:
            raise UsageError(f"a {what} is {len(value):,} characters long; at most {MAX_TERM_CHARS} are kept",
                             hint=f"a {what} is a word or a short phrase")
        if any(unicodedata.category(c) == "Cc" for c in value):
            raise UsageError(f"a {what} holds a control character: {value[:80]!r}",
                             hint=f"a {what} is a word or a short phrase; remove it")


def check_context(context: str) -> None:
    if len(context) > MAX_CONTEXT_CHARS:
        raise UsageError(f"the context is {len(context):,} characters long; at most {MAX_CONTEXT_CHARS:,}",
                         hint="the context is one sentence on the note's topic; the note's text holds the rest")
