"""Words, stop words and a word's close forms: the one tokenizer and stop-word list
retrieval and the pipeline share."""

from __future__ import annotations

import re

# Function words and question words: they match nearly every note and say little, in a
# query as in a keyword.
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because
    been before being below between both but by can can't cannot could couldn't did didn't
    do does doesn't doing don't down during each either else even ever every few for from
    further had hadn't has hasn't have haven't having he he'd he'll he's her here here's
    hers herself him himself his how how's however i i'd i'll i'm i've if in into is isn't
    it it's its itself just kind let's likely me might more most much must mustn't my
    myself neither no nor not now of off often on once only or other ought our ours
    ourselves out over own per quite rather really same shall shan't she she'd she'll she's
    should shouldn't since so some still such than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've this those
    though through thus to too under until up upon us very via was wasn't we we'd we'll
    we're we've were weren't what what's when when's where where's whether which while who
    who's whom whose why why's will with within without won't would wouldn't yet you you'd
    you'll you're you've your yours yourself yourselves
    """.split()
)

_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    """The text's word tokens, lower-cased ("rebase-squash" -> rebase, squash). Lower, not
    casefold: the full-text index folds case the same way ("straße" stays "straße")."""
    return _WORD.findall(text.lower())


def is_stopword(word: str) -> bool:
    return word.casefold().replace("’", "'") in STOPWORDS


# Endings that keep a word's family: inflections ("fixed"/"fix") and derivations
# ("decided"/"decision", "prefers"/"preference", "deploy"/"deployment"); "sion" stands
# for the "d" of "decide"/"decision".
_FAMILY_ENDINGS = ("sions", "sion", "ations", "ation", "ions", "ion", "ments", "ment", "ences", "ence", "ances",
                   "ance", "ings", "ing", "ers", "er", "ied", "ies", "ed", "es", "s", "e", "y")
_ROOT = 4  # letters a shared root needs: "bill" of "billed" and "billing", not "ser" of "server" and "service"


def _roots(word: str) -> set[str]:
    """The word, and what is left of it without each family ending it has."""
    w = word.casefold().replace("’", "'").removesuffix("'s")
    out = {w}
    for ending in _FAMILY_ENDINGS:
        if w.endswith(ending) and len(w) - len(ending) >= _ROOT - (1 if ending.startswith("sion") else 0):
            root = w[: -len(ending)] + ("d" if ending.startswith("sion") else "")
            out.add(root[:-1] if len(root) > _ROOT and root[-1] == root[-2] else root)  # "stopped" -> "stop"
    return out


def close_form(word: str, other: str) -> bool:
    """`word` is `other` or a close form of it: case, plural, an inflection ("fixed"/"fix")
    or the same family ("decided"/"decision"). Not a word that only shares its first
    letters ("billed"/"billing" are; "server"/"service" are not)."""
    a, b = word.casefold(), other.casefold()
    return a == b or (a.isalpha() and b.isalpha() and not _roots(a).isdisjoint(_roots(b)))
