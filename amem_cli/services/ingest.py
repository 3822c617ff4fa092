"""Transcripts in: split into atomic notes, secrets redacted, nothing added twice.

Redaction happens before a note is built (on a text transcript whole, before it is cut
into turns and paragraphs; on each message of a JSON one): the files, the index, the
vectors and the model (which works on the stored content) see only redacted text.
A transcript is one sequence (`NoteService.add_many`, in batches that continue it).
A note whose `metadata.source_hash` (source pointer + content) is in the vault already
is skipped, so ingesting a transcript again adds nothing. New notes that nearly repeat
a note from elsewhere are reported as `similar`, never merged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..redact import redact
from ..transcripts import parse, split
from .notes import NoteService

BATCH = 256
SIMILAR = 0.9  # cosine at which a new note "nearly repeats" an existing one
NEIGHBOURS = 10  # nearest notes looked at for each new note


@dataclass
class IngestReport:
    name: str  # the transcript's: a file name, or "stdin"
    ids: list[str] = field(default_factory=list)  # the notes added, in order
    skipped: int = 0  # notes present already
    redactions: int = 0
    similar: list[dict[str, Any]] = field(default_factory=list)  # {"id", "similar_to", "score"}

    def to_dict(self) -> dict[str, Any]:
        return {
            "ingested": len(self.ids), "skipped": self.skipped,
            "redactions": self.redactions, "ids": list(self.ids), "similar": list(self.similar),
        }


class Ingester:
    def __init__(self, notes: NoteService):
        self.notes = notes

    def ingest(self, text: str, name: str, *, redact_secrets: bool = True, defer: bool = False, batch: int = BATCH) -> IngestReport:
        report = IngestReport(name)

        def redacted(part: str) -> str:
            part, n = redact(part)
            report.redactions += n
            return part

        messages = parse(text, clean=redacted if redact_secrets else None)
        self.notes.indexer.sync()
        known = self.notes.index.notes_by_metadata("source_hash")
        pending: list[dict[str, Any]] = []
        after: str | None = None  # the transcript's sequence so far ends with this note

        def flush() -> None:
            nonlocal after
            if pending:
                added = self.notes.add_many(pending, after=after, defer=defer, redact=redact_secrets)
                report.ids.extend(n.id for n in added)
                after = added[-1].id
                pending.clear()

        for chunk in split(messages, name):
            fields = chunk.fields()
            existing = known.get(fields["metadata"]["source_hash"])
            if existing is not None:
                report.skipped += 1
                flush()
                after = existing  # what follows continues the sequence from it
                continue
            pending.append(fields)
            if len(pending) >= batch:
                flush()
        flush()
        report.similar = self._similar(report.ids)
        return report

    def _similar(self, ids: list[str]) -> list[dict[str, Any]]:
        """For each new note, the nearest note not from this transcript at cosine >= SIMILAR."""
        indexer, own, out = self.notes.indexer, set(ids), []
        vectors = indexer.vectors_of(ids)
        found = [i for i in ids if i in vectors]
        for note_id, near in zip(found, indexer.nearest_many([vectors[i] for i in found], NEIGHBOURS + 1)):
            for other, score in near:
                if other not in own:
                    if score >= SIMILAR:
                        out.append({"id": note_id, "similar_to": other, "score": round(score, 2)})
                    break
        return out
