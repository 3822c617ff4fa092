"""The rules every model-written field must pass, in one place (used by construct,
boxes and evolve). Each check returns why a field fails, or None: the reason goes to
the step's `problems`, the field to the deterministic method.

General rules, not a list of cases:
- a model sentence says nothing its source does not: each name, number, time, role and
  negation in it is found in the source, 3/4 of its content words too, no negation
  flips, and a prohibition, a reason, a quantity or a name listed with others that the
  source gives is not dropped from what the sentence restates;
- a label (tag, box) names a topic: no digits runs, dates, file names, URLs, paths,
  identifiers, hashes, role names, possessive phrases or lists;
- an evolved context stays about its own note.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from amem_cli.steps._text import content_words, is_stop_or_vague, prefix_len, stem, tokens, word_matches
from amem_cli.text import SENTENCE_BREAK, SPEAKER_LABEL, repeats, without_speakers, words

# A sentence must restate at least this many content words of its note.
MIN_CONTENT_WORDS = 3
# A sentence's content words found in its source, at least (else it is another story).
MIN_GROUNDED_SHARE = 3 / 4

# Who speaks in a transcript, not what it is about.
ROLES = frozenset({"user", "users", "assistant", "system", "human", "ai", "bot", "speaker"})

_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "we", "us", "our", "i'm", "i've", "i'd", "i'll"})
_NEGATIONS = frozenset({"not", "no", "never", "without", "none", "nothing", "nobody", "neither", "nor"})
# A prohibition ("do not order...") is an instruction; "does not order" describes a habit.
# Imperatives open their clause (after a connective: "so do not..."); "must not" and
# "should not" prohibit anywhere.
_IMPERATIVES = ("do not", "never", "avoid")
_CONNECTIVES = ("", "so ", "and ", "but ", "then ", "please ", "therefore ")
_MUSTS = ("must not", "should not")
_REASONS = re.compile(r"\b(?:because|so that|due to|in order to|as a result of)\b", re.IGNORECASE)
# Words that carry a fact like a number does: a sentence may not bring in a time.
_TIME_WORDS = frozenset(
    """second seconds minute minutes hour hours day days week weeks month months year years
    daily weekly monthly yearly annually hourly night nights tonight morning evening afternoon
    weekend weekends today tomorrow yesterday monday tuesday wednesday thursday friday saturday
    sunday january february march april june july august september october november december""".split()
)
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
    if w != "_"
} | {"thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000", "million": "1000000"}
# Content tokens after a negation that it covers, within the clause.
_NEGATION_SCOPE = 2
_CLAUSE_BREAK = re.compile(r"[,;:!?()\[\]\"“”\n]+|\.(?=\s|$)|\s[-–—]\s|\bbut\b", re.IGNORECASE)
_NAME = r"[A-Z][\w'’-]*"
_NAME_LIST = re.compile(rf"\b{_NAME}(?:,\s*{_NAME}){{0,8}},?\s+(?:and|&)\s+{_NAME}")
_QUANTITY = re.compile(r"\d[\d.,:/%-]*")


# -- sentences (contexts) ---------------------------------------------------------------


def thin_sentence(sentence: str) -> str | None:
    """Why `sentence` says too little to be a context: a speaker line, few content words."""
    if SPEAKER_LABEL.match(sentence):
        return "is a speaker's line"
    if len(content_words(without_speakers(sentence))) < MIN_CONTENT_WORDS:
        return f"restates fewer than {MIN_CONTENT_WORDS} content words"
    return None


def unfaithful(sentence: str, source: str) -> str | None:
    """Why `sentence` says something `source` does not, or None. Every name, number, time,
    role word and negation of the sentence must be in the source; a word the source only
    negates must not be asserted (or the reverse); a prohibition or a reason must not be
    dropped from what the sentence restates."""
    speakers = _speaking_of_themselves(source)
    source = without_speakers(source)
    src_words = set(words(source))
    src_numbers = _numbers(source)
    for i, tok in enumerate(tokens(_expand_contractions(sentence))):
        low = tok.casefold()
        if any(ch.isdigit() for ch in tok) or low in _NUMBER_WORDS:
            if _number(tok) not in src_numbers:
                return f"adds the number {tok!r}"
        elif low in _TIME_WORDS or low in ROLES:
            if not _found(low, src_words | speakers):
                return f"adds {tok!r}"
        elif i > 0 and tok[0].isupper() and not is_stop_or_vague(tok) and not all(_found(w, src_words) for w in words(tok)):
            # Not the first word: a sentence's first word is capitalised anyway.
            return f"adds the name {tok!r}"
    dropped = _dropped_number(sentence, source) or _dropped_name(sentence, source)
    if dropped:
        return dropped
    cues = _negation_cues(sentence)
    if cues and not _negation_cues(source):
        return f"adds a negation {sorted(cues)[0]!r}"
    flipped = _flipped(sentence, source)
    if flipped:
        return flipped
    if _prohibits(source) and not _prohibits(sentence) and _restates(sentence, _prohibited(source)):
        return "turns a prohibition into a statement"
    dropped = _dropped_reason(sentence, source)
    if dropped:
        return dropped
    cws = content_words(sentence)
    if sum(1 for w in cws if _found(w, src_words)) < MIN_GROUNDED_SHARE * len(cws):
        return "is mostly not in the note"
    return None


def context_problem(sentence: str, source: str) -> str | None:
    """Why a model's context for a note with text `source` is not kept, or None."""
    return thin_sentence(sentence) or unfaithful(sentence, source) or repeats(sentence, source)


