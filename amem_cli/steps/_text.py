"""Small, deterministic text helpers shared by the pipeline steps (no dependencies)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from ..text import close_form, is_stopword
from ..text import words

# Common words that are not function words, so a query keeps them ("on 8 May", "what
# happened today"), but that make poor keywords and labels for a note.
VAGUE_WORDS = frozenset(
    "get gets got like may new one say says today tomorrow yesterday use used uses using".split()
)

_TOKEN = re.compile(r"\w(?:[\w'’\-.]*\w)?", re.UNICODE)
# Clause breaks: punctuation, and a full stop only before a space or the end ("3.12" stays).
_SEGMENT_BREAK = re.compile(r"[,;:!?()\[\]{}\"“”«»|\\\n\t]+|\.(?=\s|$)|\s[-–—]\s")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def segments(text: str) -> list[str]:
    """Pieces of text between punctuation, so n-grams never cross a clause."""
    return [s for s in _SEGMENT_BREAK.split(text) if s.strip()]


def is_stop_or_vague(token: str) -> bool:
    """A stop word (`text.is_stopword`: a function word), or a word too vague to be a
    keyword or label (`VAGUE_WORDS`)."""
    return is_stopword(token) or token.casefold() in VAGUE_WORDS


_SUFFIXES = (
    "ational", "ization", "fulness", "ousness", "iveness",
    "ingly", "ments", "ation", "ness", "ment", "ings", "able", "ible",
    "ies", "ied", "ing", "ers", "est", "ed", "er", "es", "ly", "s",
)


@lru_cache(maxsize=1 << 16)  # box and link checks stem the same words note after note
def stem(word: str) -> str:
    """A crude suffix stripper: good enough to match "locked"/"locking"/"lock"."""
    w = word.casefold().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]  # "table"/"tables" -> "tabl"
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # "stopp" -> "stop"
    return w


def prefix_len(a: str, b: str) -> int:
    """How many letters `a` and `b` share from the start."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def word_matches(word: str, candidates: set[str]) -> bool:
    """`word` occurs among `candidates` (lowercased words): exactly, by stem, or by a
    long shared prefix ("migration"/"migrate", "table"/"tables")."""
    w = word.casefold()
    if w in candidates:
        return True
    s = stem(w)
    for c in candidates:
        if stem(c) == s:
            return True
        # Only for words: "deploy0" is not "deploy".
        shared = prefix_len(w, c) if w.isalpha() and c.isalpha() else 0
        if shared >= max(4, min(len(w), len(c)) - 2):
            return True
    return False


def grounded(phrase: str, text: str, *, text_words: set[str] | None = None) -> bool:
    """True when `phrase` occurs in `text`, case-insensitively, or each of its content
    words does (by stem or shared prefix)."""
    norm_phrase = " ".join(words(phrase))
    if not norm_phrase:
        return False
    norm_text = " ".join(words(text))
    if f" {norm_phrase} " in f" {norm_text} ":
        return True
    needed = [w for w in words(phrase) if not is_stop_or_vague(w)]
    if not needed:
        return False
    pool = text_words if text_words is not None else set(words(text))
    return all(word_matches(w, pool) for w in needed)


def _parts(token: str) -> list[str]:
    """A token and, for a compound ("billing-api", "check_ranges.py"), its parts."""
    pieces = [p for p in re.split(r"[-_./]+", token) if p]
    return [token, *pieces] if len(pieces) > 1 else [token]


def of_the_note(value: str, text: str) -> bool:
    """Whether `value` (a keyword or tag) is words of the note: its tokens found in `text`
    one after another, each as written or in a close form (`close_form`), or a part of a
    compound of the note ("api" of "billing-api"); case and hyphens aside. Never a value
    whose words are scattered over the note or spelled otherwise ("billed-service rewrite")."""
    wanted = [t.casefold() for t in tokens(value.replace("-", " ").replace("_", " "))] if value else []
    if all(is_stop_or_vague(w) or len(w) < 2 for w in wanted):  # ("a", "B": words of every note, of none)
        return False
    flat = " ".join(t.casefold() for t in tokens(text))
    if " ".join(wanted) in flat or value.casefold() in text.casefold():
        return True
    # Each token of the text, with its compound's parts, in order.
    seq = [p.casefold() for t in tokens(text) for p in _parts(t)]
    n = len(wanted)
    return any(all(close_form(w, seq[i + k]) for k, w in enumerate(wanted)) for i in range(len(seq) - n + 1))


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if not is_stop_or_vague(w) and not w.isdigit()]


def slugify(name: str, *, max_chars: int = 30, max_words: int = 3) -> str:
    """A short lowercase slug: letters and digits (any script) joined by hyphens."""
    text = unicodedata.normalize("NFKC", str(name)).casefold()
    parts = re.findall(r"[^\W_]+", text, re.UNICODE)[:max_words]
    slug = "-".join(parts)
    while len(slug) > max_chars and "-" in slug:
        slug = slug.rsplit("-", 1)[0]
    return slug[:max_chars].strip("-")
