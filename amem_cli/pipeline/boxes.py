"""Step 4, boxes: the topic folders a note belongs to. None are predefined.

The model sees the existing boxes (with their sizes) and may reuse one or open a new
one; names become short lowercase slugs, a name that matches an existing box (also in
singular/plural) reuses it, and a new box must be named after words of the note. The
deterministic fallback reuses existing boxes named like one of the note's tags or
keywords, else opens one named after the first tag.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from amem_cli.llm import prompts
from amem_cli.llm.base import LLM
from amem_cli.llm.structured import clean_item
from amem_cli.pipeline._common import StepStats, ask
from amem_cli.pipeline._text import slugify, word_matches, words

DEFAULT_BOX = "inbox"


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
) -> BoxDecision:
    max_boxes = max(1, max_boxes)
    # Existing boxes by slug (and by singular slug), biggest first.
    ordered = sorted(existing.items(), key=lambda kv: (-int(kv[1] or 0), kv[0]))
    lookup: dict[str, str] = {}
    for name, _count in ordered:
        slug = slugify(name)
        if slug:
            lookup.setdefault(slug, name)
            lookup.setdefault(_singular(slug), name)

    decision = BoxDecision(boxes=[])
    parsed = ask(
        llm,
        prompts.boxes_messages(content, list(keywords), list(tags), ordered),
        prompts.boxes_schema(max_boxes),
        max_tokens=12 + 12 * max_boxes,
        stats=decision,
    )
    chosen: list[str] = []
    if parsed is not None and parsed.data is not None:
        raw = parsed.data.get("boxes")
        items = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
        note_words = set(words(" ".join([content, " ".join(keywords), " ".join(tags)])))
        for item in items:
            name = _resolve(item, lookup, note_words)
            if name is None:
                decision.problems.append(f"box {item!r} dropped")
            elif name not in chosen:
                chosen.append(name)
            if len(chosen) >= max_boxes:
                break
    if not chosen:
        decision.fallback = True
        chosen = fallback_boxes(keywords, tags, lookup, max_boxes=max_boxes)
    decision.boxes = chosen
    decision.new_boxes = [b for b in chosen if b not in existing]
    return decision


def _resolve(item: object, lookup: dict[str, str], note_words: set[str]) -> str | None:
    text = clean_item(item, max_chars=prompts.BOX_MAX_CHARS, max_words=3)
    slug = slugify(text)
    if not _names_a_topic(slug):
        return None
    if slug in lookup:
        return lookup[slug]
    if _singular(slug) in lookup:
        return lookup[_singular(slug)]
    # A new box must be named after the note, not invented.
    if any(word_matches(w, note_words) for w in slug.split("-")):
        return slug
    return None


def fallback_boxes(
    keywords: Sequence[str],
    tags: Sequence[str],
    lookup: Mapping[str, str],
    *,
    max_boxes: int = 2,
) -> list[str]:
    out: list[str] = []
    for term in list(tags) + list(keywords):
        slug = slugify(term)
        name = lookup.get(slug) or lookup.get(_singular(slug)) if slug else None
        if name and name not in out:
            out.append(name)
            if len(out) >= max_boxes:
                return out
    if out:
        return out
    for term in list(tags) + list(keywords):
        slug = slugify(term)
        if _names_a_topic(slug):
            return [slug]
    return [DEFAULT_BOX]


def _names_a_topic(slug: str) -> bool:
    """A box is a topic: its name needs a letter ("1234567890", "2023" are no topics)."""
    return any(ch.isalpha() for ch in slug)
