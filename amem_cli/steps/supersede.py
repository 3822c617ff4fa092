"""Does a newer note change a value an older one states? Pure and model-free.

`judge(new, old)` answers `supersedes` (link them: the older note is no longer current),
`unsure` (a value seems to have changed, but no word of the newer note says so: listed by
`amem supersede --suggest` for a person or an agent to confirm) or `no`, with the reason:
which value changed, or why not.

A wrong supersession hides a true fact, so precision comes first. General rules, each a
reading of ordinary language, not a list of cases:

- The newer note is read a sentence and a clause at a time. A question, a sentence that
  supposes ("if we moved", "would it be worth"), and a clause that keeps a value ("still
  7pm", "laptops unaffected") change nothing; a value said again is not changed.
- Notes about another thing are not compared: another release ("release 4.2"/"4.3"),
  another of a kind ("billing service"/"notifications service"), another person speaking
  of themselves.
- A value is a number with its unit (a rate a month and a year compare), a date, a clock
  time, a version, a name, or a state (approved/rejected, on/off, pending/done). Two values
  conflict when they are of one kind and unit, differ once normalised ("1k" is 1000,
  "3:30am" is 03:30), and their sentences share a subject word (or a value).
- A conflict is a supersession when the newer sentence says a change happened: a change
  word ("moved", "switched", "now", "new", "pushed", "bumped"), the older value denied ("not
  April 15", "from 48k to 52k"), or the state moved on (pending -> done, on -> off). A
  conflict without such a word is `unsure`.
- Some changes need no typed value: "X instead of Y", "switched from Y", "gave up on Y",
  "Y is cancelled", "went with X" after a plan of something else, or a thing the older
  note denies now asserted ("no pre-commit hooks" -> "installed pre-commit").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from amem_cli.steps._text import stem
from amem_cli.text import is_stopword

SUPERSEDES, UNSURE, NO = "supersedes", "unsure", "no"
# A note of at most this many words is read as one sentence (its clauses still apart).
SHORT_NOTE = 30


@dataclass(frozen=True)
class Verdict:
    decision: str  # SUPERSEDES, UNSURE or NO
    reason: str  # the value that changed ("date: April 15 -> April 10"), or why not

    def to_dict(self) -> dict[str, str]:
        return {"decision": self.decision, "reason": self.reason}


@dataclass(frozen=True)
class Value:
    kind: str  # number, date, clock, version, name, state
    norm: str  # what is compared
    text: str  # as written
    unit: frozenset[str] = frozenset()  # a number's unit (or the nouns it counts); a state's scales

    def __str__(self) -> str:
        return self.text


@dataclass
class Clause:
    text: str
    values: list[Value]
    subject: set[str]
    gate: str | None  # why it changes nothing: "asks", "supposes", "keeps"; None: it may
    part: int = 0  # which sentence of its note it is in


@dataclass
class Sentence:
    text: str
    clauses: list[Clause]
    subject: set[str] = field(default_factory=set)  # content-word stems, values left out
    ids: dict[str, str] = field(default_factory=dict)  # head noun -> identifier ("release" -> "4.2")
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
_ORDINALS = {w: i for i, w in enumerate(
    "_ first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split()) if w != "_"}
# Head nouns whose number names the thing rather than a value of it: "release 4.2" and
# "release 4.3" are two releases.
_ID_HEADS = frozenset(
    "release version sprint pr mr issue ticket bug build milestone phase stage round q quarter room flight gate "
    "floor chapter episode season part region zone node shard replica v".split())

def _root(word: str) -> str:
    """A word's stem, a short word whole but for a plural's s: the shared stemmer makes
    "apply" of "app" and "applying" of "apply"."""
    w = word.casefold()
    if len(w) <= 5:
        return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
    return stem(w)


# Kinds of things that come many of a kind, each told apart by a word before it ("billing
# service", "free tier", "feature flag"): two such with other words are two things.
_KINDS = frozenset(_root(w) for w in
    """service tier flag release version team account plan endpoint timeout limit node cluster server database
    repo branch environment job queue bucket project channel office region role policy meeting call review sync
    class course trip party card key token model library package dependency config file test suite report
    dashboard alert pipeline workflow budget contract invoice ticket issue bug child kid son daughter sister brother
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
# Moves along a scale after which the older state no longer holds.
_MOVES = {("open", "done"), ("open", "off"), ("open", "yes"), ("open", "no"), ("yes", "no"), ("no", "yes"),
          ("done", "off"), ("off", "done"), ("off", "open"), ("done", "open")}

