"""Pure parse and render of note files: YAML frontmatter + Markdown body.

Round trip: `parse_note(render_note(n))` gives `n` back, and rendering a parsed
amem file gives the same bytes. Keys a person added are kept in `Note.extra`.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, datetime
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .errors import NoteFormatError
from .ids import is_valid_id
from .links import target
from .models import NOTE_KEYS, Note
from .timeutil import to_datetime

_FENCE = "---"
_YAML = YAMLHandler()
_ID_LINK = re.compile(r"^\[\[([A-Za-z0-9][A-Za-z0-9_.-]*)\]\]$")  # amem's own form, `[[id]]`

# Bounds on a frontmatter once its aliases are expanded: an alias bomb ("billion laughs",
# or one long string aliased many times) is a few lines that expand to gigabytes, in
# every later walk of the values (the index stores them as JSON). The characters leave
# room for any file a note may be (2 MiB).
MAX_VALUES = 100_000
MAX_CHARS = 4_000_000
MAX_DEPTH = 100
# Keys whose values are text: `tags: [yes, 1.10]` means the words, not True and 1.1.
_TEXT_KEYS = frozenset({"id", "keywords", "tags", "context", "links", "backlinks", "previous", "next", "boxes",
                        "supersedes", "superseded_by"})
_STR_TAG = "tag:yaml.org,2002:str"


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml when present; safe either way
    """Safe loading of a note's frontmatter that also refuses what SafeLoader lets
    through: duplicate keys (one value would be lost on the next write), recursive or
    exploding aliases, and nesting deeper than anyone writes by hand."""

    def get_single_node(self) -> Node | None:
        node = super().get_single_node()
        if node is not None:
            _check_tree(node)
            _text_as_written(node)
        return node

    def construct_object(self, node: Node, deep: bool = False):
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError) as exc:  # `2025-13-45`, an integer of 5,000 digits
            raise ConstructorError(None, None, f"cannot read the value: {exc}", node.start_mark) from None
        except (AttributeError, KeyError, TypeError):  # `!!timestamp soon`, `!!bool maybe`: PyYAML trusts the tag
            raise ConstructorError(None, None, f"cannot read the value as its tag {node.tag.replace('tag:yaml.org,2002:', '!!')} says",
                                   node.start_mark) from None


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check_tree(root: Node) -> None:
    """Measure the size and depth as if every alias were copied out, without copying
    (each shared node is measured once), and look for duplicate keys. Scalars, most of
    a large frontmatter, are measured by their parent: one pass, a few steps each."""
    size: dict[int, tuple[int, int, int]] = {}  # id(collection) -> (values, characters, depth) of it and below
    open_: set[int] = set()
    todo: list[tuple[Node, bool]] = [(root, False)] if not isinstance(root, ScalarNode) else []
    while todo:
        node, finished = todo.pop()
        key = id(node)
        if finished:
            open_.discard(key)
            values, chars, depth = 1, 0, 0
            for child in _children(node):
                if isinstance(child, ScalarNode):
                    values, chars, depth = values + 1, chars + len(child.value), max(depth, 1)
                else:
                    v, c, d = size[id(child)]
                    values, chars, depth = values + v, chars + c, max(depth, d)
            if values > MAX_VALUES or chars > MAX_CHARS:
                raise ConstructorError(None, None, f"more than {MAX_VALUES:,} values or {MAX_CHARS:,} characters once "
                                       "its aliases are expanded", node.start_mark)
            if depth + 1 > MAX_DEPTH:
                raise ConstructorError(None, None, f"nested more than {MAX_DEPTH} levels deep", node.start_mark)
            size[key] = (values, chars, depth + 1)
            continue
        if key in size:
            continue
        if key in open_:
            raise ConstructorError(None, None, "an alias refers to a value that contains it", node.start_mark)
        open_.add(key)
        if isinstance(node, MappingNode):
            _check_unique_keys(node)
        todo.append((node, True))
        todo.extend((c, False) for c in _children(node) if not isinstance(c, ScalarNode))


def _check_unique_keys(node: MappingNode) -> None:
    seen: dict[str, int] = {}
    for k, _ in node.value:
        if isinstance(k, ScalarNode) and k.value != "<<":
            if k.value in seen:
                raise ConstructorError(None, None, f"the key {k.value!r} appears twice (first on line "
                                       f"{seen[k.value] + 2})", k.start_mark)
            seen[k.value] = k.start_mark.line


def _text_as_written(root: Node) -> None:
    """Plain scalars under amem's text keys are read as the text written."""
    if not isinstance(root, MappingNode):
        return
    for k, v in root.value:
        if isinstance(k, ScalarNode) and k.value in _TEXT_KEYS:
            for item in [v, *(v.value if isinstance(v, SequenceNode) else [])]:
                if isinstance(item, ScalarNode) and not item.style and item.tag != "tag:yaml.org,2002:null":  # plain
                    item.tag = _STR_TAG


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # libyaml when present: ~10x faster
    """Safe dumping, with date-times written as ISO 8601 (`2025-01-03T09:15:00+00:00`)."""


