"""`amem consolidate`: the same fact said again (across sessions, an agent saving a
preference each time) becomes one note with every occurrence's date.

Two notes are one fact said twice when their vectors are within `SIMILAR` (cosine), the
same person says them (when either names a speaker), and the supersession detector finds
no value of one changed in the other. Each group keeps its earliest note, which records
the others' dates (`metadata.amem_occurrences`, a revision); the others go to the trash
(`amem undo ID` brings one back). Pinned notes are never merged.
"""

from __future__ import annotations

from ..retrieve.fields import speaker_of
from ..models import OCCURRENCES, Note
from ..steps.supersede import NO, judge
from ..timeutil import to_datetime, to_utc
from .notes import NoteService

# Cosine at which two notes may say the same thing (near-duplicates `amem ingest` names
# start at 0.9; merging removes notes, so it asks for more).
SIMILAR = 0.95
NEIGHBOURS = 5  # nearest notes looked at for each note
BATCH = 256  # notes whose neighbours are asked for in one call


def consolidate(service: NoteService, *, dry_run: bool) -> list[dict]:
    """The groups merged (or, `dry_run`, that would be): [{"kept", "merged", "dates"}],
    oldest first."""
    service.indexer.sync()
    service.indexer.flush_vectors()
    notes = {n.id: n for n in service.index.notes.list(newest_first=False) if n.extra.get("pinned") is not True}
    groups = _groups(service, notes)
    out = []
    for group in groups:
        kept, *merged = sorted((notes[i] for i in group), key=_when)
        dates = [d for n in merged for d in _dates(n)]
        out.append({"kept": kept.id, "merged": [n.id for n in merged], "dates": dates})
        if not dry_run:
            service.record_occurrences(kept.id, [to_datetime(d) for d in dates], what="consolidate")
            for n in merged:
                service.delete(n.id)
    return out


def _groups(service: NoteService, notes: dict[str, Note]) -> list[set[str]]:
    """Notes that say one fact, joined in groups (a says what b says, b what c says)."""
    ids = list(notes)
    parent = {i: i for i in ids}

    def root(i: str) -> str:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for start in range(0, len(ids), BATCH):
        chunk = ids[start:start + BATCH]
        vectors = service.indexer.vectors_of(chunk)
        have = [i for i in chunk if i in vectors]
        for note_id, near in zip(have, service.indexer.nearest_many([vectors[i] for i in have], NEIGHBOURS + 1)):
            for other, score in near:
                if other != note_id and other in notes and score >= SIMILAR and _same_fact(notes[note_id], notes[other]):
                    parent[root(note_id)] = root(other)
    groups: dict[str, set[str]] = {}
    for i in ids:
        groups.setdefault(root(i), set()).add(i)
    return sorted((g for g in groups.values() if len(g) > 1), key=lambda g: min(_when(notes[i]) for i in g))


def _same_fact(a: Note, b: Note) -> bool:
    """The same speaker, and neither changes a value the other states."""
    if (speaker_of(a) or "").casefold() != (speaker_of(b) or "").casefold():
        return False
    older, newer = sorted((a, b), key=_when)
    return judge(newer.content, older.content).decision == NO and judge(older.content, newer.content).decision == NO


def _when(note: Note):
    return (to_utc(note.created_at).isoformat() if note.created_at else "", note.id)


def _dates(note: Note) -> list[str]:
    """When the note was said: its date, and those it records already."""
    known = [str(d) for d in note.metadata.get(OCCURRENCES) or [] if isinstance(d, str)]
    return [*([note.created_at.isoformat()] if note.created_at else []), *known]