# Words that say a value changed: general English for a change.
_CHANGE = re.compile(
    r"\b(?:instead|rather than|no longer|any ?more|replac\w*|switch\w*|swapp?\w*|mov(?:e|ed|es|ing)|relocat\w*|"
    r"chang\w*|updat\w*|correct(?:ion|ed)|actually|scratch that|turns out|revis\w*|revert\w*|roll\w* back|"
    r"cancel\w*|called off|scrapp\w*|postpon\w*|push\w*|delay\w*|slipp?\w*|reschedul\w*|rebook\w*|renew\w*|"
    r"bump\w*|rais(?:e|ed|ing)|lower(?:ed|ing)|increas\w*|decreas\w*|reduc\w*|cut|extend\w*|shorten\w*|lift\w*|"
    r"flipp?\w*|transferr?\w*|handed|hand(?:ing)? (?:over|off)|took over|taking over|promot\w*|upgrad\w*|downgrad\w*|"
    r"migrat\w*|went with|go(?:ing)? with|decid\w*|decision|ended up|in the end|after all|final(?:ly)?|"
    r"now|new|newly|latest|down to|up to|from now on|going forward|starting (?=(?:from |on )?(?:next|tomorrow|today|\d|(?-i:[A-Z])))|as of|effective|"
    r"left|quit|resign\w*|joined|dropp\w*|ditch\w*|abandon\w*|revers\w*|overturn\w*|rescind\w*|revok\w*|"
    r"was|were|used to|previously|formerly|originally|initially|no more)\b"
    r"|->|→|=>",
    re.IGNORECASE,
)
# "now" as "at present" (not "from now on", which is a change): says nothing changed.
_NOW_AT_PRESENT = re.compile(r"\b(?:for now|right now|now that|by now|until now|just now|as of now)\b", re.IGNORECASE)
# Verbs that end what the older note states (its subject is in their clause).
_ENDING = re.compile(
    r"(?<![\w-])(?:cancel\w*|called off|scrapp\w*|postpon\w*|defer\w*|pushed back|delay\w*|rescind\w*|revok\w*|lift(?:ed|ing)|"
    r"quit|resign\w*|handed in|gave up|giving up|stopp\w*|trad\w* (?:\w+ )?in|sold|discontinu\w*|terminat\w*|not renewed|closed|"
    r"withdr[ae]w\w*|expired|retired|removed|deleted|ended)(?![\w-])",
    re.IGNORECASE,
)
# "Y" after these is what is no longer so.
_LEFT_BEHIND = re.compile(
    r"(?<![\w-])(?:instead of|rather than|(?:switch|mov|migrat|chang)\w* (?:\w+ )?(?:away )?from|replac\w*|no longer(?: \w+)?|"
    r"(?:dropp|ditch|scrapp|abandon)\w*|gave up(?: on)?|giving up(?: on)?|quit|"
    r"not \w+ (?:any ?more|anymore)|from|over)\s+(?:the |our |my |a |an |to )?([\w'’.+-]+(?:\s+[\w'’.+-]+)?)",
    re.IGNORECASE,
)
# "X" after these is what was chosen in the end.
_CHOSEN = re.compile(
    r"\b(?:went with|going with|go with|ended up (?:with|getting|going with|choosing|picking|buying|using)?|chose|"
    r"picked|settled on|decided on|opted for|(?:switch|mov|migrat|chang)\w* (?:\w+ ){0,3}?to|is now|are now)\s+"
    r"(?:the |our |my |a |an )?([\w'’.+-]+(?:\s+[\w'’.+-]+)?)",
    re.IGNORECASE,
)
# A clause that keeps a value as it was ("still 7pm", "laptops unaffected").
_KEEPS = re.compile(
    r"\b(?:still|as planned|as scheduled|unchanged|unaffected|not affected|remains?|stays?|staying|same|no change|"
    r"(?:did|has|have|does)(?:n['’]?t| not) changed?|"
    r"as agreed|as before|on track|left (?:at|as)|untouched)\b",
    re.IGNORECASE,
)
# A sentence that supposes ...
_SUPPOSES = re.compile(
    r"\b(?:if|unless|whether|what if|suppose|supposing|in case|hypothetically|thinking (?:about|of)|considering|"
    r"wonder\w*|worth|propos\w*|suggest\w*|should (?:we|i)|shall we|debating|tempted|options?|alternatively)\b",
    re.IGNORECASE,
)
# ... and a clause that is only possible, or only meant ("to help reproduce", "gonna").
_POSSIBLE = re.compile(r"\b(?:would|could|might|maybe|perhaps|probably|may be|to help|trying to|try to|want(?:s|ed)? to|"
                       r"need(?:s|ed)? to|plan(?:s|ning)? to|going to|gonna|hop(?:e|ing) to)\b|\w['’]d\b", re.IGNORECASE)
