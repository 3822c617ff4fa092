"""Pure parse and render of note files: YAML frontmatter + Markdown body.

Round trip: `parse_note(render_note(n))` gives `n` back, and rendering a parsed
amem file gives the same bytes. Keys a person added are kept in `Note.extra`.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from .errors import NoteFormatError
from .models import NOTE_KEYS, Note
from .timeutil import to_datetime

_FENCE = "---"
_WIKILINK = re.compile(r"^\[\[([^\]|#]+)(?:[|#][^\]]*)?\]\]$")
_YAML = YAMLHandler()  # python-frontmatter's handler loads with yaml.SafeLoader


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # libyaml when present: ~10x faster
    """Safe dumping, with date-times written as ISO 8601 (`2025-01-03T09:15:00+00:00`)."""


_Dumper.add_representer(
    datetime, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:timestamp", value.isoformat())
)


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """Split normalised text into (frontmatter or None, body, line where the body starts)."""
    if not (text.startswith(_FENCE + "\n") or text == _FENCE):
        return None, text, 1
    lines = text.split("\n")
    for i in range(1, len(lines)):
        if lines[i].rstrip() in (_FENCE, "..."):
            fm = "\n".join(lines[1:i])
            body = "\n".join(lines[i + 1 :])
            return fm, body, i + 2
    raise ValueError("the frontmatter opened by --- on line 1 is never closed")


def normalise_text(raw: str) -> str:
    """Drop a BOM and turn CRLF / CR line ends into LF."""
    if raw.startswith("\ufeff"):
        raw = raw[1:]
    return raw.replace("\r\n", "\n").replace("\r", "\n")


def parse_note(raw: str, *, path: str = "<text>", fallback_id: str | None = None) -> Note:
    """Parse a note file's text. Raises NoteFormatError with the path and line."""
    text = normalise_text(raw)
    try:
        fm, body, _ = split_frontmatter(text)
    except ValueError as exc:
        raise NoteFormatError(path, 1, str(exc)) from None
    data: Any = {}
    if fm is not None and fm.strip():
        try:
            data = _YAML.load(fm)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 2 if mark is not None else 1
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise NoteFormatError(path, line, f"bad YAML frontmatter: {problem}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise NoteFormatError(path, 2, "the frontmatter must be a mapping of keys to values")
    if body.endswith("\n"):
        body = body[:-1]  # render_note adds exactly one final newline
    try:
        return _note_from_data(data, body, fallback_id, path)
    except (TypeError, ValueError) as exc:
        raise NoteFormatError(path, 2, str(exc)) from None


def _note_from_data(data: dict, body: str, fallback_id: str | None, path: str) -> Note:
    note_id = data.get("id", fallback_id)
    if note_id is None or str(note_id).strip() == "":
        raise ValueError("the note has no id")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValueError("metadata must be a mapping")
    return Note(
        id=str(note_id).strip(),
        content=body,
        keywords=str_list(data.get("keywords"), "keywords"),
        tags=[t.lstrip("#") for t in str_list(data.get("tags"), "tags")],
        context=_single_line(data.get("context")),
        created_at=_date_or_none(data.get("created"), "created"),
        updated_at=_date_or_none(data.get("updated"), "updated"),
        links=[unwrap_link(x) for x in str_list(data.get("links"), "links")],
        backlinks=[unwrap_link(x) for x in str_list(data.get("backlinks"), "backlinks")],
        boxes=str_list(data.get("boxes"), "boxes"),
        metadata=_plain(metadata),
        previous=_one_link(data.get("previous"), "previous"),
        next=_one_link(data.get("next"), "next"),
        extra={k: _plain(v) for k, v in data.items() if k not in NOTE_KEYS},
    )


def render_note(note: Note) -> str:
    """The file text for a note: frontmatter in a fixed key order, then the content."""
    data: dict[str, Any] = {
        "id": note.id,
        "keywords": list(note.keywords),
        "tags": list(note.tags),
        "context": note.context,
        "created": note.created_at,
        "updated": note.updated_at,
        "links": [f"[[{x}]]" for x in note.links],
        "backlinks": [f"[[{x}]]" for x in note.backlinks],
        "previous": f"[[{note.previous}]]" if note.previous else None,
        "next": f"[[{note.next}]]" if note.next else None,
        "boxes": list(note.boxes),
        "metadata": dict(note.metadata),
    }
    for key in ("created", "updated", "previous", "next"):
        if data[key] is None:
            del data[key]
    data.update({k: v for k, v in note.extra.items() if k not in data})
    fm = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10**9)
    return f"{_FENCE}\n{fm}{_FENCE}\n{note.content}\n"


def unwrap_link(value: str) -> str:
    """`[[id]]`, `[[id|alias]]` or `id` -> `id`."""
    m = _WIKILINK.match(value.strip())
    return (m.group(1) if m else value).strip()


def _one_link(value: Any, name: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} must be one note id")
    return unwrap_link(value) or None


def str_list(value: Any, name: str = "value") -> list[str]:
    """A YAML list (or one string) of strings, stripped, without blanks or duplicates."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{name} must be a list of strings")
    out: list[str] = []
    for item in value:
        if item is None or isinstance(item, (dict, list)):
            raise ValueError(f"{name} must be a list of strings")
        s = _single_line(item)
        if s and s not in out:
            out.append(s)
    return out


def _single_line(value: Any) -> str:
    if value is None:
        return ""
    return " ".join(str(value).split())


def _date_or_none(value: Any, name: str) -> datetime | None:
    if value is None or value == "":
        return None
    try:
        return to_datetime(value)
    except Exception:
        raise ValueError(f"{name} is not a date-time: {value!r}") from None


def _plain(value: Any) -> Any:
    """YAML turns some strings into dates; give JSON-friendly values back."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
