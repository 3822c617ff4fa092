"""Does a newer note change a value an older one states? Pure and model-free.

`judge(new, old)` answers `supersedes` (link them: the older note is no longer current),
`unsure` (a value seems to have changed, but no word of the newer note says so: listed by
`amem supersede --suggest` for a person or an agent to confirm) or `no`, with the reason:
which value changed, or why not.

A wrong supersession hides a true fact, so precision comes first. General rules, each a
reading of ordinary language, not a list of cases:

- The newer note is read a sentence and a clause at a time. A question, a sentence that
  supposes ("if we moved", "would it be worth"), and a clause that keeps a value ("still
  7pm", "laptops unaffected") change nothing; a value said again is not changed. An older
  sentence that only asks states nothing to change; "I had no idea X" denies no X.
- A long older note (an assistant's answer, minutes: more than `SHORT_NOTE` words) holds
  many facts: it is superseded only where its own speaker (a person, not a model's answer)
  says one of its statements again with another value ("I've tried three Korean places"
  -> "I've tried four", "my 5th project").
- Notes about another thing are not compared: another release ("release 4.2"/"4.3"),
  another of a kind ("billing service"/"notifications service"), another person speaking
  of themselves.
- Notes about another item of a kind are not compared either: the newer note's changing
  clauses name another ("reverted #298; #301 untouched", order 7755, unit 4C, BA119,
  beta_search), or a clause that keeps names the older note's item ("#301 untouched").
- A value is a number with its unit (a rate a month and a year compare), a date, a clock
  time, a version, a name, or a state (approved/rejected, on/off, pending/done). Two values
  conflict when they are of one kind and unit, differ once normalised ("1k" is 1000,
  "3:30am" is 03:30, "anneal_hours 2" is "2 h", "timeout_ms 5000" is "5 s"), and their
  sentences share a subject word (or a value). A bare number's role is the key or noun
  just before it ("bed 12", "close_temp 18"): it is compared only with a value of that role;
  "at 6" is a clock time. A name is compared only with a name of its role: an initial ("J.")
  names no one, a place or medium ("in Zoom") is no rival of who holds a role.
- A conflict is a supersession when the newer sentence says a change happened: a change
  word ("moved", "switched", "now", "new", "pushed", "bumped"), the older value denied ("not
  April 15", "from 48k to 52k"), or the state moved on (pending -> done, on -> off). A
  conflict without such a word is `unsure`.
- A long newer note (an assistant's answer) speaks of many things: there only a value it
  says changed in the same clause counts, or one it leaves behind ("rather than July").
- Some changes need no typed value: "X instead of Y", "switched from Y", "gave up on Y",
  "Y is cancelled", "went with X" after a plan of something else, or a thing the older
  note denies now asserted ("no pre-commit hooks" -> "installed pre-commit").
- The older note must state what changed: "switched from Y" or "from 48k to 52k" with a Y
  (48k) it does not state, or "switched to X" after a note of only dates and numbers, is
  `unsure`; "switched the heating to X" after a note about the coffee, or "moved to Thursday"
  after a note stating a room, is no change of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from amem_cli.steps.statements import (
    CLAUSE_END, GENERIC, NOT_NAMES, SHORT_NOTE, Clause, Sentence, Value, LABEL, identifiers, is_ordinal, overlap, read, root, speaker, stems,
)
from amem_cli.text import is_stopword

SUPERSEDES, UNSURE, NO = "supersedes", "unsure", "no"


@dataclass(frozen=True)
class Verdict:
    decision: str  # SUPERSEDES, UNSURE or NO
    reason: str  # the value that changed ("date: April 15 -> April 10"), or why not


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
    r"used to|previously|formerly|originally|initially|no more)\b"
    r"|->|→|=>",
    re.IGNORECASE,
)
# "now" as "at present" (not "from now on", which is a change): says nothing changed.
_NOW_AT_PRESENT = re.compile(r"\b(?:for now|right now|now that|by now|until now|just now|as of now)\b", re.IGNORECASE)
# Verbs that end what the older note states (its subject is in their clause).
_ENDING = re.compile(
    r"(?<![\w-])(?:cancel\w*|called off|scrapp\w*|postpon\w*|defer\w*|pushed back|delay\w*|rescind\w*|revok\w*|lift(?:ed|ing)|"
    r"quit|resign\w*|handed in|gave up|giving up|stop(?:s|ped|ping)?|trad(?:e|es|ed|ing) (?:\w+ )?in|sold|discontinu\w*|terminat\w*|not renewed|closed|"
    r"withdr[ae]w\w*|expired|retired|removed|deleted|(?<!open )ended)(?![\w-])",  # ("open ended": a kind of question)
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
    r"picked|settled on|decided on|opted for|(?:switch|mov|migrat|chang)\w* (?P<thing>(?:\w+ ){0,3}?)to|is now|are now)\s+"
    r"(?:the |our |my |a |an )?(?P<picked>[\w'’.+-]+(?:\s+[\w'’.+-]+)?)",
    re.IGNORECASE,
)
# Words that add one more of a kind: the older one still holds ("I also visited ...").
_ADDS = re.compile(r"\b(?:also|too|as well)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|n['’]t|dont|didnt|doesnt|isnt|wasnt|cant)\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i’m|im|my|me|mine|we|we're|our|us)\b", re.IGNORECASE)
_ROLES = frozenset({"user", "assistant", "agent", "system", "human", "ai", "bot"})
_MODELS = frozenset({"assistant", "system", "ai", "bot"})  # speakers whose long answers are no facts of theirs


# -- comparing --------------------------------------------------------------------------



def _shared_value(old: Sentence, new: Sentence) -> bool:
    """One value said in both (a count, a date, a name): they speak of one thing."""
    return any(o.kind == n.kind and o.norm == n.norm and o.kind != "state" for o in old.values for n in new.values)


def _related(old: Sentence, new: Sentence) -> bool:
    return bool(overlap(old.subject, new.subject)) or _shared_value(old, new) or any(
        idents & new.ids.get(head, set()) for head, idents in old.ids.items())


def _other_thing(old: Sentence, new: Sentence) -> str | None:
    """Why two sentences speak of two things of one kind: "release 4.2"/"release 4.3" (the
    newer changes only another: "reverted #298; #301 untouched"), or "billing service"/
    "notifications service" (each word naming which one absent from the other note)."""
    if not old.ids and not old.heads:
        return None  # (most sentences name no item)
    changing = old.ids and identifiers(" ".join(c.text for c in new.clauses if c.gate is None))  # not "#301 untouched"
    for head, idents in old.ids.items():
        if (others := changing.get(head)) and not others & idents:
            named = "{}" if head == "_" else "#{}" if head == "#" else f"{head} {{}}"
            return f"{named.format(min(idents))} is not {named.format(min(others))}"
    same = [h for h in old.heads if h in new.heads and old.heads[h] == new.heads[h]]
    for head, which in old.heads.items():
        other = new.heads.get(head)
        if (other and other != which and not same and not overlap({which}, new.subject)
                and not overlap({other}, old.subject) and head not in GENERIC):
            return f"{which} {head} is not {other} {head}"
    return None


def _compatible(old: Value, new: Value, old_sentence: Sentence, new_clause: Clause) -> bool:
    if old.kind != new.kind:
        return False
    if old.kind == "number":
        if ("/year" in old.unit) != ("/year" in new.unit):
            return False
        ou, nu = ({u.lstrip(LABEL) for u in v.unit - {"/year"}} for v in (old, new))
        labels, new_labels = ({u.lstrip(LABEL) for u in v.unit if u.startswith(LABEL)} for v in (old, new))
        if labels and new_labels:  # "bed_temp 70" is no "nozzle_temp 215": one names the other's role whole
            return overlap(labels, new_labels) == labels or overlap(new_labels, labels) == new_labels
        if ou and nu:
            return bool(overlap(ou, nu))
        if labels:  # "close_temp 18", "bed 12": a bare rival is of that role when its clause names it
            return bool(overlap(new_clause.subject, labels))  # ("close at 20")
        # a bare number ("down to 7", "cut to 9k") is of the other's unit when its clause
        # speaks of the other's subject
        return (not ou and not nu) or bool(overlap(new_clause.subject, old_sentence.subject))
    if old.kind == "date":  # a weekday with a weekday, a day of a month with a day of a month
        kinds = [("weekday" in v.norm, "day" in v.norm and "weekday" not in v.norm) for v in (old, new)]
        return kinds[0] == kinds[1]
    return True


def _differ(old: Value, new: Value) -> bool:
    if old.kind == "date" and "-" in old.norm + new.norm and not ("-" in old.norm and "-" in new.norm):
        return old.norm[:2] != new.norm[:2]  # "31 July" and "end of Sept": another month
    if old.kind == "clock" and "~" in old.norm + new.norm:  # "at 6" is 6:00 or 18:00
        return (int(old.norm[-5:-3]) % 12, old.norm[-2:]) != (int(new.norm[-5:-3]) % 12, new.norm[-2:])
    return old.norm != new.norm


def _said(value: Value, clause: Clause) -> bool:
    return any(v.kind == value.kind and not _differ(value, v) for v in clause.values)


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
    """A word of the clauses that may change something that says something changed."""
    return _says_change(" ".join(c.text for c in clauses if c.gate is None))


@lru_cache(maxsize=4096)  # asked of the same clauses for each older sentence
def _says_change(text: str) -> bool:
    """A change word in the text, not denied ("don't quit", "not a new game"); "new" of one
    thing ("new PB", "new policy"), not of more ("new hires": some were added)."""
    text = _NOW_AT_PRESENT.sub(" ", text)
    return any((m.group(0).casefold() != "new" or not re.match(r"\W*[^\W\d_]+s\b", text[m.end():]))
               and (_NEEDS_NEGATION.fullmatch(m.group(0)) or not _DENIED_VERB.search(text[:m.start()]))
               for m in _CHANGE.finditer(text))


# Change words said with a negation: "isn't needed anymore".
_NEEDS_NEGATION = re.compile(r"any ?more|no more|no longer", re.IGNORECASE)


def _conflict(old: Sentence, new: Sentence) -> tuple[Value, Value, bool, bool] | None:
    """An older value with a rival of its kind and unit in a clause of the newer sentence
    that may change it, the rival's clause (or the one before it) speaking of the older
    sentence's subject. The older value kept ("still the 12th") is no change; said again
    in the rival's clause (not denied) neither; said in another clause, the rival's clause
    must say it changed ("the 12th the movers can't come; housewarming is now the 19th").
    (older value, newer value, whether the rival's clause or the one before says it changed,
    whether the rival's clause says again what the older value's clause says: the same
    statement with another value, "I've tried three" -> "I've tried four")."""
    for o in old.values:
        if o.kind in ("name", "state") or not _stated(o, old):
            continue
        said = [c for c in new.clauses if _said(o, c) and not _denied(o, c.text)]
        if any(c.gate == "keeps" for c in said):
            continue
        # what the older value is said of: its clause's words, or the one's before ("Check-in
        # opens at 3, cabin 5": 3 is of check-in, not of the cabin)
        at = next(k for k, clause in enumerate(old.clauses) if o in clause.values)
        own = old.clauses[at].subject | (old.clauses[at - 1].subject if at else set()) or old.subject
        for i, c in enumerate(new.clauses):
            if c.gate is not None or c in said:
                continue
            near = c.subject if said else c.subject | (new.clauses[i - 1].subject if i else set())
            if not overlap(near, own) or said and not _cue([c]):
                continue
            for n in c.values:  # (not one the newer clause denies: "from 48k" is what was left,
                # nor one the older sentence states too: "a 3-bedroom home for $400,000" -> "the 3-bedroom";
                # one it denies may come back: "at 10:00, not 9:30" -> "at 9:30, not 10:00")
                if (_compatible(o, n, old, c) and _differ(o, n) and not _denied(n, c.text)
                        and not any(_said(n, k) and not _denied(n, k.text) for k in old.clauses)):
                    return o, n, _cue(new.clauses[max(0, i - 1):i + 1]), _restates(c, old.clauses[at])
    return None


def _changed_from(value: Value, old: Sentence, new: Sentence) -> Value | None:
    """Another value of the older value's kind that the newer sentence says it left ("from
    48k to 52k" after "50k"): what changed is not what the older note states."""
    for c in new.clauses:
        for d in c.values:
            if c.gate is None and _compatible(value, d, old, c) and _differ(value, d) and _denied(d, c.text):
                return d
    return None


