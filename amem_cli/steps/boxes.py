"""Step 4, boxes: the vault's topics (as A-MEM means boxes), none predefined.

A box is a topic that emerges from the vault's own notes: a group of alike notes, named
by its most distinctive term. A note no topic fits waits in `inbox` until enough alike
notes form one.

Notes are alike by their vectors (what `retrieve.fields.embedding_text` embeds: the text
with its keywords, tags and context), less the vault's mean vector (`centred`: what all
its notes share is no topic). Two groups of notes are one topic when the mean similarity
between the notes of one and those of the other is at least `similarity` (average
linkage); a note joins the topic it is most alike, by its mean similarity to the topic's
notes. That mean is the dot product of the two groups' sums over the product of their
sizes, so a topic is carried as (sum of its vectors, notes).

A topic is named by its most distinctive term, by class-based TF-IDF as BERTopic names
topics: the notes of the topic that hold a term, times log(1 + notes in the vault / notes
holding it). Terms are the notes' keywords and their words; none is a stop word, a verb,
a file extension, a number or id (`checks.junk_label`), a verb as the topic's notes use it
(`used_as_verb`), or the name of someone who speaks in the vault's conversations, or its
start (they are in every turn of their chats, not a topic).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from amem_cli.steps._text import is_stop_or_vague, slugify
from amem_cli.steps.checks import junk_label
from amem_cli.text import words

DEFAULT_BOX = "inbox"
# A topic holds at least this many notes; fewer alike notes wait in the inbox.
MIN_NOTES = 3
# On a rebuild, a note no group holds joins a topic a little less alike than notes must be
# to form one: a formed topic's mean similarity is diluted by its breadth. As notes come, a
# note joins a topic only as alike (slack 0): that choice is never revisited, and early
# topics are young and broad (on the judged set, slack there took purity from 83.6 % to 78 %).
JOIN_SLACK = 0.03
# What all of a vault's notes share (the same people, the same project) tells no topic
# apart: notes are compared by their vectors less the vault's mean vector (`centred`).
# Compared as they are, any two turns of a LoCoMo chat are 0.32-0.41 alike on average
# (0.12 on the judged set), and one box held 96 % of a conversation. A vault's mean counts
# this many unlike notes more (`vault_mean`).
MEAN_PRIOR = 30
# Average linkage keeps an items x items matrix: more items are grouped a chunk at a time,
# and the chunks' groups then together (as weighted items: the same criterion).
CHUNK = 2000
# Words that are verbs (or adverbs) whatever their form: no topic is named by one.
VERBS = frozenset(
    """
    add added adds agree ask asked asks became become begin being bring brought came come
    like likes prefer prefers
    comes decide decides did do does doing done feel felt finally find finds found gave get
    give gives go goes going gone got guess happen happens have help helps hope keep keeps
    kept know knew known leave left let lets look looks made make makes mean meant move
    moves need needs put puts remove removes said saw say says see seen seem seems sent set
    show shows showed shown start starts stop stops sum take takes taken tell tells think
    thought told took try tries tried turn use want wants went work works wrote write writes
    actually already also anyway basically definitely maybe probably really still soon
    """.split()
)
# Nouns too general to name a topic: when, how much, a thing, anyone.
GENERIC = frozenset(
    """
    day days end lot lots month months part thing things time times way week weeks year years
    anything everything nothing something anyone everyone someone
    """.split()
)
# A chat's greetings, cheers and praise: in any of its topics, none ("hey", "wow", "awesome"
# were boxes of 8-25 turns of a LoCoMo dev chat).
CHAT_WORDS = frozenset(
    """
    hey hi hello bye goodbye wow yay oh ooh aw thanks thank congrats congratulations lol omg
    okay yeah sure amazing awesome beautiful cool exciting excited fantastic fun glad good great
    happy lovely nice wonderful
    """.split()
)
# File name extensions: a file's type is no topic ("png" held a note on code review).
EXTENSIONS = frozenset(
    """
    c cfg conf cpp css csv doc docx env gif go gz h html ini ipynb java jpeg jpg js json jsx
    kt lock log md mp3 mp4 pdf php png ps1 py rb rs sh sql svg swift tar toml ts tsx txt
    wav xls xlsx xml yaml yml zip
    """.split()
)
_PAST = re.compile(r"[a-z]{3,}[^e]ed$")  # "decided", "showed"; not "need", "speed"
# The words after which a word is a verb: a subject, "to", a modal or an auxiliary ("I hear",
# "can't wait to hear", "we push"); after "the", "on", "that" it is more likely a noun ("push
# notifications", "on tag push"). Apostrophes are dropped first ("can't" -> "cant").
BEFORE_VERB = frozenset(
    """
    i you we they he she to can cant could couldnt will wont would wouldnt shall should
    shouldnt must might may do dont does doesnt did didnt lets please ill youll well theyll
    """.split()
)
_TOKEN = re.compile(r"[a-z]+")


def namable(term: str, people: Collection[str] = ()) -> bool:
    """Whether a box may be named by `term`: each of its words has letters and is no stop
    word, verb, general noun ("week"), chat word ("wow", `CHAT_WORDS`) or file extension,
    it is no number, date, id or file (`junk_label`), and it names none of `people`
    (lower-cased words of names)."""
    parts = words(term)
    if not parts or junk_label(term) is not None:
        return False
    for word in parts:
        if (len(word) < 3 or is_stop_or_vague(word) or word in VERBS or word in GENERIC or word in CHAT_WORDS
                or word in EXTENSIONS or _PAST.match(word)
                or any(person.startswith(word) for person in people) or not any(ch.isalpha() for ch in word)):
            return False  # (a person's name begun is theirs: "mel" for Melanie)
    return True


def used_as_verb(term: str, texts: Iterable[str]) -> bool:
    """Whether the one-word `term` is a verb in `texts` (a topic's notes), by a rule and no
    tagger: at least half the times it occurs, the word before it is one a verb follows
    (`BEFORE_VERB`: "I hear", "to hear"). A phrase is no verb."""
    if "-" in term or " " in term:
        return False
    before = [tokens[k - 1] if k else "" for text in texts
              for tokens in [_TOKEN.findall(text.lower().replace("'", "").replace("\u2019", ""))]
              for k, token in enumerate(tokens) if token == term]
    return bool(before) and 2 * sum(b in BEFORE_VERB for b in before) >= len(before)


def note_terms(keywords: Sequence[str], people: Collection[str] = ()) -> set[str]:
    """The terms a note may lend its topic's name: its keywords and their words, as slugs."""
    terms = set()
    for keyword in keywords:
        if junk_label(keyword) is not None:  # an id, a file, a date: its parts name nothing either
            continue
        for term in [keyword, *words(keyword)] if len(words(keyword)) > 1 else [keyword]:
            slug = slugify(term)
            if slug and namable(slug.replace("-", " "), people):
                terms.add(slug)
    return terms


def name(members: Iterable[set[str]], notes_with: Mapping[str, int], total: int, taken: Collection[str] = ()) -> str | None:
    """The topic's name: of the terms of its notes (`members`, each a note's `note_terms`),
    the most distinctive (class-based TF-IDF); `notes_with`: {term: notes of the vault
    holding it}, of `total` notes. Not one of `taken` (other topics' names); a term only
    one of its notes holds names nothing shared; of terms as distinctive, the longer (a
    phrase over its words). None when no term is fit."""
    counts = Counter(term for terms in members for term in terms)
    scored = [(n * math.log(1 + total / max(notes_with.get(term, n), n)), len(term), term)
              for term, n in counts.items() if n >= 2 and term not in taken]
    return max(scored)[2] if scored else None


def vault_mean(total: Any, count: int) -> Any:
    """The vault's mean vector, from the sum of its notes' vectors: taken as if MEAN_PRIOR
    unlike notes (summing to nothing) were there too, so a few notes of one topic are not
    centred away (their mean is mostly themselves) while a large vault's is its own."""
    return total / (count + MEAN_PRIOR)


def centred(total: Any, count: int, mean: Any) -> Any:
    """A sum of `count` unit vectors (or a matrix of them, count 1) less the vault's mean
    vector for each, scaled so that the dot product of two notes' is their similarity
    above what any two of the vault's notes share: (v - m) / sqrt(1 - |m|^2)."""
    import numpy as np

    return (total - count * mean) / math.sqrt(max(1.0 - float(np.dot(mean, mean)), 1e-6))


def mean_similarity(vector: Any, topic: tuple[Any, int]) -> float:
    """The mean cosine similarity of a unit vector to a topic's notes: (sum, notes)."""
    total, count = topic
    return float(vector @ total) / count


def nearest(vector: Any, topics: Mapping[str, tuple[Any, int]], similarity: float, slack: float = JOIN_SLACK) -> str | None:
    """The topic `vector` is most alike, when it is alike enough to join it: `similarity`
    less `slack`."""
    best = max(topics, key=lambda t: mean_similarity(vector, topics[t]), default=None)
    if best is None or mean_similarity(vector, topics[best]) < similarity - slack:
        return None
    return best


def groups(vectors: Any, similarity: float) -> list[list[int]]:
    """Average-linkage groups of the rows of `vectors` (unit vectors): merged while two
    groups' mean similarity is at least `similarity`. Every row is in one group, alone
    if it is like no other; groups in the order of their first row."""
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float64)
    items = [[i] for i in range(len(vectors))]
    sums, counts = vectors.copy(), np.ones(len(vectors))
    while len(items) > CHUNK:  # a chunk at a time, then the chunks' groups together
        merged = []
        for start in range(0, len(items), CHUNK):
            part = slice(start, start + CHUNK)
            merged += [[start + k for k in g] for g in _average_linkage(sums[part], counts[part], similarity)]
        if len(merged) == len(items):
            break  # nothing more to merge chunk by chunk
        items = [[row for k in g for row in items[k]] for g in merged]
        sums = np.array([sums[g].sum(axis=0) for g in merged])
        counts = np.array([counts[g].sum() for g in merged])
    out = [[row for k in g for row in items[k]] for g in _average_linkage(sums, counts, similarity)]
    return sorted((sorted(g) for g in out), key=lambda g: g[0])


