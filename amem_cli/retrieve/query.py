"""Breaking a query into the words worth searching for."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
# Han, Hiragana, Katakana, Hangul: scripts written without spaces between words.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")

# Function words and question words: they match nearly every note and say little.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me might more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves ever also any kind likely""".split()
)


# "Caroline's", "she'll": the pieces after the apostrophe would match every note with
# one; "don't", "can't" are function words as a whole.
_CLITIC = re.compile(r"(?<=\w)['’](?:s|d|ll|m|re|ve)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b\w+n['’]t\b", re.IGNORECASE)


def words(query: str) -> list[str]:
    """The query's words, lower-cased, each once, in order."""
    text = _CLITIC.sub("", _NEGATION.sub("", query))
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))


def keywords(query: str) -> list[str]:
    """The words that carry meaning; all words when every one is a stop word."""
    all_words = words(query)
    kept = [w for w in all_words if w not in STOPWORDS]
    return kept or all_words


def cjk_terms(query: str) -> list[str]:
    """Runs of CJK characters in the query, for substring search."""
    return list(dict.fromkeys(m.group(0) for m in re.finditer(_CJK.pattern + "+", query)))


def substring_terms(query: str) -> list[str]:
    """What a plain substring search looks for: the query as typed, which FTS5 words miss
    when it cuts a word or is all symbols ("ello wor", "🙂", "C++"), and its CJK runs."""
    return list(dict.fromkeys([query.strip(), *cjk_terms(query)]))