def _restates(new: Clause, old: Clause) -> bool:
    """The two clauses say one statement: two thirds of the subject words of the shorter
    are in the other, two at least."""
    shared = overlap(old.subject, new.subject)
    return len(shared) >= 2 and 3 * len(shared) >= 2 * min(len(old.subject), len(new.subject))


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


def _name_change(old: Sentence, new: Sentence, cue: bool) -> tuple[Value, Value, bool] | None:
    """A name the older sentence gives and another in its place: the owner, vendor, tool
    or place changed. The older name is denied in the newer note ("not Edinburgh"), or
    gone from it, or (after a change word) said only in other clauses than the new name
    ("switched dentists, I go to Bright Smile Dental now, Alvarez retired"). The new name's
    clause speaks of the older sentence's subject, unless the older name is denied.
    (older name, newer name, whether the new name's clause or one beside it says it changed)."""
    old_names = [v for v in old.values if v.kind == "name" and _stated(v, old)]
    for i, c in enumerate(new.clauses):
        if c.gate is not None:
            continue
        adds = _ADDS.search(c.text)  # "I also loved Mario Kart": one more, not one in its place
        for n in c.values:
            if n.kind != "name" or any(_same_name(n.norm, o.norm) for o in old_names):
                continue
            for o in old_names:
                if o.unit != n.unit:
                    continue  # a place or medium is no rival of a person or a thing
                denied = _denied(o, new.text)
                if adds and not denied:  # (unless the older is said to be gone: "Adyen not renewed")
                    continue
                said = [k for k in new.clauses if any(v.kind == "name" and _same_name(o.norm, v.norm) for v in k.values)
                        or re.search(rf"\b{re.escape(o.norm)}\b", k.text.casefold())]
                gone = denied or not said or (cue and c not in said and not any(k.gate == "keeps" for k in said))
                # the new name's clause speaks of the older subject (the older name said again
                # elsewhere in the newer note is enough)
                about = said or overlap(c.subject - {root(v.norm) for v in c.values},
                                         old.subject - {root(v.norm) for v in old_names})
                if gone and (denied or about):
                    return o, n, _cue(new.clauses[max(0, i - 1):i + 2])
    return None