def _average_linkage(sums: Any, counts: Any, similarity: float) -> list[list[int]]:
    """Groups of items (each the sum of its unit vectors and their number), merged best
    pair first while the pair's mean similarity is at least `similarity`."""
    import numpy as np

    n = len(sums)
    if n == 0:
        return []
    sums, counts = np.array(sums, dtype=np.float64), np.array(counts, dtype=np.float64)
    alike = (sums @ sums.T) / np.outer(counts, counts)
    np.fill_diagonal(alike, -np.inf)
    members = [[i] for i in range(n)]
    alive = np.ones(n, dtype=bool)
    best = alike.argmax(axis=1)
    best_value = alike[np.arange(n), best]
    while True:
        i = int(np.argmax(np.where(alive, best_value, -np.inf)))
        if not alive[i] or best_value[i] < similarity:
            break
        j = int(best[i])
        row = (counts[i] * alike[i] + counts[j] * alike[j]) / (counts[i] + counts[j])  # i and j's mean to each
        counts[i] += counts[j]
        members[i] += members[j]
        alive[j] = False
        row[~alive] = -np.inf
        row[i] = -np.inf
        alike[i, :], alike[:, i] = row, row
        alike[j, :], alike[:, j] = -np.inf, -np.inf
        best_value[j] = -np.inf
        # A merged group is never more alike another than the nearer of its parts (average
        # linkage): only i's row, and those whose best was i or j, can have a new best.
        for k in [i, *np.flatnonzero(alive & ((best == i) | (best == j)))]:
            best[k] = int(alike[k].argmax())
            best_value[k] = alike[k, best[k]]
    return [members[i] for i in range(n) if alive[i]]
