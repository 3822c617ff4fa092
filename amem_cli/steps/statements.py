"""A note read for what it states: its sentences and clauses, the values each states
(numbers with their units, dates, clock times, versions, names, states), the subject
words around them, and which clauses change nothing (a question, a supposition, a value
kept). Pure and model-free; `steps.supersede` compares two notes read so."""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache

from amem_cli.steps._text import stem
from amem_cli.text import is_stopword

# A note of at most this many words is read as one sentence (its clauses still apart).
SHORT_NOTE = 30


@dataclass(frozen=True)
class Value:
    kind: str  # number, date, clock, version, name, state
    norm: str  # what is compared
    text: str  # as written
    unit: frozenset[str] = frozenset()  # a number's unit (or the nouns it counts); a state's scales; a place's

    def __str__(self) -> str:
        return self.text


@dataclass
class Clause:
    text: str
    values: list[Value]
    subject: set[str]
    gate: str | None  # why it changes nothing: "asks", "bids", "supposes", "keeps"; None: it may
    part: int = 0  # which sentence of its note it is in


@dataclass
class Sentence:
    text: str
    clauses: list[Clause]
    subject: set[str] = field(default_factory=set)  # content-word stems, values left out
    ids: dict[str, set[str]] = field(default_factory=dict)  # head noun -> identifiers ("release" -> {"4.2"})
    heads: dict[str, str] = field(default_factory=dict)  # noun -> the word naming which one ("service" -> "billing")

    @property
    def values(self) -> list[Value]:
        return [v for c in self.clauses for v in c.values]

    def free_values(self) -> list[Value]:
        """The values of clauses that may change something."""
        return [v for c in self.clauses if c.gate is None for v in c.values]


# -- words ------------------------------------------------------------------------------

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?"
          r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_WEEKDAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?"

_MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "mm": 1e6, "bn": 1e9, "billion": 1e9}
_CURRENCIES = {"$": "usd", "€": "eur", "£": "gbp", "usd": "usd", "dollar": "usd", "dollars": "usd", "bucks": "usd",
               "eur": "eur", "euro": "eur", "euros": "eur", "gbp": "gbp", "pounds": "gbp", "chf": "chf"}
# Units of time in seconds, of size in bytes: "10-minute TTL" and "600 s" are one value.
_DURATIONS = {"ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001, "s": 1, "sec": 1, "secs": 1, "second": 1,
              "seconds": 1, "min": 60, "mins": 60, "minute": 60, "minutes": 60, "h": 3600, "hr": 3600, "hrs": 3600,
              "hour": 3600, "hours": 3600, "day": 86400, "days": 86400, "week": 604800, "weeks": 604800,
              "month": 2629800, "months": 2629800, "year": 31557600, "years": 31557600, "yrs": 31557600}