_QUESTION_START = re.compile(
    r"^(?:do|does|did|is|are|was|were|can|could|will|would|should|shall|have|has|had|any|anyone|who|what|when|where|"
    r"which|why|how)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|n['’]t|dont|didnt|doesnt|isnt|wasnt|cant)\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i’m|im|my|me|mine|we|we're|our|us)\b", re.IGNORECASE)
_ROLES = frozenset({"user", "assistant", "agent", "system", "human", "ai", "bot"})

# Words every note might use about anything: sharing them is no shared subject.
_GENERIC = frozenset(_root(w) for w in
    """now new update updated today yesterday tomorrow tonight morning evening afternoon time times thing things just got
    get gets going go went done make made said say says think know see also okay yes yeah lol haha omg guys right
    back moved move change changed switched instead longer anymore still utc cet cest pst pdt est edt gmt ist bst
    week weeks day days month months year years next last first final finally ago""".split())
_NOT_NAMES = frozenset(
    """i i'm i've i'd i'll ok okay the a an and but so re fyi eod eta asap tbd utc pst pt et cet cest gmt am pm ooo
    mon tue wed thu fri sat sun monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec""".split())

_ABBREVIATION = re.compile(r"\b(?:dr|mr|mrs|ms|st|vs|incl|approx|e\.g|i\.e|etc|no|jr|sr|prof)\.$", re.IGNORECASE)
_SPEAKER = re.compile(r"^\s*([A-Za-z][\w'-]{0,30})\s*:\s+(?=\S)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[!?])(?=[^\s!?.])|\n+|;\s+")
_CLAUSE_END = re.compile(r",\s+|\s+[-–—]+\s+|\s*\(\s*|\s*\)\s*|:\s+|\s+\b(?:but|so|and then|because|since|though|while)\b\s+",
                         re.IGNORECASE)


# -- reading a note ---------------------------------------------------------------------


def _speaker(text: str) -> tuple[str | None, str]:
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


def _number_unit(text: str, start: int, end: int) -> tuple[frozenset[str], float, bool]:
    """(unit, scale, a rate) of the number at text[start:end]."""
    rest = text[end:end + 40]
    unit: set[str] = set()
    scale, tail = 1.0, rest
    m = re.match(r"[\s-]*([A-Za-z€$£]+)", rest)
    word = m.group(1).casefold() if m else ""
    if word in _CURRENCIES:
        unit, tail = {_CURRENCIES[word]}, rest[m.end():]
    elif word in _DURATIONS:
        unit, scale, tail = {"seconds"}, _DURATIONS[word], rest[m.end():]
    elif word in _SIZES:
        unit, scale, tail = {"bytes"}, _SIZES[word], rest[m.end():]
    elif counted := _noun_phrase(text, end):
        unit = {_root(w) for w in counted}
        tail = rest[rest.casefold().find(counted[0]) + len(counted[0]):]
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
    return out


