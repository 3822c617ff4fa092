"""A prompt-ready block of notes for an agent, within a token budget."""

from __future__ import annotations

from collections.abc import Iterable

from ..models import Note


def estimate_tokens(text: str) -> int:
    """About four characters per token: close enough for English and code with the
    common BPE tokenizers, and needs no model. Rounded up so a budget is never overrun."""
    return -(-len(text) // 4)


def note_block(note: Note) -> str:
    """One note: id and date, the text, then what the index knows about it."""
    head = f"[{note.id}]" + (f" {note.created_at:%Y-%m-%d %H:%M}" if note.created_at else "")
    lines = [head, note.content.strip()]
    if note.context:
        lines.append(f"Context: {note.context}")
    if note.keywords:
        lines.append("Keywords: " + ", ".join(note.keywords))
    if note.tags:
        lines.append("Tags: " + ", ".join(note.tags))
    links = [f"[[{i}]]" for i in note.links + note.backlinks]
    if links:
        lines.append("Links: " + " ".join(dict.fromkeys(links)))
    sequence = [f"{label} [[{i}]]" for label, i in (("after", note.previous), ("before", note.next)) if i]
    if sequence:
        lines.append("Sequence: " + ", ".join(sequence))
    return "\n".join(lines)


def fit(notes: Iterable[Note], max_tokens: int | None = None) -> list[Note]:
    """The notes whose blocks fit the budget, best first. A note is never cut in half (a
    partial memory misleads more than a missing one): one that does not fit is left out
    and a shorter one further down may take its place."""
    chosen: list[Note] = []
    used = 0
    for note in notes:
        cost = estimate_tokens(note_block(note)) + (1 if chosen else 0)  # the blank line between blocks
        if max_tokens is not None and used + cost > max_tokens:
            continue
        chosen.append(note)
        used += cost
    return chosen


def build_context(notes: Iterable[Note], max_tokens: int | None = None) -> str:
    return "\n\n".join(note_block(n) for n in fit(notes, max_tokens))
