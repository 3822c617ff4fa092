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

# The roles a chat log names its turns by ("user: ...", "assistant: ..."), by side: the
# person's, and the assistant's (an agent's, a model's).
USER_ROLES = ("user", "human")
ASSISTANT_ROLES = ("assistant", "ai", "bot")
CHAT_ROLES = (*USER_ROLES, *ASSISTANT_ROLES, "system")
_ROLE = re.compile(rf"^({'|'.join(CHAT_ROLES)}):\s", re.IGNORECASE)

# A transcript's speaker label at a line's start ("user: ..."), and where sentences break.
SPEAKER_LABEL = re.compile(rf"^[ \t>*-]*(?:{'|'.join(CHAT_ROLES)})[ \t]*:[ \t]*", re.IGNORECASE | re.MULTILINE)
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")


def words(text: str) -> list[str]:
    """The text's word tokens, lower-cased ("rebase-squash" -> rebase, squash). Lower, not
    casefold: the full-text index folds case the same way ("straße" stays "straße")."""
    return _WORD.findall(text.lower())


def chat_role(text: str) -> str | None:
    """The role a chat log's turn opens with ("user: ...", "Assistant: ..."), as written."""
    m = _ROLE.match(text.lstrip())
    return m.group(1) if m else None


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


# An embedder reads a bounded window (all-MiniLM-L6-v2: 256 word pieces, about 190 words
# of English prose): what lies beyond it is never embedded. A longer text is embedded as
# passages that each fit, at most MAX_PASSAGES of them (about 1,200 words; LongMemEval's
# longest turns hold 2,000). Measured on LongMemEval's turns, passages of 150 words leave
# 0.8% of word pieces beyond a window, against 38% for one vector a text.
PASSAGE_WORDS = 150
MAX_PASSAGES = 8
_PASSAGE_BREAK = re.compile(r"(?<=[.!?:;])\s+|\n+")


def passages(text: str, size: int = PASSAGE_WORDS, most: int = MAX_PASSAGES) -> list[str]:
    """The text cut into passages of at most `size` words, at the ends of sentences and
    lines where it can (a longer sentence is cut at `size` words); the text itself when it
    fits in one. At most `most` passages: the rest of a longer text is left out."""
    if len(text.split()) <= size:
        return [text]
    out: list[list[str]] = []
    current: list[str] = []
    for piece in _PASSAGE_BREAK.split(text):
        said = piece.split()
        while len(current) + len(said) > size:
            if current:
                out.append(current)
                current = []
            else:  # one sentence longer than a passage
                out.append(said[:size])
                said = said[size:]
        current += said
    if current:
        out.append(current)
    return [" ".join(p) for p in out[:most]]


def without_speakers(text: str) -> str:
    """`text` with the speaker labels of a transcript ("user: ...") taken off each line."""
    return SPEAKER_LABEL.sub("", text or "")


def repeats(sentence: str, source: str) -> str | None:
    """Why `sentence` adds nothing to `source`: it is one of its sentences, or nearly (all
    but one of its words in one sentence of the note, in order aside)."""
    said = words(sentence)
    if not said:
        return None
    for part in SENTENCE_BREAK.split(without_speakers(source)):
        own = words(part)
        if said == own or (len(said) >= 4 and sum(w in own for w in said) >= len(said) - 1 and len(own) <= len(said) + 3):
            return "repeats a sentence of the note"
    return None