def _numbers(text: str, spans: _Spans) -> list[Value]:
    out = []
    for m in _VERSION.finditer(text):
        if spans.free(*m.span()):
            spans.take(*m.span())
            out.append(Value("version", m.group("v") or m.group("major"), m.group(0)))
    for m in _NUMBER.finditer(text):
        if not spans.free(*m.span()):
            continue
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
        elif first in ("my", "our", "her", "his", "their", "a") and second in _ORDINALS:
            # "my fourth Korean place", "a third cat": their count is now that number
            out.append(Value("number", _fmt(_ORDINALS[second]), m.group(2), frozenset(_root(w) for w in _noun_phrase(text, m.end(2)))))
        else:
            continue
        spans.take(m.start(2), m.end(2))
    return out


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
        words = [w for w in written if w and w.casefold() not in _NOT_NAMES and (not is_stopword(w) or w == "&")]
        if words and m.start() == len(text) - len(text.lstrip()) and words[0] == written[0]:
            if words[0].casefold() not in known and not re.search(r"[A-Z0-9]", words[0][1:]):
                words = words[1:]
        name = " ".join(words).strip(" &")
        if name and not name.isdigit():
            out.append(Value("name", name.casefold(), name))
    return out


def _capitalised_inside(text: str) -> set[str]:
    """Words written with a capital that do not open a sentence or a clause."""
    found = re.findall(r"(?<=[a-z0-9,:'’\")] )[A-Z][\w'’&-]*", text)
    return {re.sub(r"['’]s$", "", w).casefold() for w in found}


def _stems(text: str) -> set[str]:
    return {_root(w) for w in re.findall(r"[^\W\d_][^\W_]*", text.casefold().replace("’", "'"))
            if len(w) > 1 and not is_stopword(w)} - _GENERIC


def _subject(text: str, values: list[Value]) -> set[str]:
    """The content-word stems of a text, its values left out (not names and states: "the
    adoption agency" and "adopted a dog" speak of one thing)."""
    for v in values:
        if v.kind not in ("name", "state"):
            text = text.replace(v.text, " ")
    return _stems(text)


def _ids(text: str) -> dict[str, str]:
    out = {}
    for m in re.finditer(r"\b([A-Za-z]+)[\s#-]*#?(\d+(?:\.\d+)*)\b|#(\d+)\b|\b([A-Za-z]+)(\d+)\b", text):
        if m.group(3):
            out["#"] = m.group(3)
            continue
        head, ident = (m.group(1) or m.group(4)).casefold(), m.group(2) or m.group(5)
        head = head[:-1] if head.endswith("s") and head[:-1] in _ID_HEADS else head
        if head in _ID_HEADS:
            out[head] = ident
    return out


def _heads(text: str) -> dict[str, str]:
    """Each kind of thing (`_KINDS`) and the word just before it that says which one it is
    ("billing service" -> {"servic": "bill"}; underscores split: "statement_timeout")."""
    out = {}
    for m in re.finditer(r"(?=(?<![\w-])([^\W\d_][^\W_]*)[ _]([^\W\d_][^\W_]*)\b)", text.casefold()):
        which, kind = m.group(1), _root(m.group(2))
        if kind in _KINDS and not is_stopword(which) and _root(which) not in _KINDS | _GENERIC:
            out[kind] = _root(which)
    return out


@lru_cache(maxsize=4096)  # a note is compared with several, and an older note again and again
def read(text: str) -> tuple[str | None, tuple[Sentence, ...]]:
    """(the speaker, the note's sentences: their clauses, values, subject, identifiers).
    Read only: the result is shared."""
    speaker, body = _speaker(text)
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
        sentence.ids, sentence.heads = _ids(sentence.text), _heads(sentence.text)
        out.append(sentence)
    return speaker, tuple(out)