def _represent_datetime(dumper: _Dumper, value: datetime) -> Node:
    # YAML's timestamps have offsets in hours and minutes; a local time before its zone's
    # standard time (Tokyo's +09:18:59 in 1850, or of the year 1) is written as text,
    # which reads back as the same date-time.
    offset = value.utcoffset()
    tag = "timestamp" if offset is None or offset.total_seconds() % 60 == 0 else "str"
    return dumper.represent_scalar(f"tag:yaml.org,2002:{tag}", value.isoformat())


_Dumper.add_representer(datetime, _represent_datetime)


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


# Keys amem writes into every note's frontmatter: a block of them at the top of a note's
# text is a second frontmatter (see `second_frontmatter`).
_NOTE_KEYS = frozenset({"id", "keywords", "tags", "context", "created", "updated", "links", "backlinks", "boxes"})


def second_frontmatter(body: str) -> bool:
    """Whether a note's text opens with another frontmatter block: what a save in two
    steps (truncate, then write) leaves when amem wrote its own into the file between."""
    text = body.lstrip("\n")
    try:
        fm, _, _ = split_frontmatter(text)
        data = _YAML.load(fm, Loader=_Loader) if fm else None
    except (ValueError, yaml.YAMLError, RecursionError):
        return False
    return isinstance(data, dict) and bool(_NOTE_KEYS & set(map(str, data)))


def normalise_text(raw: str) -> str:
    """Drop a BOM and turn CRLF / CR line ends into LF."""
    if raw.startswith("\ufeff"):
        raw = raw[1:]
    return raw.replace("\r\n", "\n").replace("\r", "\n")


def parse_note(raw: str, *, path: str = "<text>", fallback_id: str | None = None, own_id: bool = True,
               date_order: str = "auto") -> Note:
    """Parse a note file's text. Raises NoteFormatError with the path and line.
    `own_id=False`: a file from elsewhere (an import) whose `id` amem does not use.
    `date_order`: how a date that reads both ways is read (`timeutil.DATE_ORDERS`)."""
    return read_note(raw, path=path, fallback_id=fallback_id, own_id=own_id, date_order=date_order)[0]


def read_note(raw: str, *, path: str = "<text>", fallback_id: str | None = None, own_id: bool = True,
              date_order: str = "auto") -> tuple[Note, bool]:
    """`parse_note`, and whether the file names its own id (else it is `fallback_id`)."""
    text = normalise_text(raw)
    try:
        fm, body, _ = split_frontmatter(text)
    except ValueError as exc:
        raise NoteFormatError(path, 1, str(exc)) from None
    data: Any = {}
    if fm is not None and fm.strip():
        try:
            data = _YAML.load(fm, Loader=_Loader)  # python-frontmatter's handler, with the stricter safe loader
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 2 if mark is not None else 1
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise NoteFormatError(path, line, f"bad YAML frontmatter: {problem}") from None
        except RecursionError:  # pure-Python PyYAML (no libyaml) recurses once per level
            raise NoteFormatError(path, 2, f"bad YAML frontmatter: nested more than {MAX_DEPTH} levels deep") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise NoteFormatError(path, 2, "the frontmatter must be a mapping of keys to values")
    if body.endswith("\n"):
        body = body[:-1]  # render_note adds exactly one final newline
    if not own_id:
        data = {k: v for k, v in data.items() if k != "id"}
    try:
        return _note_from_data(data, body, fallback_id, date_order), "id" in data
    except _FieldError as exc:
        raise NoteFormatError(path, _key_line(fm or "", exc.key), exc.problem) from None


class _FieldError(ValueError):
    def __init__(self, key: str, problem: str):
        super().__init__(problem)
        self.key, self.problem = key, problem


def _key_line(fm: str, key: str) -> int:
    """The file line of a top-level key (2: the frontmatter's first line, if not found)."""
    match = re.search(rf"^['\"]?{re.escape(key)}['\"]?\s*:", fm, re.MULTILINE)
    return fm.count("\n", 0, match.start()) + 2 if match else 2