def _left_behind(old: Sentence, new: Sentence, *, strict: bool) -> tuple[str | None, str | None]:
    """'instead of Y', 'switched from Y', 'gave up on Y', 'no longer Y' in a clause that
    may change something: (the phrase, where Y is something the older note says, its last
    word at least (`strict`: one of its values or names); the first Y it does not say: the
    newer note changes another thing than the older states, "switched from Jenkins" after
    "deploys go through GitHub Actions"). A Y that is a date or a number ("from Monday") is
    when the change starts or a value the value rules read, not the thing changed."""
    old_stems = stems(" ".join(v.text for v in old.values) if strict else old.text)
    other = None
    for c in new.clauses:
        if c.gate is not None:
            continue
        for m in _LEFT_BEHIND.finditer(c.text):
            if m.group(0).casefold().startswith(("from", "over")) and not _CHANGE.search(c.text[:m.start()]):
                continue  # "from" and "over" leave something behind only after a change word
            if _DENIED_VERB.search(c.text[:m.start()]):
                continue  # "I won't quit the studio" leaves nothing
            named = [root(w) for w in re.findall(r"[^\W\d_][^\W_]*", m.group(1).casefold())
                     if len(w) > 1 and not is_stopword(w) and root(w) not in GENERIC]
            if not named:
                continue
            if overlap({named[-1]}, old_stems):
                return m.group(0), None
            if not _typed_in(c, m.group(1)):
                other = other or re.sub(r"(?:\W+(?:to|with|for|by|on|in|at))?\W*$", "", m.group(1))
    return None, other