def _clauses(sentence: str, known: set[str], part: int) -> list[Clause]:
    asks = bool(_QUESTION_START.match(sentence) and sentence.endswith("?"))
    supposes = bool(_SUPPOSES.search(sentence))
    out = []
    for c in (c.strip() for c in _CLAUSE_END.split(sentence)):
        if not c:
            continue
        spans = _Spans()
        values = _dates(c, spans) + _clocks(c, spans) + _numbers(c, spans) + _states(c, spans)
        values += _names(c, spans, known)
        gate = ("asks" if asks or c.endswith("?") or _QUESTION_START.match(c) and "?" in sentence else "supposes" if supposes or _POSSIBLE.search(c)
                else "keeps" if _KEEPS.search(c) else None)
        out.append(Clause(c, values, _subject(c, values), gate, part))
    return out


# -- comparing --------------------------------------------------------------------------


def _matches(a: str, b: str) -> bool:
    """Two stems of one word ("adopt"/"adoption")."""
    return a == b or min(len(a), len(b)) >= 5 and (a.startswith(b) or b.startswith(a))


def _overlap(a: set[str], b: set[str]) -> set[str]:
    return {x for x in a if any(_matches(x, y) for y in b)}


def _shared_value(old: Sentence, new: Sentence) -> bool:
    """One value said in both (a count, a date, a name): they speak of one thing."""
    return any(o.kind == n.kind and o.norm == n.norm and o.kind != "state" for o in old.values for n in new.values)


def _related(old: Sentence, new: Sentence) -> bool:
    return bool(_overlap(old.subject, new.subject)) or _shared_value(old, new) or bool(
        set(old.ids.items()) & set(new.ids.items()))


def _other_thing(old: Sentence, new: Sentence) -> str | None:
    """Why two sentences speak of two things of one kind: "release 4.2"/"release 4.3", or
    "billing service"/"notifications service" (each word naming which one absent from the
    other note)."""
    for head, ident in old.ids.items():
        if head in new.ids and new.ids[head] != ident:
            return f"{head} {ident} is not {head} {new.ids[head]}"
    same = [h for h in old.heads if h in new.heads and old.heads[h] == new.heads[h]]
    for head, which in old.heads.items():
        other = new.heads.get(head)
        if (other and other != which and not same and not _overlap({which}, new.subject)
                and not _overlap({other}, old.subject) and head not in _GENERIC):
            return f"{which} {head} is not {other} {head}"
    return None


def _compatible(old: Value, new: Value, old_sentence: Sentence, new_clause: Clause) -> bool:
    if old.kind != new.kind:
        return False
    if old.kind == "number":
        if ("/year" in old.unit) != ("/year" in new.unit):
            return False
        ou, nu = old.unit - {"/year"}, new.unit - {"/year"}
        if ou and nu:
            return bool(_overlap(ou, nu))
        # a bare number ("down to 7", "cut to 9k") is of the other's unit when its clause
        # speaks of the other's subject
        return (not ou and not nu) or bool(_overlap(new_clause.subject, old_sentence.subject))
    if old.kind == "date":  # a weekday with a weekday, a day of a month with a day of a month
        kinds = [("weekday" in v.norm, "day" in v.norm and "weekday" not in v.norm) for v in (old, new)]
        return kinds[0] == kinds[1]
    return True


def _differ(old: Value, new: Value) -> bool:
    if old.kind == "date" and "-" in old.norm + new.norm and not ("-" in old.norm and "-" in new.norm):
        return old.norm[:2] != new.norm[:2]  # "31 July" and "end of Sept": another month
    return old.norm != new.norm


def _said(value: Value, clause: Clause) -> bool:
    return any(v.kind == value.kind and v.norm == value.norm for v in clause.values)


_DENIED_BEFORE = re.compile(r"(?:\bnot|n['’]t|\bno longer|\binstead of|\bwas|\breplac\w*|\brather than)"
                            r"\s+(?:the\s+|\w+\s+)?$")