def evolution_problem(sentence: str, own: str, new: str) -> str | None:
    """Why an evolved context of a note whose own text is `own`, proposed in the light of
    a new note `new`, is not kept: it must be faithful to its own note, nearer its own
    text than the new note's, and copy no sentence of the new note."""
    problem = thin_sentence(sentence)
    if problem:
        return problem
    cws = content_words(sentence)
    own_words, new_words = set(words(own)), set(words(new))
    near_own = sum(1 for w in cws if _found(w, own_words))
    near_new = sum(1 for w in cws if _found(w, new_words))
    if near_new > near_own:
        return "is nearer the new note than its own"
    if _copies_a_sentence(sentence, new, own):
        return "copies a sentence of the new note"
    return unfaithful(sentence, own)


def _found(word: str, pool: set[str]) -> bool:
    """`word` is among `pool` (lowercased words) as it is, by stem, or by a long shared
    prefix ("migration"/"migrate"); stricter than `word_matches`, whose four shared
    letters let "server" stand for "service"."""
    w = word.casefold()
    if w in pool:
        return True
    s = stem(w)
    return any(stem(c) == s or (w.isalpha() and c.isalpha() and prefix_len(w, c) >= 6) for c in pool)


def _speaking_of_themselves(text: str) -> set[str]:
    """The speakers of a transcript who say "I" or "we": a sentence may call them by
    their role ("The user prefers..."), not those who speak of others."""
    out: set[str] = set()
    for line in (text or "").splitlines():
        m = SPEAKER_LABEL.match(line)
        if m and _FIRST_PERSON & set(words(line[m.end():])):
            out.add(words(m.group(0))[0])
    return out


def _expand_contractions(text: str) -> str:
    text = re.sub(r"\bcan['’]t\b", "can not", text, flags=re.IGNORECASE)
    text = re.sub(r"\bwon['’]t\b", "will not", text, flags=re.IGNORECASE)
    text = re.sub(r"\bcannot\b", "can not", text, flags=re.IGNORECASE)
    return re.sub(r"(\w)n['’]t\b", r"\1 not", text, flags=re.IGNORECASE)


def _number(token: str) -> str:
    low = token.casefold().replace(",", "")
    return _NUMBER_WORDS.get(low, low)


def _numbers(text: str) -> set[str]:
    return {_number(t) for t in tokens(text) if any(ch.isdigit() for ch in t) or t.casefold() in _NUMBER_WORDS}


def _quantities(text: str) -> set[str]:
    return {n for n in _numbers(text) if _QUANTITY.fullmatch(n) or n.isdigit()}


def _clauses(text: str) -> list[list[str]]:
    """Each clause's tokens, lowercased, contractions expanded."""
    return [
        [t.casefold() for t in tokens(c)] for c in _CLAUSE_BREAK.split(_expand_contractions(text)) if c and c.strip()
    ]


def _negation_cues(text: str) -> set[str]:
    return {t for clause in _clauses(text) for t in clause if t in _NEGATIONS}


def _polarity(text: str) -> tuple[set[str], set[str]]:
    """(stems said, stems negated): the first content tokens after a negation in its
    clause are negated ("do not order Thai", "not half-up", "does not want meetings")."""
    said: set[str] = set()
    negated: set[str] = set()
    for clause in _clauses(text):
        left = 0
        for tok in clause:
            if tok in _NEGATIONS:
                left = _NEGATION_SCOPE
            elif not is_stop_or_vague(tok):
                (negated if left else said).add(stem(tok))
                left -= bool(left)
    return said, negated


def _flipped(sentence: str, source: str) -> str | None:
    s_said, s_neg = _polarity(sentence)
    o_said, o_neg = _polarity(source)
    for st in sorted(s_said & (o_neg - o_said)):
        return f"asserts what the note negates ({st!r})"
    for st in sorted(s_neg & (o_said - o_neg)):
        return f"negates what the note asserts ({st!r})"
    return None


def _prohibition(clause: list[str]) -> bool:
    joined = " ".join(clause) + " "
    return joined.startswith(tuple(c + p + " " for c in _CONNECTIVES for p in _IMPERATIVES)) or any(f" {p} " in " " + joined for p in _MUSTS)


def _prohibits(text: str) -> bool:
    return any(_prohibition(c) for c in _clauses(text))