def _typed_in(clause: Clause, text: str) -> bool:
    """A date, clock time, number or version of the clause is written in `text`."""
    return any(v.kind not in ("name", "state") and v.text in text for v in clause.values)


_TYPED = frozenset({"date", "clock", "number", "version"})
_PRONOUN = re.compile(r"(?:them|it|this|that|these|those|one|ones|him|her)\b", re.IGNORECASE)


def _chosen(old: Sentence, new: Sentence) -> tuple[str, bool] | None:
    """'went with X', 'ended up getting X', 'switched ... to X', 'X instead': X is nothing
    the older sentence says, and what was switched (the words before X's verb, or between
    it and "to") something it speaks of. (the phrase,
    whether the older sentence may state what X replaced: not when it states only dates and
    numbers, a value of another kind than X.) An X that is a date, time or number ("moved to
    Thursday at 3") is no choice: the value rules compare it with one of its kind."""
    older_kinds = {v.kind for v in old.values}
    of_its_kind = not older_kinds or not older_kinds <= _TYPED
    for c in new.clauses:
        if c.gate is not None:
            continue
        for m in _CHOSEN.finditer(c.text):
            if _PRONOUN.match(m.group("picked")):
                continue  # "chose them 'cause ...": what was chosen is named elsewhere
            picked = stems(m.group("picked"))
            if _typed_in(c, " ".join(c.text[m.start("picked"):].split()[:4])):
                continue
            # what is switched ("switched the office heating to X", "office heating is now X")
            # is something the older sentence speaks of
            switched = re.sub(r"\bfrom\b.*", "", m.group("thing") or "").strip() or c.text[:m.start()]
            thing = [w for w in re.findall(r"[^\W\d_][^\W_]*", switched)
                     if len(w) > 1 and not is_stopword(w) and root(w) not in GENERIC]
            if thing and not overlap({root(thing[-1])}, old.subject):
                continue
            # "switched to a new dentist": the role itself is named, and must be the older note's
            role = re.match(r"(?:new|another|different)\s+([^\W\d_]+)", m.group("picked"), re.IGNORECASE)
            if role and not overlap({root(role.group(1))}, old.subject):
                continue
            if picked and not overlap(picked, old.subject | stems(" ".join(v.text for v in old.values))):
                return m.group(0), of_its_kind
    # A bare "X instead" in a clause that may change something: not in one that only
    # supposes ("Next time Bruno wants to try the pumpkins instead" replaces nothing).
    if any(c.gate is None and re.search(r"\binstead\b(?!\s+of)", c.text, re.IGNORECASE) for c in new.clauses):
        return "instead", of_its_kind
    return None


