"""Plain data: notes and what services return. No I/O here."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from .timeutil import to_datetime

# Frontmatter keys amem owns, in the order they are written.
NOTE_KEYS = (
    "id",
    "keywords",
    "tags",
    "context",
    "created",
    "updated",
    "links",
    "backlinks",
    "previous",
    "next",
    "supersedes",
    "superseded_by",
    "expires",
    "boxes",
    "metadata",
)

# Metadata key listing the fields a model wrote (see `Note.generated`).
GENERATED = "amem_generated"
# Metadata key listing the fields the deterministic method wrote in a model's place.
FALLBACKS = "amem_fallbacks"
# Metadata key holding the boxes amem filed the note in, as it wrote them (see `Note.filed`).
FILED = "amem_boxes"
# Metadata key: the dates a note was said again (an exact duplicate, notes consolidated into it).
OCCURRENCES = "amem_occurrences"
# What a model may write for a note (the `model_fields` setting chooses). Not boxes: they
# are the vault's topics, found among all its notes (`steps.boxes`), not one note's field.
MODEL_FIELDS = ("keywords", "tags", "context", "evolution")


@dataclass
class Note:
    """One atomic memory: a Markdown file with YAML frontmatter.

    `links`, `backlinks`, `previous` and `next` name other notes. Read from a file they
    are as the person wrote them (`[[Project Plan|the plan]]` stays so; amem's own
    `[[id]]` is held as the id); read from the index, each is the id of the note it
    names (`links.target` and the index resolve them), or its target as written when it
    names no note."""

    id: str
    content: str
    keywords: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    context: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    links: list[str] = field(default_factory=list)
    backlinks: list[str] = field(default_factory=list)
    boxes: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    # Sequence links (Folgezettel): the note that came just before / after this one.
    previous: str | None = None
    next: str | None = None
    # The older notes whose facts this one changes, and (in an older note's file, where amem
    # may write it) the newer notes that change it. Links as written, like `links`.
    supersedes: list[str] = field(default_factory=list)
    superseded_by: list[str] = field(default_factory=list)
    # When the note stops being true (an on-call week, a sprint plan): out of search after.
    expires: datetime | None = None
    # Frontmatter keys a person added that amem does not own; kept as they are.
    extra: dict[str, Any] = field(default_factory=dict)
    # Whether the file keeps a list of backlinks (it has a `backlinks` key): every note amem
    # writes does; a person's note gets one when amem first links a note to it.
    keeps_backlinks: bool = True

    def copy(self) -> "Note":
        """A copy with lists and dicts of its own (`replace` alone shares them); far
        cheaper than `copy.deepcopy`, which an import would call thousands of times."""
        return replace(
            self,
            keywords=list(self.keywords), tags=list(self.tags), links=list(self.links),
            backlinks=list(self.backlinks), boxes=list(self.boxes), supersedes=list(self.supersedes),
            superseded_by=list(self.superseded_by),
            metadata=copy.deepcopy(self.metadata), extra=copy.deepcopy(self.extra),
        )

    @property
    def generated(self) -> list[str]:
        """The fields (keywords, tags, context) a model wrote, not a person or the
        deterministic method; recorded in `metadata.amem_generated`."""
        return [str(f) for f in self.metadata.get(GENERATED) or [] if isinstance(f, str)]

    @property
    def derived(self) -> list[str]:
        """The fields amem derived from the text, not a person: those a model wrote and
        those the deterministic method wrote in its place (`metadata.amem_fallbacks`)."""
        fallbacks = [str(f) for f in self.metadata.get(FALLBACKS) or [] if isinstance(f, str)]
        return list(dict.fromkeys([*self.generated, *fallbacks]))

    @property
    def filed(self) -> bool:
        """Whether the note's boxes are amem's: those it filed the note in (recorded in
        `metadata.amem_boxes`), not a person's own choice (given, or changed by hand)."""
        return bool(self.boxes) and self.metadata.get(FILED) == self.boxes

    def filed_in(self, boxes: list[str]) -> "Note":
        """The note filed by amem in `boxes` (recorded as amem's)."""
        return replace(self, boxes=list(boxes), metadata={**self.metadata, FILED: list(boxes)})

    def with_generated(self, fields: list[str]) -> dict[str, Any]:
        """The note's metadata with `fields` added to those a model wrote."""
        merged = list(dict.fromkeys([*self.generated, *fields]))
        return {**self.metadata, GENERATED: merged} if merged else dict(self.metadata)

    def to_dict(self) -> dict[str, Any]:
        """Stable JSON shape for `--json` output and the API."""
        return {
            "id": self.id,
            "content": self.content,
            "keywords": list(self.keywords),
            "tags": list(self.tags),
            "context": self.context,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
            "links": list(self.links),
            "backlinks": list(self.backlinks),
            "previous": self.previous,
            "next": self.next,
            "supersedes": list(self.supersedes),
            "superseded_by": list(self.superseded_by),
            "expires": self.expires.isoformat() if self.expires else None,
            "boxes": list(self.boxes),
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Note":
        """A note from the shape `to_dict` gives (and, besides, its `extra`)."""
        fields = dict(data)
        for key in ("created_at", "updated_at"):
            if fields.get(key) is not None:
                fields[key] = to_datetime(fields[key])
        return cls(**fields)


@dataclass
class SearchHit:
    note: Note
    score: float
    # Per-list ranks and scores, for `--explain`.
    sources: dict[str, dict[str, float]] = field(default_factory=dict)
    # The notes this one replaces and those that replaced it, as things stood for the
    # search: [{"id", "date"}] (`services.supersession.Chain`).
    replaces: list[dict[str, str | None]] = field(default_factory=list)
    replaced_by: list[dict[str, str | None]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = self.note.to_dict()
        d["score"] = round(self.score, 6)
        d["sources"] = self.sources
        d["replaces"] = self.replaces
        d["replaced_by"] = self.replaced_by
        return d


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    removed: int = 0
    errors: list[str] = field(default_factory=list)
    # Notes whose text a person changed, as they were indexed before the change.
    edited: list[Note] = field(default_factory=list)
    # Notes seen for the first time in files amem never wrote (no `updated`): a person's.
    new: list[Note] = field(default_factory=list)
    # The ids of notes whose files another program saved over (a person's editor, most often).
    saved: list[str] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.removed

    def to_dict(self) -> dict[str, Any]:
        return {"added": self.added, "updated": self.updated, "removed": self.removed, "errors": list(self.errors)}