def _prohibited(text: str) -> list[str]:
    """Content words of the clauses that prohibit something."""
    return [
        t for c in _clauses(text) if _prohibition(c) for t in c if not is_stop_or_vague(t) and t not in _NEGATIONS and t != "avoid"
    ]


def _restates(sentence: str, some_words: Iterable[str]) -> bool:
    pool = set(some_words)
    return bool(pool) and any(_found(w, pool) for w in content_words(sentence))


def _dropped_reason(sentence: str, source: str) -> str | None:
    """A source sentence says why ("X because Y"); the model sentence restates X (two of
    its content words) but keeps neither a reason word nor anything of Y."""
    if _REASONS.search(sentence):
        return None
    for src in SENTENCE_BREAK.split(source):
        m = _REASONS.search(src)
        if not m:
            continue
        claim = set(content_words(src[: m.start()]))
        reason = {w for w in content_words(src[m.end() :]) if not _found(w, claim)}
        cws = content_words(sentence)
        if sum(1 for w in cws if _found(w, claim)) >= 2 and not any(_found(w, reason) for w in cws):
            return f"drops the reason ({m.group(0)!r} ...)"
    return None


def _dropped_number(sentence: str, source: str) -> str | None:
    """A source sentence's quantities belong together (a list, a range, a before and
    after): a sentence that keeps some of them keeps them all. Names with digits
    ("FTS5", "c7g.xlarge") are not quantities."""
    kept = _quantities(sentence)
    for src in SENTENCE_BREAK.split(source):
        numbers = _quantities(src)
        if kept & numbers and numbers - kept:
            return f"drops the number {sorted(numbers - kept)[0]!r} of a sentence it restates"
    return None


def _dropped_name(sentence: str, source: str) -> str | None:
    """Names listed together ("Maria and Tom approved") act together: a sentence that
    names some of them names them all."""
    said = set(words(sentence))
    for m in _NAME_LIST.finditer(source):
        names = [n for n in re.findall(r"[^\W\d_][\w'’-]*", m.group(0)) if n.casefold() != "and" and not is_stop_or_vague(n)]
        named = [n for n in names if _found(n.casefold(), said)]
        if named and len(named) < len(names):
            return f"drops {next(n for n in names if n not in named)!r} of {m.group(0)!r}"
    return None


def _copies_a_sentence(sentence: str, new: str, own: str, n: int = 5) -> bool:
    """`sentence` holds a run of `n` words of `new` that `own` does not have."""
    def grams(text: str) -> set[tuple[str, ...]]:
        w = words(text)
        return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}

    s = words(sentence)
    if len(s) < n:
        return " ".join(s) in " ".join(words(new)) and " ".join(s) not in " ".join(words(own))
    return bool(grams(sentence) & (grams(new) - grams(own)))


# -- labels (tags, boxes) ---------------------------------------------------------------

_LINK_CHARS = re.compile(r"[./\\?=@:_~%]")
_LIST_CHARS = re.compile(r"[,;|]|\s&\s")
_POSSESSIVE = re.compile(r"\w['’]s\b|(?:^|-)s(?:-|$)", re.IGNORECASE)
_DIGIT_RUN = re.compile(r"\d{3,}")
_VOWEL = re.compile(r"[aeiou]", re.IGNORECASE)
# A day or a month is when something happens, not what it is about.
_CALENDAR = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december".split()
)


def junk_label(label: str) -> str | None:
    """Why `label` (a tag or a box name) is no topic, or None."""
    text = str(label).strip()
    if not any(ch.isalpha() for ch in text):
        return "has no letter"
    if _LIST_CHARS.search(text):
        return "is a list of items"
    if _LINK_CHARS.search(text):
        return "is a file name, path, URL or identifier"
    if _DIGIT_RUN.search(text):
        return "holds a number, date or id"
    parts = re.findall(r"[^\W\d_]+", text)
    if any(len(p) >= 7 and not _VOWEL.search(p) for p in re.findall(r"[A-Za-z]+", text)):  # Latin script only
        return "looks like a hash"
    if all(p.casefold() in _CALENDAR for p in parts):
        return "is a date"
    if all(p.casefold() in ROLES for p in parts):
        return "is a speaker's role"
    if _POSSESSIVE.search(text):
        return "is a possessive phrase of one note"
    return None


def topic_labels(labels: Iterable[str], problems: list[str] | None = None, *, what: str = "tag") -> list[str]:
    """`labels` without junk; each dropped one noted in `problems`."""
    out: list[str] = []
    for label in labels:
        why = junk_label(label)
        if why is None:
            out.append(label)
        elif problems is not None:
            problems.append(f"{what} {label!r} dropped: {why}")
    return out


def grounded_in(label: str, text_words: set[str]) -> bool:
    """Every content word of `label` is a word of the text (by stem or shared prefix)."""
    cws = [w for w in words(label) if not is_stop_or_vague(w)]
    return bool(cws) and all(word_matches(w, text_words) for w in cws)