# A verb after these is denied: "I won't quit", "don't let anything stop you" end nothing.
_DENIED_VERB = re.compile(r"(?:\b(?:not|never|no longer)|n['’]t)\s+(?:[\w'’]+\s+){0,2}$", re.IGNORECASE)


def _ended(old: Sentence, new: Sentence, cue: bool) -> str | None:
    """A verb that ends something ("cancelled", "quit", "gave up", "rescinded"), not denied,
    in a clause about the older sentence's subject: a word of it other than the verb's own
    ("I stopped you" ends no trip "with a few stops"), or a name it gives just after
    the verb ("closed my Chase account"; a name alone elsewhere may be another's story)."""
    names = {root(v.norm) for v in old.values if v.kind == "name"}
    for c in new.clauses:
        if c.gate is not None or not (m := next(
                (m for m in _ENDING.finditer(c.text) if not _DENIED_VERB.search(c.text[:m.start()])), None)):
            continue
        if overlap(c.subject - overlap(c.subject, stems(m.group(0))), old.subject) - names:  # (not the verb itself)
            return m.group(0)
        if overlap(stems(" ".join(c.text[m.end():].split()[:3])), names):
            return m.group(0)
    return None


# Words of knowing: what follows them is so whether or not the speaker knew it.
_KNOWING = frozenset("know knew known realize realized realise realised idea aware".split())