def _note_from_data(data: dict, body: str, fallback_id: str | None, date_order: str) -> Note:
    def field(key: str, convert, default: Any = None):
        try:
            return convert(data.get(key, default))
        except (TypeError, ValueError) as exc:
            raise _FieldError(key, str(exc)) from None

    return Note(
        id=field("id", _note_id, fallback_id),
        content=body,
        keywords=field("keywords", lambda v: str_list(v, "keywords")),
        tags=[t.lstrip("#") for t in field("tags", lambda v: str_list(v, "tags"))],
        context=field("context", _text_line),
        created_at=field("created", lambda v: _date_or_none(v, "created", date_order)),
        updated_at=field("updated", lambda v: _date_or_none(v, "updated", date_order)),
        links=[_as_written(x) for x in field("links", lambda v: link_list(v, "links"))],
        backlinks=[_as_written(x) for x in field("backlinks", lambda v: link_list(v, "backlinks"))],
        keeps_backlinks="backlinks" in data,
        boxes=field("boxes", lambda v: str_list(v, "boxes")),
        metadata=field("metadata", _mapping),
        previous=field("previous", lambda v: _one_link(v, "previous")),
        next=field("next", lambda v: _one_link(v, "next")),
        supersedes=[_as_written(x) for x in field("supersedes", lambda v: link_list(v, "supersedes"))],
        superseded_by=[_as_written(x) for x in field("superseded_by", lambda v: link_list(v, "superseded_by"))],
        expires=field("expires", lambda v: _date_or_none(v, "expires", date_order)),
        extra={k: _plain(v) for k, v in data.items() if k not in NOTE_KEYS},
    )


def _note_id(value: Any) -> str:
    """An id every command can name, and that names no path outside the vault."""
    if value is None or str(value).strip() == "":
        raise ValueError("the note has no id")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError("the id must be text")
    note_id = unicodedata.normalize("NFC", str(value).strip())
    if not is_valid_id(note_id):
        raise ValueError(f"the id {note_id!r} is not a valid note id (letters, digits, '.', '_' and '-')")
    return note_id


def _text_line(value: Any) -> str:
    if value is not None and not isinstance(value, str):
        raise ValueError("context must be one line of text")
    return _single_line(value)


def _mapping(value: Any) -> dict:
    if value is not None and not isinstance(value, dict):
        raise ValueError("metadata must be a mapping")
    return _plain(value or {})


def render_note(note: Note) -> str:
    """The file text for a note: frontmatter in a fixed key order, then the content."""
    data: dict[str, Any] = {
        "id": note.id,
        "keywords": list(note.keywords),
        "tags": list(note.tags),
        "context": note.context,
        "created": note.created_at,
        "updated": note.updated_at,
        "links": [_written(x) for x in note.links],
        "backlinks": [_written(x) for x in note.backlinks],
        "previous": f"[[{note.previous}]]" if note.previous else None,
        "next": f"[[{note.next}]]" if note.next else None,
        "supersedes": [_written(x) for x in note.supersedes] or None,
        "superseded_by": [_written(x) for x in note.superseded_by] or None,
        "expires": note.expires,
        "boxes": list(note.boxes),
        "metadata": dict(note.metadata),
    }
    for key in ("created", "updated", "previous", "next", "supersedes", "superseded_by", "expires"):
        if data[key] is None:
            del data[key]
    if not note.backlinks and not note.keeps_backlinks:
        del data["backlinks"]
    data.update({k: v for k, v in note.extra.items() if k not in data})
    fm = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10**9)
    return f"{_FENCE}\n{fm}{_FENCE}\n{note.content}\n"


def yaml_text(data: Any) -> str:
    """`data` as YAML in block style, as a note's frontmatter writes it (keys in their order)."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10**9)


def _as_written(value: str) -> str:
    """A link as the note holds it: amem's `[[id]]` as the id, any other form (`[[Project
    Plan|the plan]]`, `[[x#heading]]`, a file name) exactly as written, so a rewrite of
    the file writes it back the same (`links.target` tells the note it names)."""
    m = _ID_LINK.match(value)
    return m.group(1) if m and is_valid_id(m.group(1)) else value


def _written(link: str) -> str:
    return f"[[{link}]]" if is_valid_id(link) else link


def _one_link(value: Any, name: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} must be one note id")
    return target(value) or None


def link_list(value: Any, name: str) -> list[str]:
    """`str_list`, with a hint for the YAML slip of an unquoted `- [[Note]]` (a list in a list)."""
    if isinstance(value, list) and any(isinstance(item, list) for item in value):
        raise ValueError(f"{name}: put each link in quotes, as in - \"[[Note]]\" (unquoted, YAML reads a list)")
    return str_list(value, name)


def str_list(value: Any, name: str = "value") -> list[str]:
    """A YAML list (or one string) of strings, stripped, without blanks or duplicates."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{name} must be a list of strings")
    out: dict[str, None] = {}  # ordered and de-duplicated in linear time (a list's `in` made 95,000 keywords take minutes)
    for item in value:
        if item is None or isinstance(item, (dict, list)):
            raise ValueError(f"{name} must be a list of strings")
        if s := _single_line(item):
            out[s] = None
    return list(out)


def _single_line(value: Any) -> str:
    if value is None:
        return ""
    return " ".join(str(value).split())


def _date_or_none(value: Any, name: str, order: str) -> datetime | None:
    if value is None or value == "":
        return None
    try:
        return to_datetime(value, order)
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