_DENIED_AFTER = re.compile(r"\s*(?:->|→|=>|\bto\s+\S*\d)|\s+(?:[\w'’]+\s+){0,2}?(?:any ?more|anymore|is out|is off|not\b|"
                           r"no longer|was\b|were\b|(?:is|are|was|were|did|does|do|ca|wo)n['’]?t\b|cannot\b)")


def _denied(value: Value, text: str) -> bool:
    """`text` states the value only to deny it: "not April 15", "from 48k to 52k",
    "instead of Heroku", "30s -> 90s", "Adyen contract not renewed", "Redis isn't needed"."""
    low = text.casefold()
    at = low.find(value.text.casefold())
    if at < 0:
        return False
    after = re.sub(r"^[\w%]+", "", low[at + len(value.text):])  # the unit glued to it: "30s was"
    return bool(_DENIED_BEFORE.search(low[max(0, at - 30):at]) or _DENIED_AFTER.match(after))


def _stated(value: Value, sentence: Sentence) -> bool:
    """The older note states the value (not only asks about it, nor denies it)."""
    return (not _denied(value, sentence.text)
            and any(value in c.values and c.gate != "asks" for c in sentence.clauses))


def _cue(clauses: list[Clause]) -> bool:
    """A word of the clauses that may change something that says something changed; "new"
    of one thing ("new PB", "new policy"), not of more ("new hires": some were added)."""
    text = _NOW_AT_PRESENT.sub(" ", " ".join(c.text for c in clauses if c.gate is None))
    return any(m.group(0).casefold() != "new" or not re.match(r"\W*[^\W\d_]+s\b", text[m.end():])
               for m in _CHANGE.finditer(text))


def _conflict(old: Sentence, new: Sentence) -> tuple[Value, Value] | None:
    """An older value with a rival of its kind and unit in a clause of the newer sentence
    that may change it, the rival's clause (or the one before it) speaking of the older
    sentence's subject. The older value kept ("still the 12th") is no change; said again
    in the rival's clause (not denied) neither; said in another clause, the rival's clause
    must say it changed ("the 12th the movers can't come; housewarming is now the 19th")."""
    for o in old.values:
        if o.kind in ("name", "state") or not _stated(o, old):
            continue
        said = [c for c in new.clauses if _said(o, c) and not _denied(o, c.text)]
        if any(c.gate == "keeps" for c in said):
            continue
        for i, c in enumerate(new.clauses):
            if c.gate is not None or c in said:
                continue
            near = c.subject if said else c.subject | (new.clauses[i - 1].subject if i else set())
            if not _overlap(near, old.subject) or said and not _cue([c]):
                continue
            for n in c.values:
                if _compatible(o, n, old, c) and _differ(o, n):
                    return o, n
    return None


def _state_move(old: Sentence, new: Sentence) -> tuple[Value, Value] | None:
    """An older state moved on along its scale (pending -> done, enabled -> disabled)."""
    for o in old.values:
        if o.kind != "state" or not _stated(o, old):
            continue
        for n in new.free_values():
            if n.kind == "state" and any(a.split(":")[0] == b.split(":")[0] and (a.split(":")[1], b.split(":")[1]) in _MOVES
                                         for a in o.unit for b in n.unit):
                return o, n
    return None


def _same_name(a: str, b: str) -> bool:
    return a == b or bool(set(a.split()) & set(b.split()))


def _name_change(old: Sentence, new: Sentence, cue: bool) -> tuple[Value, Value] | None:
    """A name the older sentence gives and another in its place: the owner, vendor, tool
    or place changed. The older name is denied in the newer note ("not Edinburgh"), or
    gone from it, or (after a change word) said only in other clauses than the new name
    ("switched dentists, I go to Bright Smile Dental now, Alvarez retired"). The new name's
    clause speaks of the older sentence's subject, unless the older name is denied."""
    old_names = [v for v in old.values if v.kind == "name" and _stated(v, old)]
    for c in new.clauses:
        if c.gate is not None:
            continue
        for n in c.values:
            if n.kind != "name" or any(_same_name(n.norm, o.norm) for o in old_names):
                continue
            for o in old_names:
                denied = _denied(o, new.text)
                said = [k for k in new.clauses if any(v.kind == "name" and _same_name(o.norm, v.norm) for v in k.values)
                        or re.search(rf"\b{re.escape(o.norm)}\b", k.text.casefold())]
                gone = denied or not said or (cue and c not in said and not any(k.gate == "keeps" for k in said))
                # the new name's clause speaks of the older subject (the older name said again
                # elsewhere in the newer note is enough)
                about = said or _overlap(c.subject - {_root(v.norm) for v in c.values},
                                         old.subject - {_root(v.norm) for v in old_names})
                if gone and (denied or about):
                    return o, n
    return None


