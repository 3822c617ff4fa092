"""Transcripts in: split into atomic notes, secrets redacted, nothing added twice.

Redaction happens before a note is built (on a text transcript whole, before it is cut
into turns and paragraphs; on each message of a JSON one): the files, the index, the
vectors and the model (which works on the stored content) see only redacted text.
A transcript is one sequence (`NoteService.add_many`, in batches that continue it).
New notes that nearly repeat a note from elsewhere are reported as `similar`, never merged.

A transcript is known by its content (`transcripts.identify`), never by its name. Its
notes carry `metadata.session` (which ingested session they belong to) and
`metadata.source_hash` (the key of the last message each holds). A transcript that
holds every message a session holds, or is held by one (the same log, piped or by path,
from any folder, or a copy taken earlier), is that session: only its messages after the
last one stored are added, continuing that session's sequence. One that parts ways with
every session it shares messages with (two chats opening with the same system prompt and
greeting) is a session of its own, with a sequence of its own. A log that gives its
session id starts its keys from it, so two such sessions never share a key.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..index.sqlite import SqliteIndex
from ..redact import redact
from ..transcripts import Message, read, split
from ..wire.intake import IngestReport
from .indexer import Indexer
from .notes import NoteService

BATCH = 256
SIMILAR = 0.9  # cosine at which a new note "nearly repeats" an existing one
NEIGHBOURS = 10  # nearest notes looked at for each new note
SESSION = "session"


@dataclass
class _Session:
    """A session the vault holds part of: its label and {message key: note id}."""

    label: str
    notes: dict[str, str]


class Ingester:
    def __init__(self, index: SqliteIndex, indexer: Indexer, notes: NoteService, date_order: str = "auto"):
        """`date_order`: how a message's time that reads both ways is read (`timeutil.DATE_ORDERS`)."""
        self.index = index
        self.indexer = indexer
        self.notes = notes
        self.date_order = date_order

    def ingest(self, text: str, name: str, *, redact_secrets: bool = True, defer: bool = False, batch: int = BATCH,
               ttl: timedelta | None = None) -> IngestReport:
        """The transcript's new messages as notes; `ttl`: each expires that long after its date."""
        report = IngestReport(name)

        def redacted(part: str) -> str:
            part, n = redact(part)
            report.redactions += n
            return part

        transcript = read(text, clean=redacted if redact_secrets else None, date_order=self.date_order)  # keyed after redaction
        messages = transcript.messages
        self.indexer.sync()
        every = split(messages, name)
        label, held, after = self._known(messages, every)
        todo = split(messages[held:], name)  # what follows is not merged into a note already written
        report.skipped = len(every) - len(todo) if held else 0
        for start in range(0, len(todo), batch):
            items = [c.fields() for c in todo[start : start + batch]]
            for item in items:
                item["metadata"][SESSION] = label
            added = self.notes.add_many(items, after=after, defer=defer, redact=redact_secrets, ttl=ttl)
            report.ids.extend(n.id for n in added)
            after = added[-1].id
        report.similar = self._similar(report.ids)
        report.queued = len(report.ids) if defer else 0
        return report

    def _known(self, messages: list[Message], chunks) -> tuple[str, int, str | None]:
        """Which session these messages are (its label), how many of them it holds, and
        the note holding the last of those; a new label, 0 and None for a new session."""
        keys = {m.key: m.index for m in messages}
        ours = set(keys) | {c.key for c in chunks}  # (a part of a long message has a key of its own)
        best: tuple[int, str, str] | None = None
        for session in self._sessions(keys):
            held = max(keys[k] for k in session.notes if k in keys)
            if not set(session.notes) <= ours and split(messages[held:], ""):
                continue  # it went on with other messages than these: parted ways
            if best is None or (held, session.label) > (best[0], best[1]):
                best = (held, session.label, session.notes[messages[held - 1].key])
        if best is None:
            return (messages[-1].key[:16] if messages else ""), 0, None
        return best[1], best[0], best[2]

    def _sessions(self, keys: dict[str, int]) -> list[_Session]:
        """The sessions in the vault that hold one of these messages."""
        sessions: dict[str, _Session] = {}
        for label, key, note_id in self.index.notes.metadata_values(SESSION, "source_hash"):
            sessions.setdefault(label, _Session(label, {})).notes[key] = note_id
        return [s for s in sessions.values() if any(k in keys for k in s.notes)]

    def _similar(self, ids: list[str]) -> list[dict[str, Any]]:
        """For each new note, the nearest note not from this transcript at cosine >= SIMILAR."""
        indexer, own, out = self.indexer, set(ids), []
        vectors = indexer.vectors_of(ids)
        found = [i for i in ids if i in vectors]
        for note_id, near in zip(found, indexer.nearest_many([vectors[i] for i in found], NEIGHBOURS + 1)):
            for other, score in near:
                if other not in own:
                    if score >= SIMILAR:
                        out.append({"id": note_id, "similar_to": other, "score": round(score, 2)})
                    break
        return out
