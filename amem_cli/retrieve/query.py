"""Breaking a query into the words worth searching for."""

from __future__ import annotations

import re
import unicodedata

from ..text import STOPWORDS, is_stopword, words

# Han, Hiragana, Katakana, Hangul: scripts written without spaces between words.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")

# "Caroline's", "she'll": the pieces after the apostrophe would match every note with
# one; "don't", "can't" are function words as a whole.
_CLITIC = re.compile(r"(?<=\w)['’](?:s|d|ll|m|re|ve)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b\w+n['’]t\b", re.IGNORECASE)


# "When did ...?", "what year ...", "how long ago ...": a question about a time. "When"
# asks only where a question starts with it or a verb follows it; "what did she say
# when she left?" asks what, not when.
_AUXILIARIES = "did|does|do|was|were|is|are|will|would|has|have|had|can|could|should|might"
_ASKS_WHEN = re.compile(
    rf"(?:^|[.?!:;]\s*)when\b|\bwhen (?:{_AUXILIARIES})\b|\bhow long ago\b|\b(?:what|which) (?:date|day|month|year)\b",
    re.IGNORECASE,
)


# "What did you recommend?", "the trail you suggested", "you told me": the assistant's own
# past words (a request, "can you suggest...?", asks nothing of them). Otherwise a
# question in the first person ("what did I buy?", "my bikes") asks what the person said.
_ASKS_THE_ASSISTANT = re.compile(
    r"\b(?:did|have|had)\s+you\b|\byou\s+(?:\w+ed|told|said|gave|made|wrote|sent|showed|found|came up with)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself)\b", re.IGNORECASE)


def side_asked(query: str) -> str | None:
    """Whose words in a chat the query asks about: "assistant", "user", or None."""
    if _ASKS_THE_ASSISTANT.search(query):
        return "assistant"
    return "user" if _FIRST_PERSON.search(query) else None


def asks_when(query: str) -> bool:
    """Whether the query asks when something happened."""
    return _ASKS_WHEN.search(query.strip()) is not None


def terms(query: str) -> list[str]:
    """The query's words, lower-cased, each once, in order."""
    return list(dict.fromkeys(words(_CLITIC.sub("", _NEGATION.sub("", query)))))


def keywords(query: str) -> list[str]:
    """The words that carry meaning; all words when every one is a stop word."""
    all_words = terms(query)
    kept = [w for w in all_words if w not in STOPWORDS]
    return kept or all_words


def cjk_terms(query: str) -> list[str]:
    """Runs of CJK characters in the query, for substring search."""
    return list(dict.fromkeys(m.group(0) for m in re.finditer(_CJK.pattern + "+", query)))


def substring_terms(query: str) -> list[str]:
    """What a plain substring search looks for: the query as typed, which FTS5 words miss
    when it cuts a word or is all symbols ("ello wor", "🙂", "C++"), and its CJK runs."""
    return list(dict.fromkeys([query.strip(), *cjk_terms(query)]))


def unsearchable(query: str) -> str | None:
    """Why the query cannot find anything that means something, or None: its words are
    all common ones ("a", "what is it?"), which nearly every note holds, and it has no
    symbol either ("🙂", "C++" are looked for as typed)."""
    found = terms(query)
    if not found or not all(map(is_stopword, found)):
        return None
    if any(unicodedata.category(ch).startswith("S") for ch in query):
        return None
    return f"the query has only common words ({', '.join(found)}): nothing to search for"