def _left_behind(old_text: str, new: Sentence) -> str | None:
    """'instead of Y', 'switched from Y', 'gave up on Y', 'no longer Y' in a clause that
    may change something, where Y is something the older note says."""
    old_stems = _stems(old_text)
    for c in new.clauses:
        if c.gate is not None:
            continue
        for m in _LEFT_BEHIND.finditer(c.text):
            if m.group(0).casefold().startswith(("from", "over")) and not _CHANGE.search(c.text[:m.start()]):
                continue  # "from" and "over" leave something behind only after a change word
            named = _stems(m.group(1))
            if named and _overlap(named, old_stems):
                return m.group(0)
    return None


def _chosen(old: Sentence, new: Sentence, cue: bool) -> str | None:
    """'went with X', 'ended up getting X', 'switched ... to X', 'X instead': X is nothing
    the older sentence says (the two speak of one thing: the caller checked)."""
    for c in new.clauses:
        if c.gate is not None:
            continue
        for m in _CHOSEN.finditer(c.text):
            picked = _stems(m.group(1))
            if picked and not _overlap(picked, old.subject | _stems(" ".join(v.text for v in old.values))):
                return m.group(0)
    if any(c.gate is None for c in new.clauses) and re.search(r"\binstead\b(?!\s+of)", new.text, re.IGNORECASE):
        return "instead"
    return None


def _ended(old: Sentence, new: Sentence, cue: bool) -> str | None:
    """A verb that ends something ("cancelled", "quit", "gave up", "rescinded") in a
    clause about the older sentence's subject: a word of it, or a name it gives just after
    the verb ("closed my Chase account"; a name alone elsewhere may be another's story)."""
    names = {_root(v.norm) for v in old.values if v.kind == "name"}
    for c in new.clauses:
        if c.gate is not None or not (m := _ENDING.search(c.text)):
            continue
        if _overlap(c.subject, old.subject) - names:
            return m.group(0)
        if _overlap(_stems(" ".join(c.text[m.end():].split()[:3])), names):
            return m.group(0)
    return None


def _negated_stems(text: str) -> tuple[set[str], set[str], set[str]]:
    """(stems said, stems denied, stems denied first): the two content words just after
    a negation are denied, the first of them most plainly ("not part of CI")."""
    said, denied, first = set(), set(), set()
    for clause in _CLAUSE_END.split(text):
        left = 0
        for word in re.findall(r"[\w'’-]+", clause.casefold()):
            if _NEGATION.fullmatch(word) or word.endswith(("n't", "n’t")):
                left = 2
            elif not is_stopword(word) and (s := _root(word)) not in _GENERIC:
                (denied if left else said).add(s)
                if left == 2:
                    first.add(s)
                left -= bool(left)
    return said, denied, first


_ACQUIRED = re.compile(r"\b(?:add\w*|install\w*|set up|introduc\w*|creat\w*|enabl\w*|start\w*|bought|got|began)\b",
                       re.IGNORECASE)


