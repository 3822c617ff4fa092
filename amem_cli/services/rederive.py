"""A person's edit of a note's text: the fields amem derived from the old text are derived
again from the new one, so none stands contradicting what the note says.

Which fields amem derived is written in the note (`Note.derived`); what the text was when
it derived them is in the index (the note as indexed before the edit). Fields a person
changed in the same save are theirs from then on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..embed.base import Embedder
from ..models import FALLBACKS, GENERATED, Note
from ..steps.construct import FIELDS, construct
from .jobs import QUEUED

# The fields derived from a note's text (evolution and the model write no others). Not its
# boxes: those are the vault's topics, which an edit leaves until `amem boxes --rebuild`.
DERIVABLE = FIELDS


def to_rederive(note: Note, before: Note) -> list[str]:
    """The fields of `note` (as its file holds them) to derive again after its text
    changed from `before`'s: those amem derived and the person left as they were."""
    if note.extra.get("pinned") is True:
        return []
    return [f for f in note.derived if f in DERIVABLE and getattr(note, f) == getattr(before, f)]


def rederived(note: Note, before: Note, *, embedder: Embedder | None) -> Note:
    """`note` with the fields `to_rederive` names derived again from its text by the
    deterministic method (at once, without a model: a model's version may follow) and
    recorded as such (`metadata.amem_fallbacks`), and with derived fields the person
    changed in the same save recorded as theirs (in neither list). A pinned note as it is."""
    if note.extra.get("pinned") is True:
        return note
    redo = to_rederive(note, before)
    given = {f: getattr(note, f) for f in FIELDS if f not in redo}
    built = construct(note.content, **given, llm=None, embedder=embedder)
    new = replace(note, **{f: getattr(built, f) for f in FIELDS if f in redo})
    # The fields derived again are the deterministic method's now; those taken over, the person's.
    return replace(new, metadata=recorded(note.metadata, [f for f in note.generated if f not in DERIVABLE],
                                          [f for f in fallbacks_of(note) if f not in DERIVABLE] + redo))


def filled(current: Note, built: Note, owed: list[str]) -> Note:
    """`current` (the file as it is now) with its queued work done: `built` (the pipeline's
    build of the note, from the same text) gives its empty fields (its boxes too) and the
    `owed` ones the deterministic method still holds in the model's place (not those a
    person took over)."""
    taken = [f for f in DERIVABLE if not getattr(current, f) or (f in owed and f in fallbacks_of(current))]
    metadata = {k: v for k, v in {**built.metadata, **current.metadata}.items() if k != QUEUED}
    generated = [f for f in current.generated if f not in taken] + [f for f in built.generated if f in taken]
    # Where the model failed again, the deterministic field stays recorded as such: still amem's.
    fallbacks = [f for f in fallbacks_of(current) if f not in taken] + [
        f for f in taken if f not in built.generated and (f in owed or f in fallbacks_of(built))]
    boxes = current.boxes or built.boxes  # a note without boxes waits in the inbox, as `built` says, until it is filed
    return replace(current, **{f: getattr(built, f) for f in taken}, boxes=boxes,
                   metadata=recorded(metadata, generated, fallbacks))


def fallbacks_of(note: Note) -> list[str]:
    return [f for f in note.derived if f not in note.generated]


def recorded(metadata: Mapping, generated: list[str], fallbacks: list[str]) -> dict:
    """`metadata` recording these fields as a model's and the deterministic method's;
    keys kept in their places, so the file changes only where it must."""
    out = dict(metadata)
    for key, fields in ((GENERATED, generated), (FALLBACKS, fallbacks)):
        if fields:
            out[key] = list(dict.fromkeys(fields))
        else:
            out.pop(key, None)
    return out
