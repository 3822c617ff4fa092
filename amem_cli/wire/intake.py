"""Bringing notes in: transcripts (`ingest`) and files (`import`), and their reports."""

from typing import Any

from . import Request
from ..records import Record, encode


class IngestReport(Record):
    name: str  # the transcript's: a file name, or "stdin"
    ids: list[str] = []  # the notes added, in order
    skipped: int = 0  # notes present already
    redactions: int = 0
    similar: list[dict[str, Any]] = []  # {"id", "similar_to", "score"}
    queued: int = 0  # notes whose model work is queued

    derived = ("ingested",)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ingested": len(self.ids), "skipped": self.skipped, "redactions": self.redactions,
                "ids": list(self.ids), "similar": encode(self.similar), "queued": self.queued}


class ImportReport(Record):
    ids: list[str] = []  # the notes imported, in order
    skipped: int = 0  # lines or files that could not be imported (see `problems`)
    duplicates: int = 0  # imported before, so left alone
    problems: list[str] = []  # "path:line: what is wrong", one per skipped
    warnings: list[str] = []
    redactions: int = 0  # secrets replaced by [REDACTED:kind] in the notes imported
    queued: int = 0  # notes whose model work is queued

    derived = ("imported",)

    def to_json(self) -> dict[str, Any]:
        return {"imported": len(self.ids), "skipped": self.skipped, "duplicates": self.duplicates, "ids": list(self.ids),
                "problems": list(self.problems), "warnings": list(self.warnings), "redactions": self.redactions,
                "queued": self.queued}

    to_dict = to_json  # (the Python API's name for it)

class Ingest(Request, op="ingest", result=list[IngestReport], starts_server=True):
    transcripts: list[list[str]]  # [name, text] pairs, read by the client
    redact: bool = True
    wait: bool = False
    ttl: str | None = None  # each note expires this long after its date


class Import(Request, op="import", result=ImportReport, starts_server=True, redo=True):
    path: str  # absolute, or '-' for `stdin`
    wait: bool = False
    batch: int = 256
    redact: bool = True
    stdin: str | None = None  # the JSONL text the client read from its standard input
    ttl: str | None = None  # each note expires this long after its date (unless it says when)