def _flipped(old: Sentence, new: Sentence, cue: bool) -> str | None:
    """What the older sentence denies, the newer asserts after a change ("no pre-commit
    hooks" -> "installed pre-commit"; "not cleared yet" -> "cleared"); or the reverse
    after a change word ("applying" -> "decided not to apply"). The clause shares another
    word with the older sentence, so both speak of one thing."""
    old_said, old_denied, old_first = _negated_stems(old.text)
    expected = re.search(r"\byet\b", old.text, re.IGNORECASE)
    for c in new.clauses:
        if c.gate is not None:
            continue
        said, denied, first = _negated_stems(c.text)
        shared = _overlap(said | denied, old_said | old_denied)
        if (cue or expected or _ACQUIRED.search(c.text)) and (turned := _overlap(said, old_denied - old_said)):
            if shared - turned or _overlap(turned, old_first):
                return f"{sorted(turned)[0]}: no -> yes"
        if cue and (turned := _overlap(denied, old_said - old_denied)) and (shared - turned or _overlap(turned, first)):
            return f"{sorted(turned)[0]}: yes -> no"
    return None


def _held(old: Sentence, new: list[Sentence]) -> bool:
    """A sentence of the newer note that changes nothing keeps the older sentence's
    subject: "Laptops unaffected.", "the .env.example default is unchanged (true)"."""
    for s in new:
        for part in {c.part for c in s.clauses}:
            clauses = [c for c in s.clauses if c.part == part]
            if _cue(clauses):
                continue
            for c in clauses:
                if c.gate == "keeps" and _overlap(c.subject, old.subject) and not any(
                        _compatible(o, n, old, c) and _differ(o, n) for o in old.values if o.kind not in ("name", "state")
                        for n in c.values):
                    return True
    return False


def _other_speaker(new_speaker: str | None, old_speaker: str | None, new_text: str) -> bool:
    """Two people of a chat, the newer speaking of themselves ("Caroline: my 5k PB is
    26:10 now" says nothing of Melanie's)."""
    return bool(new_speaker and old_speaker and new_speaker != old_speaker
                and not {new_speaker, old_speaker} & _ROLES and _FIRST_PERSON.search(new_text))


def judge(new_text: str, old_text: str) -> Verdict:
    """Whether `new_text` supersedes `old_text` (see the module's docstring)."""
    if " ".join(new_text.split()).casefold() == " ".join(old_text.split()).casefold():
        return Verdict(NO, "the same text")
    (new_speaker, new), (old_speaker, old) = read(new_text), read(old_text)
    if _other_speaker(new_speaker, old_speaker, _speaker(new_text)[1]):
        return Verdict(NO, f"{new_speaker} speaks of themselves, not of {old_speaker}")
    unsure: str | None = None
    why_not = "no value of the older note changes"
    for ns in new:
        if all(c.gate for c in ns.clauses):
            why_not = f"the newer note {ns.clauses[0].gate if ns.clauses else 'says nothing'}"
            continue
        for os_ in old:
            if why := _other_thing(os_, ns):
                why_not = why
                continue
            if _held(os_, new):
                why_not = "the newer note keeps it"
                continue
            if left := _left_behind(os_.text, ns):
                return Verdict(SUPERSEDES, f"choice: {left!r}")
            if not _related(os_, ns):
                continue
            cue = _cue(ns.clauses)
            if move := _state_move(os_, ns):
                return Verdict(SUPERSEDES, f"state: {move[0]} -> {move[1]}")
            if conflict := _conflict(os_, ns):
                o, n = conflict
                reason = f"{o.kind}: {o} -> {n}"
                if cue or _denied(o, ns.text) or n.unit and n.text.casefold() in _ORDINALS:  # "my fourth": one more
                    return Verdict(SUPERSEDES, reason)
                unsure = unsure or reason
            for rule, kind in ((_ended, "status"), (_flipped, "yes/no"), (_chosen, "choice")):
                if found := rule(os_, ns, cue):
                    return Verdict(SUPERSEDES, f"{kind}: {found!r}")
            if change := _name_change(os_, ns, cue):
                o, n = change
                reason = f"name: {o} -> {n}"
                if cue or _denied(o, ns.text):
                    return Verdict(SUPERSEDES, reason)
                unsure = unsure or reason
    if unsure:
        return Verdict(UNSURE, f"{unsure} (no word of the newer note says it changed)")
    return Verdict(NO, why_not)
