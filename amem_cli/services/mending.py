"""Links a save undid, mended at the sync that sees the save.

An editor that read a note just before amem wrote a backlink or a sequence pointer into
it, and saves from that buffer, undoes what amem wrote: the note lacks the backlink of a
note that links it, or its `next` no longer names the note that says it follows. The
other notes' files still say so, and they are the truth for their own links. So when a
sync sees a note saved over by another program, its backlinks and sequence pointers are
made to agree with the other notes as indexed from their files, as `amem doctor --fix`
would; nothing else of the note is touched, its text least of all.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import ConflictError, NotFoundError
from ..models import Note
from .writer import NoteWriter


def mend_links(writer: NoteWriter, ids: list[str]) -> None:
    """Make each note's backlinks and sequence pointers agree with the other notes. A
    note that is being saved again is left for the sync that sees that save."""
    for note_id in dict.fromkeys(ids):
        try:
            writer.update(note_id, lambda n: _agreed(n, writer.index), embed=False, sync=False)
        except (ConflictError, NotFoundError):
            continue


def _agreed(note: Note, index) -> Note:
    """The note (as its file has it) with the backlinks the notes that link it call for,
    and a `next` (or `previous`) filled in where exactly one note says it follows (or
    precedes) this one and the pointer is empty or names a note that does not agree."""
    changes = {}
    if note.keeps_backlinks:
        sources = set(index.links.linked_from([note.id]).get(note.id, ()))
        ids = index.links.resolve(note.backlinks)
        kept = [w for w in note.backlinks if ids.get(w) in sources]  # a backlink no link calls for goes
        backlinks = kept + sorted(sources - {ids[w] for w in kept} - {note.id})
        if backlinks != note.backlinks:
            changes["backlinks"] = backlinks
    for end, back in (("next", "previous"), ("previous", "next")):
        claims = index.links.pointing(note.id, back)  # the notes whose `previous` (or `next`) names this one
        if len(claims) != 1:
            continue
        written = getattr(note, end)
        current = index.links.resolve([written]).get(written) if written else None
        if current == claims[0]:
            continue
        other = index.notes.get(current) if current else None
        if other is None or getattr(other, back) != note.id:
            changes[end] = claims[0]
    return replace(note, **changes) if changes else note