@lru_cache(maxsize=4096)  # asked of an older note's sentence for each newer note, and of each clause for each older
def _negated_stems(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(stems said, stems denied, stems denied first): the two content words just after
    a negation are denied, the first of them most plainly ("not part of CI")."""
    said: set[str] = set()
    denied: set[str] = set()
    first: set[str] = set()
    for clause in CLAUSE_END.split(text):
        left = 0
        for word in re.findall(r"[\w'’-]+", clause.casefold()):
            if _NEGATION.fullmatch(word) or word.endswith(("n't", "n’t")):
                left = 2
            elif left and word in _KNOWING:  # "I had no idea X", "didn't know X": X is so, not denied
                left = 0
            elif not is_stopword(word) and (s := root(word)) not in GENERIC:
                (denied if left else said).add(s)
                if left == 2:
                    first.add(s)
                left -= bool(left)
    return frozenset(said), frozenset(denied), frozenset(first)


_ACQUIRED = re.compile(r"\b(?:add\w*|install\w*|set up|introduc\w*|creat\w*|enabl\w*|start\w*|bought|got|began)\b",
                       re.IGNORECASE)


def _flipped(old: Sentence, new: Sentence, cue: bool) -> str | None:
    """What the older sentence denies, the newer asserts after a change: the word it denies
    first ("not cleared" -> "cleared"; not "furry" of "can't wait to see your furry friend"
    in "your new furry friend"), or after a verb of getting or a "not yet" a word the
    clause shares with it and another ("no pre-commit hooks" -> "installed pre-commit",
    "not part of CI yet" -> "added a mypy step to CI"). Or the reverse after a change word:
    the word the newer denies first ("applying" -> "decided not to apply": not "furry" in
    "can't wait to see your furry friend", where the wait is denied)."""
    old_said, old_denied, old_first = _negated_stems(", ".join(c.text for c in old.clauses if c.gate != "asks"))
    expected = re.search(r"\byet\b", old.text, re.IGNORECASE)
    for c in new.clauses:
        if c.gate is not None:
            continue
        said, denied, first = _negated_stems(c.text)
        shared = overlap(said | denied, old_said | old_denied)
        acquired = expected or _ACQUIRED.search(c.text)
        if (cue or acquired) and (turned := overlap(said, old_denied - old_said)):
            if overlap(turned, old_first) or acquired and shared - turned:
                return f"{sorted(turned)[0]}: no -> yes"
        if cue and (turned := overlap(denied, old_said - old_denied)) and overlap(turned, first):
            return f"{sorted(turned)[0]}: yes -> no"
    return None


def _keeping(new: tuple[Sentence, ...]) -> list[tuple[Clause, dict[str, set[str]]]]:
    """The clauses of the newer note that keep a value, in parts of it that say no change,
    each with the items it names (read once for all the older sentences)."""
    out = []
    for s in new:
        if not any(c.gate == "keeps" for c in s.clauses):
            continue
        for part in {c.part for c in s.clauses}:
            clauses = [c for c in s.clauses if c.part == part]
            if not _cue(clauses):
                out += [(c, identifiers(c.text)) for c in clauses if c.gate == "keeps"]
    return out


def _held(old: Sentence, keeping: list[tuple[Clause, dict[str, set[str]]]]) -> bool:
    """A clause of the newer note that keeps a value (`_keeping`) keeps the older
    sentence's subject or the thing it names: "Laptops unaffected.", "the .env.example
    default is unchanged (true)", "#301 untouched"."""
    for c, ids in keeping:
        kept = overlap(c.subject, old.subject) or any(  # or the thing it names ("#301 untouched")
            idents & old.ids.get(head, set()) for head, idents in ids.items())
        if kept and not any(
                _compatible(o, n, old, c) and _differ(o, n) for o in old.values if o.kind not in ("name", "state")
                for n in c.values):
            return True
    return False


def _other_speaker(new_speaker: str | None, old_speaker: str | None, new_text: str) -> bool:
    """Two people of a chat, the newer speaking of themselves ("Caroline: my 5k PB is
    26:10 now" says nothing of Melanie's)."""
    return bool(new_speaker and old_speaker and new_speaker != old_speaker
                and not {new_speaker, old_speaker} & _ROLES and _FIRST_PERSON.search(new_text))


# A note opening with a name and a verb ("Hiroshi cancelled ...") tells what that one did.
_OPENING_NAME = re.compile(r"^\W*([A-Z][\w'’-]+)\s+(?=[a-z])")


def _actor(body: str) -> str | None:
    """The name a note opens with, the one it tells of, when the note writes it again (a
    capital that only opens a sentence may be any word: "Offsite cancelled")."""
    m = _OPENING_NAME.match(body)
    if not m or m.group(1).casefold() in NOT_NAMES or is_stopword(m.group(1)):
        return None
    return m.group(1) if len(re.findall(rf"\b{re.escape(m.group(1))}\b", body)) > 1 else None


def _other_actor(new_text: str, old_text: str) -> str | None:
    """Two notes each telling what another person did ("Lena cancelled the budget
    spreadsheet" and "Hiroshi cancelled the invoice"), neither naming the other: what one
    did changes nothing of the other's. Unless the newer says that it now does what the
    older one did, a role passing on ("Dana now leads the team" after "Sam leads the
    team": its opening clause says the older's again, with a change word the older's does
    not have: not "Esther abandoned the audiobook" after "Hiroshi abandoned the audiobook")."""
    (_, new_body), (_, old_body) = speaker(new_text), speaker(old_text)
    new_actor, old_actor = _actor(new_body), _actor(old_body)
    if not new_actor or not old_actor or new_actor == old_actor:
        return None
    if re.search(rf"\b{re.escape(new_actor)}\b", old_body) or re.search(rf"\b{re.escape(old_actor)}\b", new_body):
        return None
    new_first, old_first = read(new_text)[1][0].clauses[0], read(old_text)[1][0].clauses[0]
    own = set(re.findall(r"[\w'’]+", old_first.text.casefold()))
    if _restates(new_first, old_first) and _says_change(
            " ".join(w for w in re.findall(r"[\w'’]+", new_first.text) if w.casefold() not in own)):
        return None
    return f"{new_actor} is not {old_actor}"


_NO_WORD = " (no word of the newer note says it changed)"


def _gated(new: Sentence) -> str | None:
    """Why a sentence of the newer note changes nothing: each clause of it asks, bids,
    supposes or keeps."""
    if all(c.gate for c in new.clauses):
        return f"the newer note {new.clauses[0].gate if new.clauses else 'says nothing'}"
    return None


def _only_asks(old: Sentence) -> bool:
    """An older sentence that only asks ("Which country hosted the games?") states nothing
    a newer note could change."""
    return all(c.gate == "asks" for c in old.clauses)


def _apart(old: Sentence, new: Sentence, held: bool) -> str | None:
    """Why two sentences are not compared: they speak of two things, or the newer keeps
    the older (`held`)."""
    return _other_thing(old, new) or ("the newer note keeps it" if held else None)


def _last_why_not(new: tuple[Sentence, ...], old: tuple[Sentence, ...], held: list[bool]) -> str:
    """The reason `judge` gives when no pair of sentences changes anything: that of the
    last pair it passes over (looked for from the end)."""
    for ns in reversed(new):
        if gated := _gated(ns):
            return gated
        for os_, kept in zip(reversed(old), reversed(held)):
            if why := _apart(os_, ns, kept):
                return why
    return "no value of the older note changes"


def judge(new_text: str, old_text: str) -> Verdict:
    """Whether `new_text` supersedes `old_text` (see the module's docstring)."""
    if " ".join(new_text.split()).casefold() == " ".join(old_text.split()).casefold():
        return Verdict(NO, "the same text")
    (new_speaker, new), (old_speaker, old) = read(new_text), read(old_text)
    if _other_speaker(new_speaker, old_speaker, speaker(new_text)[1]):
        return Verdict(NO, f"{new_speaker} speaks of themselves, not of {old_speaker}")
    if other_actor := _other_actor(new_text, old_text):
        return Verdict(NO, other_actor)
    unsure: str | None = None
    long = not states_one_thing(new_text)
    many = not states_one_thing(old_text)  # the older note says many things
    keeping = _keeping(new)
    held = [bool(keeping) and _held(os_, keeping) for os_ in old]
    if not may_change(new_text, old_text):  # nothing of it can change: only why not is left to say
        return Verdict(NO, _last_why_not(new, old, held))
    why_not = "no value of the older note changes"
    for ns in new:
        if gated := _gated(ns):
            why_not = gated
            continue
        for os_, kept in zip(old, held):
            if why := _apart(os_, ns, kept):
                why_not = why
                continue
            if not _related(os_, ns) or _only_asks(os_):
                continue
            if many:  # only a statement of it said again with another value ("I've tried three" -> "four")
                conflict = _conflict(os_, ns)
                if conflict and (conflict[3] or is_ordinal(conflict[1].text)) and not _ADDS.search(ns.text):
                    return Verdict(SUPERSEDES, f"{conflict[0].kind}: {conflict[0]} -> {conflict[1]} (said again)")
                continue
            left, other = _left_behind(os_, ns, strict=long)
            if left:
                return Verdict(SUPERSEDES, f"choice: {left!r}")
            cue = _cue(ns.clauses)
            if move := _state_move(os_, ns):
                return Verdict(SUPERSEDES, f"state: {move[0]} -> {move[1]}")
            if conflict := _conflict(os_, ns):
                o, n, said_near, _ = conflict
                reason = f"{o.kind}: {o} -> {n}"
                if left_value := _changed_from(o, os_, ns):  # "from 48k to 52k" after "50k"
                    unsure = unsure or f"{reason} (the newer note changes {left_value}, which the older does not state)"
                    continue
                if (said_near if long else cue) or _denied(o, ns.text) or n.unit and is_ordinal(n.text):
                    return Verdict(SUPERSEDES, reason)  # ("my fourth" place: one more)
                unsure = unsure or reason + _NO_WORD
            if long:
                continue  # a long note names many things: only a value it says changed counts
            for rule, kind in ((_ended, "status"), (_flipped, "yes/no")):
                if found := rule(os_, ns, cue):
                    return Verdict(SUPERSEDES, f"{kind}: {found!r}")
            # a choice or a name changed, but what was left the older note does not state
            elsewhere = f" (the newer note changes {other!r}, which the older does not state)" if other else ""
            if chosen := _chosen(os_, ns):
                found, of_its_kind = chosen
                if of_its_kind and not other:
                    return Verdict(SUPERSEDES, f"choice: {found!r}")
                unsure = unsure or f"choice: {found!r}" + (elsewhere or " (the older note states no value of its kind)")
            if change := _name_change(os_, ns, cue):
                o, n, said_near = change
                reason = f"name: {o} -> {n}"
                if (said_near or _denied(o, ns.text)) and not other:
                    return Verdict(SUPERSEDES, reason)
                unsure = unsure or reason + (elsewhere or _NO_WORD)
    if unsure:
        return Verdict(UNSURE, unsure)
    return Verdict(NO, why_not)


def states_one_thing(text: str) -> bool:
    """Whether a note is short enough to state one thing (see the module's docstring)."""
    return len(speaker(text)[1].split()) <= SHORT_NOTE


def may_change(new_text: str, old_text: str) -> bool:
    """Whether anything `old_text` states can be changed by `new_text`: a note that states
    one thing can; a long one (many facts) only where its own speaker, a person and not a
    model's answer, speaks again (see the module's docstring)."""
    if states_one_thing(old_text):
        return True
    old_speaker = speaker(old_text)[0]
    return speaker(new_text)[0] == old_speaker and old_speaker not in _MODELS


def changing_words(text: str) -> str:
    """The part of a note that can change an older one: its clauses that state a value and
    are no question, supposition or request (the whole text when none does). Older notes
    sharing its words are the candidates worth judging."""
    clauses = [c.text for s in read(text)[1] for c in s.clauses if c.gate is None and c.values]
    return " ".join(clauses) or speaker(text)[1]