_TEMPERATURES = {"°c": "°c", "c": "°c", "celsius": "°c", "°f": "°f", "f": "°f", "fahrenheit": "°f"}
_SIZES = {"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}
# A rate ("per month", "a year", "/mo", "annually") is scaled to a year: 4k/month is 48k/year.
_PER_YEAR = {"second": 31557600, "sec": 31557600, "s": 31557600, "minute": 525960, "min": 525960, "hour": 8766,
             "hr": 8766, "h": 8766, "day": 365.25, "week": 52.18, "wk": 52.18, "month": 12, "mo": 12, "year": 1,
             "yr": 1, "annum": 1, "quarter": 4}
_PERIOD_WORDS = {"daily": "day", "weekly": "week", "monthly": "month", "yearly": "year", "annually": "year",
                 "annual": "year", "hourly": "hour", "quarterly": "quarter", "rpm": "minute", "rps": "second",
                 "qps": "second"}
_WORD_NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())} | {"thirty": 30, "forty": 40, "fifty": 50, "dozen": 12}
ORDINALS = {w: i for i, w in enumerate(
    "_ first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split()) if w != "_"}
# Head nouns whose number names the thing rather than a value of it: "release 4.2" and
# "release 4.3" are two releases.
_ID_HEADS = frozenset(
    "release version sprint pr mr issue ticket bug build milestone phase stage round q quarter room flight gate "
    "floor chapter episode season part region zone node shard replica v session attempt step item page run batch "
    "test case table figure option number order invoice unit flat apartment apt seat lot".split())

def root(word: str) -> str:
    """A word's stem, a short word whole but for a plural's s: the shared stemmer makes
    "apply" of "app" and "applying" of "apply"."""
    w = word.casefold()
    if len(w) <= 5:
        return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
    return stem(w)


# Kinds of things that come many of a kind, each told apart by a word before it ("billing
# service", "free tier", "feature flag"): two such with other words are two things.
_KINDS = frozenset(root(w) for w in
    """service tier flag release version team account plan endpoint timeout limit node cluster server database
    repo branch environment job queue bucket project channel office region role policy meeting call review sync
    class course trip party card key token model library package dependency config file test suite report
    dashboard alert pipeline workflow budget contract invoice ticket issue bug child kid son daughter sister brother
    certificate cert
    """.split())

# States on scales: a note moves along one (pending -> done) or flips between its ends.
_SCALES: dict[str, dict[str, str]] = {
    "approval": dict.fromkeys("approved accepted granted greenlit signed okayed cleared".split(), "yes")
    | dict.fromkeys("rejected denied declined refused vetoed rescinded revoked".split(), "no")
    | dict.fromkeys("pending proposed requested submitted".split(), "open"),
    "switch": dict.fromkeys("enabled activated on true".split(), "yes")
    | dict.fromkeys("disabled deactivated off false".split(), "no"),
    "permission": dict.fromkeys("allowed permitted".split(), "yes")
    | dict.fromkeys("banned forbidden prohibited".split(), "no"),
    "obligation": dict.fromkeys("required mandatory compulsory".split(), "yes")
    | dict.fromkeys("optional exempt waived".split(), "no"),
    "progress": dict.fromkeys("planned planning scheduled pending open waiting blocked ongoing "
                              "draft tentative upcoming todo wip".split(), "open")
    | dict.fromkeys("done merged shipped closed resolved fixed completed finished released deployed landed launched "
                    "succeeded arrived accepted approved".split(), "done")
    | dict.fromkeys("cancelled canceled scrapped abandoned postponed paused delayed deferred deferring failed "
                    "reverted off".split(), "off"),
    "attendance": dict.fromkeys("attending coming joining".split(), "yes")
    | dict.fromkeys("skipping".split(), "no"),
    "working": dict.fromkeys("broken down dead".split(), "no") | dict.fromkeys("working fixed".split(), "yes"),
}
_STATE_OF: dict[str, set[tuple[str, str]]] = {}
for _scale, _ends in _SCALES.items():
    for _word, _end in _ends.items():
        _STATE_OF.setdefault(_word, set()).add((_scale, _end))
# Short state words that are also prepositions or adjectives: a state only where one stands.
_LOOSE_STATES = frozenset({"on", "off", "open", "down", "true", "false", "signed", "cleared", "working", "coming",
                           "closed", "planning", "dead", "done"})
_STATE_PHRASES = [
    (re.compile(r"\b(?:in|under) (?:code )?review\b|\bin progress\b|\bon hold\b|\bnot (?:yet )?(?:done|merged|started|decided)\b",
                re.I), "progress", "open"),
    (re.compile(r"\bcalled off\b|\bwon['’]?t happen\b|\bnot happening\b|\bpushed back\b|\bis off\b", re.I), "progress", "off"),
    (re.compile(r"\b(?:turned|switched|flipped) (?:\w+ ){0,3}?off\b", re.I), "switch", "no"),
    (re.compile(r"\b(?:turned|switched|flipped) (?:\w+ ){0,3}?on\b", re.I), "switch", "yes"),
    (re.compile(r"\b(?:can['’]?t|cannot|won['’]?t be able to) (?:make|come|attend|join)\b|\bnot (?:coming|attending|going)\b", re.I),
     "attendance", "no"),
    (re.compile(r"\bnot (?:allowed|permitted)\b", re.I), "permission", "no"),
    (re.compile(r"\bnot (?:approved|accepted|cleared)\b", re.I), "approval", "no"),
    (re.compile(r"\bsign(?:ed|s)? off\b", re.I), "approval", "yes"),
    (re.compile(r"\bnot required\b|\bno longer required\b", re.I), "obligation", "no"),
]
# A clause that keeps a value as it was ("still 7pm", "laptops unaffected").
_KEEPS = re.compile(
    r"\b(?:still|as planned|as scheduled|unchanged|unaffected|not affected|remains?|stays?|staying|same|no change|"
    r"(?:did|has|have|does)(?:n['’]?t| not) changed?|"
    r"as agreed|as before|on track|left (?:at|as)|untouched)\b",
    re.IGNORECASE,
)
# A sentence that supposes ...
_SUPPOSES = re.compile(
    r"\b(?:if|unless|whether|what if|suppose|supposing|in case|hypothetically|should (?:we|i)|shall we|alternatively)\b",
    re.IGNORECASE,
)
# ... and a clause that is only possible, or only meant ("to help reproduce", "gonna").
_POSSIBLE = re.compile(r"\b(?:would|could|might|maybe|perhaps|probably|may be|to help|trying to|try to|want(?:s|ed)? to|"
                       r"need(?:s|ed)? to|plan(?:s|ning)? to|going to|gonna|hop(?:e|ing) to|thinking (?:about|of)|"
                       r"considering|look(?:s|ing)? into|wonder\w*|worth|propos\w*|suggest\w*|debating|tempted|options?)\b|\w['’]d\b",
                       re.IGNORECASE)
# A sentence opening with a verb of change as it is bid ("Replace X", "Set Y"): a request.
_REQUEST = re.compile(  # (an older note's "Set X to 30s" is an agent's report of what it did)
    r"^\W*(?:please\s+)?(?:replace|set|change|switch|move|update|delete|remove|add|make|use|ignore|cancel|stop|rewrite|"
    r"drop|turn|put|bump|raise|lower|increase|reduce|rename|reschedule|postpone)\b(?!\s*:|\s+(?:is|was|are|were)\b)",
    re.IGNORECASE,
)
_REFERENCES = re.compile(r"\[\[[^\]\n]*\]\]|\bhttps?://\S+")
_QUESTION_START = re.compile(
    r"^(?:do|does|did|is|are|was|were|can|could|will|would|should|shall|have|has|had|any|anyone|who|what|when|where|"
    r"which|why|how)\b",
    re.IGNORECASE,
)

# Words every note might use about anything: sharing them is no shared subject.
GENERIC = frozenset(root(w) for w in
    """now new update updated today yesterday tomorrow tonight morning evening afternoon time times thing things just got
    get gets going go went done make made said say says think know see also okay yes yeah lol haha omg guys right
    back moved move change changed switched instead longer anymore still utc cet cest pst pdt est edt gmt ist bst
    week weeks day days month months year years next last first final finally ago actually""".split())
NOT_NAMES = frozenset(
    """i i'm i've i'd i'll ok okay the a an and but so re fyi eod eta asap tbd utc pst pt et cet cest gmt am pm ooo
    mon tue wed thu fri sat sun monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec""".split())

_ABBREVIATION = re.compile(r"\b(?i:dr|mr|mrs|ms|st|vs|incl|approx|e\.g|i\.e|etc|no|jr|sr|prof)\.$"
                           r"|(?<![\w.])[A-Z]\.$")  # "R. Marsh": an initial
_SPEAKER = re.compile(r"^\s*([A-Za-z][\w'-]{0,30})\s*:\s+(?=\S)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[!?])(?=[^\s!?.])|\n+|;\s+")
CLAUSE_END = re.compile(r",\s+|\s+[-–—]+\s+|\s*\(\s*|\s*\)\s*|:\s+|\s+\b(?:but|so|and then|because|since|though|while)\b\s+",
                         re.IGNORECASE)


# -- reading a note ---------------------------------------------------------------------


def speaker(text: str) -> tuple[str | None, str]:
    """(the label of a turn, "Caroline" in "Caroline: ...", lower-cased; the text without it)."""
    m = _SPEAKER.match(text)
    if not m:
        return None, text
    return m.group(1).casefold(), text[m.end():]


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _noun_phrase(text: str, end: int) -> list[str]:
    """The content words right after `end`, up to a function word or a break: what a
    number counts ("7 failing tests" -> failing, tests)."""
    out = []
    for m in re.finditer(r"\s*([^\W\d_][\w'’-]*)|\s*(\S)", text[end:end + 50]):
        word = m.group(1)
        if not word or is_stopword(word) or word.casefold() in _PERIOD_WORDS:
            break
        out.append(word.casefold())
        if len(out) == 3:
            break
    return out


def _measure(word: str) -> tuple[set[str], float] | None:
    """(unit, scale) of a word of measure: "min" is 60 seconds, "°C" degrees Celsius."""
    word = word.casefold().replace(" ", "")
    if word in _CURRENCIES:
        return {_CURRENCIES[word]}, 1.0
    if word in _DURATIONS:
        return {"seconds"}, _DURATIONS[word]
    if word in _SIZES:
        return {"bytes"}, _SIZES[word]
    if word in _TEMPERATURES:
        return {_TEMPERATURES[word]}, 1.0
    return None


# A settings key or a label just before a bare number names what it measures: "bake_minutes
# 35" is a duration, "anneal_temp_c 420" a temperature, "bed 14" a bed.
_LABEL = re.compile(r"(?<![\w-])([^\W\d][\w]*)\s*[:=]?\s*~?$")
LABEL = "="  # marks a unit word that is a label before the number, not a noun it counts


def _label_unit(text: str, start: int) -> tuple[set[str], float]:
    """(unit, scale) a bare number takes from the key or noun just before it: a unit its key
    ends with (`timeout_ms`), else the key's words ("bed", "anneal temp")."""
    m = _LABEL.search(text[:start])
    if not m or is_stopword(m.group(1)) or root(m.group(1)) in GENERIC:
        return set(), 1.0
    parts = [p for p in m.group(1).split("_") if p]
    if len(parts) > 1 and (measured := _measure(parts[-1])):
        return measured
    return {LABEL + root(p) for p in parts if not is_stopword(p)}, 1.0


def _number_unit(text: str, start: int, end: int) -> tuple[frozenset[str], float, bool]:
    """(unit, scale, a rate) of the number at text[start:end]."""
    rest = text[end:end + 40]
    unit: set[str] = set()
    scale, tail = 1.0, rest
    m = re.match(r"[\s-]*(°\s*[CF]\b|[A-Za-z€$£]+)", rest)
    if m and (measured := _measure(m.group(1))):
        (unit, scale), tail = measured, rest[m.end():]
    elif counted := _noun_phrase(text, end):
        unit = {root(w) for w in counted}
        tail = rest[rest.casefold().find(counted[0]) + len(counted[0]):]
    else:
        unit, scale = _label_unit(text, start)
    per = re.match(r"\s*(?:/|per\s+|an?\s+|each\s+|every\s+)([a-z]+)", tail, re.IGNORECASE)
    rate = bool(per and per.group(1).casefold().rstrip("s") in _PER_YEAR)
    if rate:
        scale *= _PER_YEAR[per.group(1).casefold().rstrip("s")]
    else:
        near = {w.casefold() for w in re.findall(r"[a-z]+", text[max(0, start - 25):end + 25], re.IGNORECASE)}
        if periods := [p for w, p in _PERIOD_WORDS.items() if w in near]:
            rate, scale = True, scale * _PER_YEAR[periods[0]]
    return frozenset(unit | ({"/year"} if rate else set())), scale, rate


class _Spans:
    """The parts of a clause already read as a value, so no part is read twice."""

    def __init__(self) -> None:
        self.taken: list[tuple[int, int]] = []

    def free(self, a: int, b: int) -> bool:
        return all(b <= x or a >= y for x, y in self.taken)

    def take(self, a: int, b: int) -> None:
        self.taken.append((a, b))


_DATE = re.compile(
    rf"\b(?:(?P<md_m>{_MONTH})\s+(?P<md_d>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"|(?P<dm_d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dm_m>{_MONTH})(?![a-z])"
    rf"|(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})"
    rf"|the\s+(?P<nth>\d{{1,2}})(?:st|nd|rd|th)\b"
    rf"|(?P<wd>{_WEEKDAY})\b"
    rf"|(?P<mo>{_MONTH})(?![a-z]))",
    re.IGNORECASE,
)
_CLOCK = re.compile(
    r"\b(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>[ap]\.?m\.?)(?![a-z])|\b(?P<h24>\d{1,2}):(?P<m24>\d{2})\b(?!:)"
    r"|\b(?P<word>noon|midnight)\b",
    re.IGNORECASE,
)
# A bare hour after a word of time ("at 6", "by 9 tomorrow"), not a count ("at 6 sites"),
# nor an amount ("down by 2").
_HOUR = re.compile(r"\b(?P<word>at|by|until|till|til|before|after|around)\s+(?P<h>\d{1,2})(?![.,:]\d)(?:\s*o['’]?clock)?"
                   r"(?=\s*(?:$|[,.;!?)]|sharp\b|(?:today|tomorrow|tonight|on|in|every|each|and|then|for)\b))",
                   re.IGNORECASE)
_VERSION = re.compile(r"(?<![\w.])v?(?P<v>\d+(?:\.\d+){1,3})(?![\w.]*\d)|(?<![\w.])v(?P<major>\d+)\b", re.IGNORECASE)
_NUMBER = re.compile(
    r"(?<![\w.#/-])(?P<cur>[$€£])?~?(?P<n>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?P<mult>k|mm|m|bn)?(?![a-z0-9])"
    r"|(?<![\w.#/-])(?P<cur2>[$€£])?~?(?P<n2>\d+(?:\.\d+)?)(?=[a-z])"
    r"|(?<![\w.#/-])(?P<n3>\d+(?:\.\d+)?)\s+(?P<mult3>thousand|million|billion)\b",
    re.IGNORECASE,
)


def _dates(text: str, spans: _Spans) -> list[Value]:
    out = []
    for m in _DATE.finditer(text):
        if not spans.free(*m.span()):
            continue
        g, norm = m.groupdict(), None
        if g["iso"]:
            norm = g["iso"][5:]
        elif g["md_m"] or g["dm_m"]:
            day = int(g["md_d"] or g["dm_d"])
            if 1 <= day <= 31:
                norm = f"{_MONTHS.index((g['md_m'] or g['dm_m'])[:3].casefold()) + 1:02d}-{day:02d}"
        elif g["nth"]:
            norm = f"day {int(g['nth'])}"
        elif g["wd"]:
            norm = f"weekday {_WEEKDAYS.index(g['wd'][:3].casefold())}"
        elif g["mo"] and g["mo"].casefold() != "may" and (g["mo"][0].isupper() or len(g["mo"]) > 4):
            norm = f"{_MONTHS.index(g['mo'][:3].casefold()) + 1:02d}"
        if norm:
            spans.take(*m.span())
            out.append(Value("date", norm, m.group(0).strip()))
    return out


def _clocks(text: str, spans: _Spans) -> list[Value]:
    out = []
    for m in _CLOCK.finditer(text):
        if not spans.free(*m.span()):
            continue
        spans.take(*m.span())
        if m.group("word"):
            minutes = 720 if m.group("word").casefold() == "noon" else 0
        elif m.group("ap"):
            minutes = (int(m.group("h")) % 12 + (12 if m.group("ap")[0].casefold() == "p" else 0)) * 60 + int(m.group("m") or 0)
        elif int(m.group("h24")) > 23:  # a duration, a run's 28:40
            out.append(Value("number", _fmt(int(m.group("h24")) * 60 + int(m.group("m24"))), m.group(0),
                             frozenset({"duration"})))
            continue
        else:
            minutes = int(m.group("h24")) * 60 + int(m.group("m24"))
        out.append(Value("clock", f"{minutes // 60:02d}:{minutes % 60:02d}", m.group(0)))
    for m in _HOUR.finditer(text):  # "starts at 6": an hour of the clock, morning or evening
        if m.group("word").casefold() == "by" and re.search(r"(?:ed|down|up|off|out)\s+$", text[:m.start()], re.I):
            continue  # "cut by 2", "down by 2": an amount
        if spans.free(*m.span("h")) and int(m.group("h")) <= 12:
            spans.take(*m.span("h"))
            out.append(Value("clock", f"~{int(m.group('h')) % 12:02d}:00", m.group("h")))
    return out


def _numbers(text: str, spans: _Spans) -> list[Value]:
    out = []
    for m in _VERSION.finditer(text):
        if spans.free(*m.span()):
            spans.take(*m.span())
            out.append(Value("version", m.group("v") or m.group("major"), m.group(0)))
    for m in _NUMBER.finditer(text):
        if not spans.free(*m.span()) or re.match(r"(?:st|nd|rd|th)\b", text[m.end():], re.IGNORECASE):
            continue  # "5th": a place, read with the word before it below ("my 5th project")
        if re.match(r"[.)]\s", text[m.end():]) and not text[:m.start()].strip(" (#*-"):
            continue  # "1. ...", "(2) ...": a list's numbering
        raw = m.group("n") or m.group("n2") or m.group("n3")
        if re.fullmatch(r"(?:19|20)\d\d", raw) and not (m.group("cur") or m.group("cur2")):
            spans.take(*m.span())
            out.append(Value("date", raw, raw))  # a year
            continue
        x = float(raw.replace(",", "")) * _MULTIPLIERS.get((m.group("mult") or m.group("mult3") or "").casefold(), 1)
        if text[m.end():m.end() + 1] == "%" or re.match(r"\s*(?:percent|pct)\b", text[m.end():]):
            unit, scale = frozenset({"%"}), 1.0
        else:
            unit, scale, _ = _number_unit(text, m.start(), m.end())
        if cur := m.group("cur") or m.group("cur2"):
            unit = frozenset({_CURRENCIES[cur]} | ({"/year"} & unit))
        spans.take(*m.span())
        out.append(Value("number", _fmt(x * scale), m.group(0).strip(), unit))
    for m in re.finditer(r"(?=\b(\w+)\s+(\w+)\b)", text):
        first, second = m.group(1).casefold(), m.group(2).casefold()
        if not spans.free(m.start(2), m.end(2)):
            continue
        if second in _WORD_NUMBERS and second not in ("one", "zero") and first not in ("the", "of", "those", "these"):
            unit, scale, _ = _number_unit(text, m.start(2), m.end(2))
            if unit - {"/year"}:
                out.append(Value("number", _fmt(_WORD_NUMBERS[second] * scale), m.group(2), unit))
        elif first in ("my", "our", "her", "his", "their", "a") and is_ordinal(second):
            # "my fourth Korean place", "a third cat": their count is now that number
            count = ORDINALS.get(second) or int(re.match(r"\d+", second).group(0))
            out.append(Value("number", _fmt(count), m.group(2), frozenset(root(w) for w in _noun_phrase(text, m.end(2)))))
        else:
            continue
        spans.take(m.start(2), m.end(2))
    return out


def is_ordinal(word: str) -> bool:
    """"fourth", "5th": a place in a count."""
    return word.casefold() in ORDINALS or bool(re.fullmatch(r"\d+(?:st|nd|rd|th)", word, re.IGNORECASE))


def _states(text: str, spans: _Spans) -> list[Value]:
    out = []
    for pattern, scale, end in _STATE_PHRASES:
        for m in pattern.finditer(text):
            if spans.free(*m.span()):
                spans.take(*m.span())
                out.append(Value("state", end, m.group(0), frozenset({f"{scale}:{end}"})))
    for m in re.finditer(r"\b[\w'’]+\b", text):
        word = m.group(0).casefold()
        readings = _STATE_OF.get(word)
        if not readings or not spans.free(*m.span()) or (word in _LOOSE_STATES and not _stands_alone(text, m)):
            continue
        spans.take(*m.span())
        negated = bool(re.search(r"\b(?:not|n['’]t|never|no longer)\s+(?:\w+\s+)?$", text[:m.start()], re.IGNORECASE))
        if negated:  # "not approved": the other end
            readings = {(s, {"yes": "no", "no": "yes"}.get(e, e)) for s, e in readings}
        out.append(Value("state", "|".join(sorted(f"{s}:{e}" for s, e in readings)), m.group(0),
                         frozenset(f"{s}:{e}" for s, e in readings)))
    return out


def _stands_alone(text: str, m: re.Match) -> bool:
    """A word that may be a preposition ("on", "off") is a state where it ends its phrase or
    follows "is", "now", "=" or ":"."""
    before = text[:m.start()]
    if m.group(0).casefold() in ("down", "off", "on", "open") and re.match(r"\s+(?:to|from|by)\b", text[m.end():], re.I):
        return False  # "down to 7", "off by one"
    if re.match(r"\s+(?:the\b|[A-Z0-9])", text[m.end():]):
        return False  # "on Wednesdays", "on the 5th", "on Slack": where or when, no state
    return (not re.match(r"\s*[A-Za-z0-9]", text[m.end():m.end() + 3])
            or bool(re.search(r"(?:\bis|\bare|\bwas|\bnow|\bbe|\bgot|\bto|=|:)\s*$", before, re.IGNORECASE)))


def _names(text: str, spans: _Spans, known: set[str]) -> list[Value]:
    """Capitalised words (people, places, vendors, tools); a clause's first word only when
    it is capitalised elsewhere in the notes compared, or has a capital inside."""
    out = []
    for m in re.finditer(r"(?<![\w'’])[A-Z][\w'’&.+-]*(?:\s+(?:of\s+|&\s+)?[A-Z][\w'’&.+-]*)*", text):
        if not spans.free(*m.span()):
            continue
        written = [re.sub(r"['’]s$", "", w.strip(".,+-")) for w in m.group(0).split()]
        words = [w for w in written if w and w.casefold() not in NOT_NAMES and (not is_stopword(w) or w == "&")]
        if words and m.start() == len(text) - len(text.lstrip()) and words[0] == written[0]:
            if words[0].casefold() not in known and not re.search(r"[A-Z0-9]", words[0][1:]):
                words = words[1:]
        # an initial ("J.", "R. Marsh") says no one for sure: the surname is the name
        name = " ".join(w for w in words if len(w.strip(".")) > 1).strip(" &")
        if name and not name.isdigit():
            where = _PLACE_BEFORE.search(text[:m.start()])
            out.append(Value("name", name.casefold(), name, frozenset({"place"} if where else ())))
    return out


# A name after these is where or through what something happens ("in Zoom", "at Nonna"), not
# who holds a role: a place is no rival of a person (the name's unit says which it is).
_PLACE_BEFORE = re.compile(r"\b(?:in|at|on|via|through|inside)\s+(?:the\s+)?$", re.IGNORECASE)


def _capitalised_inside(text: str) -> set[str]:
    """Words written with a capital that do not open a sentence or a clause."""
    found = re.findall(r"(?<=[a-z0-9,:'’\")] )[A-Z][\w'’&-]*", text)
    return {re.sub(r"['’]s$", "", w).casefold() for w in found}


def stems(text: str) -> set[str]:
    return {root(w) for w in re.findall(r"[^\W\d_][^\W_]*", text.casefold().replace("’", "'"))
            if len(w) > 1 and not is_stopword(w)} - GENERIC


def _subject(text: str, values: list[Value]) -> set[str]:
    """The content-word stems of a text, its values and units of measure left out (not
    names and states: "the adoption agency" and "adopted a dog" speak of one thing)."""
    for v in values:
        if v.kind not in ("name", "state"):
            text = text.replace(v.text, " ")
    return stems(text) - _MEASURES


# Units say how a value is measured, not what it is about: "40GB free" and "16GB of RAM".
_MEASURES = frozenset(root(w) for w in [*_CURRENCIES, *_DURATIONS, *_SIZES, *_TEMPERATURES, *_PER_YEAR, *_PERIOD_WORDS]
                      if w.isalpha())


def identifiers(text: str) -> dict[str, set[str]]:
    """Head noun -> the identifiers the text gives things of that kind ("release 4.2", "unit
    4B"; "#301" and "PR #301" are also under "#"; a code, "BA117", "INV-0118", under its letters;
    a key written with underscores, "dark_mode", under "_")."""
    out: dict[str, set[str]] = {}
    for key in re.findall(r"(?<![\w.])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b", text):
        out.setdefault("_", set()).add(key.casefold())  # a settings key or flag: dark_mode, ACCESS_TOKEN_TTL
    for m in re.finditer(r"\b([A-Za-z]+)([\s-]*)(#?)(\d+(?:\.\d+)*[A-Za-z]?)\b|#(\d+)\b", text):
        if m.group(5):
            out.setdefault("#", set()).add(m.group(5))
            continue
        head, ident = m.group(1).casefold(), m.group(4).casefold()
        head = head[:-1] if head.endswith("s") and head[:-1] in _ID_HEADS else head
        if head in _ID_HEADS or _CODE.fullmatch(m.group(0)):
            out.setdefault(head, set()).add(ident)
        if m.group(3):
            out.setdefault("#", set()).add(ident)
    return out


# Capitals glued to three digits or more name one thing (a flight, an invoice, a ticket),
# not a version of it ("GPT-4", "S3" are no codes).
_CODE = re.compile(r"[A-Z]{2,}-?\d{3,}")


def _heads(text: str) -> dict[str, str]:
    """Each kind of thing (`_KINDS`) and the word just before it that says which one it is
    ("billing service" -> {"servic": "bill"}; underscores split: "statement_timeout")."""
    out = {}
    for m in re.finditer(r"(?=(?<![\w-])([^\W\d_][^\W_]*)[ _]([^\W\d_][^\W_]*)\b)", text.casefold()):
        which, kind = m.group(1), root(m.group(2))
        if kind in _KINDS and not is_stopword(which) and root(which) not in _KINDS | GENERIC:
            out[kind] = root(which)
    return out


@lru_cache(maxsize=4096)  # a note is compared with several, and an older note again and again
def read(text: str) -> tuple[str | None, tuple[Sentence, ...]]:
    """(the speaker, the note's sentences: their clauses, values, subject, identifiers).
    Read only: the result is shared."""
    who, body = speaker(text)
    body = _REFERENCES.sub(" ", body)  # a link's id or a URL states no value
    known = _capitalised_inside(body)
    pieces: list[str] = []
    for piece in (s.strip() for s in _SENTENCE_END.split(body)):
        if pieces and _ABBREVIATION.search(pieces[-1]):
            pieces[-1] += " " + piece  # "Dr. Alvarez" is one sentence
        elif piece:
            pieces.append(piece)
    # A short note is one thought: "NEW PB!!! 27:55 at the park run" compares as a whole.
    units = [pieces] if len(body.split()) <= SHORT_NOTE else [[p] for p in pieces]
    out = []
    for unit in units:
        sentence = Sentence(" ".join(unit), [c for s in unit for c in _clauses(s, known, pieces.index(s))])
        sentence.subject = set().union(*(c.subject for c in sentence.clauses))
        sentence.ids, sentence.heads = identifiers(sentence.text), _heads(sentence.text)
        out.append(sentence)
    return who, tuple(out)


_KEY_VALUE = re.compile(r"\b([A-Za-z]\w*_\w+)\s*:\s+(?=[~$€£]?\d)")


# A name spoken to is no value: after a greeting or thanks ("Hey John!", "Thanks, Caroline"),
# or set off at the end of a sentence that speaks to "you" ("I'm sure you're wrong, John.").
_GREETING = re.compile(r"(?:^|[.!?]\s+)\W*(?:hey|hi|hello|thanks|thank you|bye|goodbye|cheers|congrats|"
                       r"congratulations|sorry|dear|yo|oh|wow|sure|yes|yeah|no|nope|ok|okay|well|aw|ah)"
                       r"[,!.]?\s+([A-Z][\w'’-]*)", re.IGNORECASE)
_CALLED = re.compile(r",\s*([A-Z][\w'’-]*)\s*[.!?]*$")
_YOU = re.compile(r"\b(?:you|your|you're|you’re|you've|you’ve)\b", re.IGNORECASE)


def _addressed(sentence: str) -> set[str]:
    """The names a sentence speaks to, lower-cased."""
    names = {m.group(1) for m in _GREETING.finditer(sentence)}
    if _YOU.search(sentence) and (m := _CALLED.search(sentence)):
        names.add(m.group(1))
    return {n.casefold() for n in names if n[:1].isupper()}


def _clauses(sentence: str, known: set[str], part: int) -> list[Clause]:
    asks = bool(_QUESTION_START.match(sentence) and sentence.endswith("?"))
    bids = bool(_REQUEST.match(sentence))  # "Replace each note's context...": a request, in a newer note

    supposes = bool(_SUPPOSES.search(sentence))
    addressed = _addressed(sentence)
    out = []
    sentence = _KEY_VALUE.sub(r"\1 ", sentence)  # "anneal_hours: 2" is one clause: the key names the value
    for c in (c.strip() for c in CLAUSE_END.split(sentence)):
        if not c:
            continue
        spans = _Spans()
        values = _dates(c, spans) + _clocks(c, spans) + _numbers(c, spans) + _states(c, spans)
        values += [v for v in _names(c, spans, known) if v.norm not in addressed]
        gate = ("asks" if asks or c.endswith("?") or _QUESTION_START.match(c) and "?" in sentence
                else "bids" if bids else "supposes" if supposes or _POSSIBLE.search(c) else "keeps" if _KEEPS.search(c)
                else None)
        out.append(Clause(c, values, _subject(c, values), gate, part))
    return out

# Two stems are of one word when they are equal, or both of this many letters at least and
# one begins the other ("adopt"/"adoption").
_PREFIX = 5


def overlap(a: set[str], b: set[str]) -> set[str]:
    """The stems of `a` of one word with a stem of `b`: equal, or one beginning the other
    with both of `_PREFIX` letters at least. (Looked up, not compared pair by pair: a
    longer stem of `b` that `x` begins sorts right at or after `x`; a shorter one that
    begins `x` is one of `x`'s prefixes.)"""
    shared = set(a).intersection(b)
    rest = [x for x in a if len(x) >= _PREFIX and x not in shared]
    if rest:
        longer = sorted(y for y in b if len(y) >= _PREFIX)
        for x in rest:
            at = bisect_left(longer, x)
            if (at < len(longer) and longer[at].startswith(x)
                    or any(x[:n] in b for n in range(_PREFIX, len(x)))):
                shared.add(x)
    return shared
