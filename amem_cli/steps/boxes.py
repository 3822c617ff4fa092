"""Step 4, boxes: the topic folders a note belongs to. None are predefined.

A box is a topic. The model sees the existing boxes the note fits (their name is a word
of the note, or their related notes share a keyword or tag with it), biggest first, and
may reuse one of them or open a new one; names become short lowercase slugs, a name that
matches an existing box (also in singular/plural) reuses it, a new box must be named
after words of the note, and no box is a junk label (`checks.junk_label`: numbers,
dates, ids, files, roles, possessives). A person's name is allowed: without a list of
names it cannot be told from a product's (`postgres`), and such boxes are useful. But a
conversation's turn gets no box named after someone who speaks in the vault's
conversations (`people`): each of them is in every turn of their chats, so each got a
box holding most of a chat (LoCoMo conv-26 without a model: "caroline" held 289 of 419
notes, "melanie" 175), where the turns' topics belong. The deterministic fallback
reuses boxes named like one of the note's tags or keywords, else opens one named after
the first that names a topic, else `inbox`: better no box than a wrong one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection, Iterable, Mapping, Sequence

from amem_cli.llm import prompts
from amem_cli.llm.base import LLM
from amem_cli.llm.structured import clean_item
from amem_cli.steps._common import StepStats, ask
from amem_cli.steps._text import is_stop_or_vague, slugify, stem, word_matches
from amem_cli.text import words
from amem_cli.steps.checks import grounded_in, junk_label

DEFAULT_BOX = "inbox"
# Keyword and tag words a note shares with a box's related notes to fit the box.
SHARED_WORDS = 2


@dataclass(kw_only=True)
class BoxDecision(StepStats):
    boxes: list[str]
    fallback: bool = False
    # The boxes in `boxes` that do not exist yet.
    new_boxes: list[str] = field(default_factory=list)


def _singular(slug: str) -> str:
    parts = slug.split("-")
    last = parts[-1]
    if len(last) > 3 and last.endswith("s") and not last.endswith("ss"):
        last = last[:-1]
    return "-".join(parts[:-1] + [last])


def classify_boxes(
    content: str,
    keywords: Sequence[str],
    tags: Sequence[str],
    existing: Mapping[str, int],
    *,
    llm: LLM | None,
    max_boxes: int = 2,
    related: Mapping[str, Iterable[str]] | None = None,
    proposed: Sequence[object] | None = None,
    people: Collection[str] = (),
) -> BoxDecision:
    """The boxes for a note. `related`: for some existing boxes, the keywords and tags of
    their notes that are related to this one (what the caller found cheaply); a box
    fits the note when its name, or one of those terms, shares a word with the note.
    `proposed`: names the model already gave (with the note's other fields, offered
    `fitting_boxes`): checked as its answer here would be, and the model is not asked.
    `people`: the names of those who speak in the vault: no box is named after one of them."""
    max_boxes = max(1, max_boxes)
    people = _name_words(people)
    note_words = set(words(" ".join([content, " ".join(keywords), " ".join(tags)])))
    fitting = fitting_boxes(content, keywords, tags, existing, related, people)
    lookup = _lookup(fitting)
    others = _lookup([(n, c) for n, c in existing.items() if (n, c) not in fitting])

    decision = BoxDecision(boxes=[])
    items: Sequence[object] = proposed or []
    if proposed is None:
        parsed = ask(
            llm,
            prompts.boxes_messages(content, list(keywords), list(tags), fitting),
            prompts.boxes_schema(max_boxes),
            max_tokens=12 + 12 * max_boxes,
            stats=decision,
        )
        if parsed is not None and parsed.data is not None:
            raw = parsed.data.get("boxes")
            items = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
    chosen: list[str] = []
    for item in items:
        name, why = _resolve(item, lookup, others, note_words, people)
        if name is None:
            decision.problems.append(f"box {item!r} dropped: {why}")
        elif name not in chosen:
            chosen.append(name)
        if len(chosen) >= max_boxes:
            break
    if not chosen:
        decision.fallback = True
        chosen = fallback_boxes(keywords, tags, lookup, max_boxes=max_boxes, people=people)
    decision.boxes = chosen
    decision.new_boxes = [b for b in chosen if b not in existing]
    return decision


def fitting_boxes(
    content: str,
    keywords: Sequence[str],
    tags: Sequence[str],
    existing: Mapping[str, int],
    related: Mapping[str, Iterable[str]] | None = None,
    people: Collection[str] = (),
) -> list[tuple[str, int]]:
    """The existing boxes the note fits, biggest first: the only ones offered to the model
    or accepted from it (offered all, a model filed unrelated notes into the first boxes
    it made: 8 of 12 in one). None named after one of `people` (see `classify_boxes`)."""
    people = _name_words(people)
    note_words = set(words(" ".join([content, " ".join(keywords), " ".join(tags)])))
    label_words = set(words(" ".join([*keywords, *tags])))
    return [
        (name, count)
        for name, count in sorted(existing.items(), key=lambda kv: (-int(kv[1] or 0), kv[0]))
        if _fits(name, note_words, label_words, (related or {}).get(name, ())) and not _names(name, people)
    ]


def _lookup(boxes: Iterable[tuple[str, int]]) -> dict[str, str]:
    """Box names by slug and by singular slug."""
    lookup: dict[str, str] = {}
    for name, _count in boxes:
        slug = slugify(name)
        if slug:
            lookup.setdefault(slug, name)
            lookup.setdefault(_singular(slug), name)
    return lookup


def _fits(box: str, note_words: set[str], label_words: set[str], terms: Iterable[str]) -> bool:
    """The note's words name the box, or its keywords and tags share `SHARED_WORDS`
    content words with those of the box's related notes (one is often chance:
    "connection pool" and "batch pool", "version" and "versioning")."""
    if grounded_in(box, note_words):
        return True
    term_words = {w for w in words(" ".join(terms)) if not is_stop_or_vague(w) and junk_label(w) is None}
    shared = {stem(w) for w in label_words if not is_stop_or_vague(w) and word_matches(w, term_words)}
    return len(shared) >= SHARED_WORDS


def _name_words(people: Iterable[str]) -> set[str]:
    """The words of the names, as slugs have them ("Mary Ann" -> mary, ann)."""
    return {w for name in people for w in slugify(name).split("-") if w}


def _names(term: str, people: Collection[str]) -> bool:
    """Whether the term names one of `people` (the words of their names, lower-cased):
    "Andrew", "hey-andrew"."""
    return bool(people) and not set(slugify(term).split("-")).isdisjoint(people)


def _resolve(
    item: object, lookup: dict[str, str], others: dict[str, str], note_words: set[str], people: Collection[str] = ()
) -> tuple[str | None, str]:
    """(the box `item` names, "") or (None, why not)."""
    text = clean_item(item, max_chars=prompts.BOX_MAX_CHARS, max_words=3)
    slug = slugify(text)
    if not slug:
        return None, "no name"
    why = junk_label(text) or junk_label(slug)
    if why:
        return None, why
    if _names(slug, people):
        return None, "names someone who speaks in the vault, not a topic"
    for key in (slug, _singular(slug)):
        if key in lookup:
            return lookup[key], ""
    if slug in others or _singular(slug) in others:
        return None, "an existing box the note does not fit"
    # A new box is named after the note, not invented.
    if grounded_in(slug, note_words):
        return slug, ""
    return None, "not words of the note"


def fallback_boxes(
    keywords: Sequence[str],
    tags: Sequence[str],
    lookup: Mapping[str, str],
    *,
    max_boxes: int = 2,
    people: Collection[str] = (),
) -> list[str]:
    """Existing boxes named like one of the note's tags or keywords; else a new box named
    after the first of them that names a topic; else the inbox. Terms that name one of
    `people` (the words of their names, lower-cased; see `classify_boxes`) are passed over."""
    out: list[str] = []
    terms = [t for t in list(tags) + list(keywords) if not _names(t, people)]
    for term in terms:
        slug = slugify(term)
        name = lookup.get(slug) or lookup.get(_singular(slug)) if slug else None
        if name and name not in out:
            out.append(name)
            if len(out) >= max_boxes:
                return out
    if out:
        return out
    for term in terms:
        slug = slugify(term)
        if slug and junk_label(term) is None and junk_label(slug) is None:
            return [slug]
    return [DEFAULT_BOX]
