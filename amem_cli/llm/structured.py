"""Parse, check and clean what a (small) model wrote.

Small models wrap JSON in prose or code fences, stop mid-object when they run out of
tokens, ignore length limits when the backend does not enforce the schema, and loop
("the the the"). Everything here is pure and never raises on bad model output: the
result says whether the raw text was valid, and what could still be used.

The schema checker understands the small subset of JSON Schema the prompts use:
``type`` (object/array/string/integer/number/boolean/null), ``properties``,
``required``, ``additionalProperties: false``, ``items``, ``enum``, ``minItems``,
``maxItems``, ``minLength``, ``maxLength`` and ``pattern``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

# -- result ------------------------------------------------------------------------


@dataclass
class Parsed:
    """What came out of one raw reply.

    `valid`: the reply held one complete JSON object that satisfied the schema as it
    was (prose or code fences around it are tolerated). `data`: the object's known
    properties after tolerant type coercion (for example a comma-separated string where
    a list was asked for), or None when nothing usable was found. `repaired`: the JSON
    was cut off and had to be closed to be read.
    """

    data: dict[str, Any] | None
    valid: bool
    problems: list[str] = field(default_factory=list)
    repaired: bool = False


# -- JSON extraction -----------------------------------------------------------------

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)(?:```|$)", re.DOTALL)
_DECODER = json.JSONDecoder()


def _strip_fences(text: str) -> str:
    m = _FENCE.search(text)
    if m and m.group(1).strip():
        return m.group(1).strip()
    return text


def extract_json(text: str | None) -> tuple[Any, bool]:
    """The first JSON object (or array) in `text`, and whether it had to be repaired.

    Tries, in order: the whole text, the inside of a code fence, the first decodable
    object starting at any ``{`` or ``[``, then a truncated object closed by
    `repair_truncated`. Returns ``(None, False)`` when nothing can be read.
    """
    if not text:
        return None, False
    stripped = text.strip()
    candidates = [stripped]
    unfenced = _strip_fences(stripped)
    if unfenced != stripped:
        candidates.append(unfenced)
    for cand in candidates:
        try:
            return json.loads(cand), False
        except ValueError:
            pass
    # A complete object anywhere, then a cut-off object, then a bare list.
    for opener, kind in (("{", dict), (None, None), ("[", list)):
        for cand in candidates:
            if opener is None:
                start = cand.find("{")
                if start < 0:
                    continue
                repaired = repair_truncated(cand[start:])
                if repaired is not None:
                    value = json.loads(repaired)
                    if value:
                        return value, True
                continue
            for m in re.finditer(re.escape(opener), cand):
                try:
                    value, _ = _DECODER.raw_decode(cand, m.start())
                except ValueError:
                    continue
                if isinstance(value, kind):
                    return value, False
    return None, False


def _scan(text: str) -> tuple[list[str], bool, int]:
    """Open brackets, whether the text ends inside a string, and where that string began."""
    stack: list[str] = []
    in_str = False
    esc = False
    str_start = -1
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
            str_start = i
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]":
            if stack:
                stack.pop()
    return stack, in_str, str_start


_TRAILING_STRING = re.compile(r'"(?:[^"\\]|\\.)*"\s*$')
_TRAILING_LITERAL = re.compile(r"[A-Za-z0-9.+\-]+$")
_REPAIR_TURNS = 8


def _drop_dangling(s: str) -> str:
    """Remove what cannot end a JSON value: a comma, a key without its value, a cut-off
    number or literal (only the very last token: it may be incomplete). Loops until the
    text ends cleanly, or gives up ("") after a few turns: a reply cut off mid-way needs
    two or three, and each turn scans the whole text (`: : : ...` took seconds)."""
    literal_checked = False
    for _ in range(_REPAIR_TURNS):
        s = s.rstrip()
        if not s:
            return s
        stack, in_str, _ = _scan(s)
        if s.endswith(","):
            s = s[:-1]
            continue
        if s.endswith(":"):
            # `"key":` -> drop the key as well.
            s = s[:-1].rstrip()
            m = _TRAILING_STRING.search(s)
            if m:
                s = s[: m.start()]
            continue
        if stack and stack[-1] == "{" and _TRAILING_STRING.search(s):
            # A string right after `{` or `,` inside an object is a key without a value.
            m = _TRAILING_STRING.search(s)
            before = s[: m.start()].rstrip()
            if before.endswith(",") or before.endswith("{"):
                s = before
                continue
        if not literal_checked:
            literal_checked = True
            m = _TRAILING_LITERAL.search(s)
            if m and not in_str and s[m.start() - 1 : m.start()] in ("", " ", ",", "[", ":"):
                s = s[: m.start()]
                continue
        return s
    return ""


def repair_truncated(text: str) -> str | None:
    """Close a JSON object that was cut off (the model ran out of tokens).

    An unfinished string is dropped whole (a half keyword or half sentence is worse
    than none), then a dangling key, comma or cut-off number, then the open brackets
    are closed. Returns None when the result still does not parse.
    """
    s = text.rstrip()
    _, in_str, start = _scan(s)
    if in_str:
        s = s[:start]
    s = _drop_dangling(s)
    stack, in_str, _ = _scan(s)
    if not s or in_str:
        return None
    closed = s + "".join("}" if c == "{" else "]" for c in reversed(stack))
    try:
        json.loads(closed)
    except ValueError:
        return None
    return closed


# -- schema checking -----------------------------------------------------------------

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _type_ok(value: Any, expected: str | list[str]) -> bool:
    names = [expected] if isinstance(expected, str) else list(expected)
    for name in names:
        if name in ("integer", "number") and isinstance(value, bool):
            continue
        if isinstance(value, _TYPES.get(name, (object,))):
            return True
    return False


def validate(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Problems of `value` against the schema subset above; [] when it conforms."""
    problems: list[str] = []
    expected = schema.get("type")
    if expected is not None and not _type_ok(value, expected):
        return [f"{path}: expected {expected}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of the allowed values")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{path}: missing {key!r}")
        for key, sub in props.items():
            if key in value:
                problems.extend(validate(value[key], sub, f"{path}.{key}"))
        if schema.get("additionalProperties") is False:
            for key in value:
                if key not in props:
                    problems.append(f"{path}: unexpected {key!r}")
    elif isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            problems.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{path}: more than {schema['maxItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                problems.extend(validate(item, schema["items"], f"{path}[{i}]"))
    elif isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            problems.append(f"{path}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append(f"{path}: longer than {schema['maxLength']} characters")
        if "pattern" in schema:
            try:
                if not re.search(schema["pattern"], value):
                    problems.append(f"{path}: does not match the expected pattern")
            except re.error:
                pass
    return problems


def _coerce(value: Any, schema: dict[str, Any]) -> tuple[bool, Any]:
    """Bend a wrongly typed value towards the schema (str <-> list, "3" -> 3)."""
    expected = schema.get("type")
    if expected is None or _type_ok(value, expected):
        if expected == "array" and isinstance(value, list) and "items" in schema:
            # Items that cannot be bent are kept as they are (already reported by
            # validate); the step that reads them decides (e.g. a link given by id).
            items = []
            for item in value:
                ok, fixed = _coerce(item, schema["items"])
                items.append(fixed if ok else item)
            return True, items
        return True, value
    if expected == "array":
        if isinstance(value, str):
            parts = [p for p in re.split(r"[,;\n]", value) if p.strip()]
            return _coerce(parts, schema)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return _coerce([value], schema)
        return False, None
    if expected == "string":
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return True, value[0]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, str(value)
        return False, None
    if expected == "integer":
        if isinstance(value, str) and re.fullmatch(r"\s*\[?\s*-?\d+\s*\]?\s*", value):
            return True, int(re.sub(r"[^\d-]", "", value))
        if isinstance(value, float) and value.is_integer():
            return True, int(value)
        return False, None
    if expected == "boolean":
        if isinstance(value, str) and value.strip().lower() in ("true", "yes", "false", "no"):
            return True, value.strip().lower() in ("true", "yes")
        return False, None
    return False, None


def parse_reply(text: str | None, schema: dict[str, Any]) -> Parsed:
    """Read one raw model reply against an object schema. Never raises."""
    if text is None:
        return Parsed(None, False, ["no output"])
    try:
        value, repaired = extract_json(text)
    except RecursionError:  # pathological nesting
        value, repaired = None, False
    if value is None:
        snippet = " ".join(str(text).split())[:60]
        return Parsed(None, False, [f"no JSON object in the output: {snippet!r}"])
    problems: list[str] = []
    if repaired:
        problems.append("output was cut off; JSON closed by repair")
    if isinstance(value, list) and schema.get("type") == "object":
        # A bare list where an object with a single list property was asked for.
        arrays = [k for k, s in schema.get("properties", {}).items() if s.get("type") == "array"]
        if len(arrays) == 1 and len(schema.get("properties", {})) == 1:
            problems.append(f"bare list instead of an object with {arrays[0]!r}")
            value = {arrays[0]: value}
    if not isinstance(value, dict):
        problems.append(f"expected a JSON object, got {type(value).__name__}")
        return Parsed(None, False, problems, repaired)
    problems.extend(validate(value, schema))
    valid = not problems and not repaired
    return Parsed(known_fields(value, schema), valid, problems, repaired)


def known_fields(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The object's properties that `schema` names, bent towards their types where they
    can be (`_coerce`); the others, and those that cannot be bent, left out."""
    data: dict[str, Any] = {}
    for key, sub in schema.get("properties", {}).items():
        if key not in value:
            continue
        ok, fixed = _coerce(value[key], sub)
        if ok:
            data[key] = fixed
    return data


# -- cleaning ------------------------------------------------------------------------

_WS = re.compile(r"\s+")
_EDGE = "\"'`*•·:;,.!?-–—_=/\\|()[]{}<> \t\n"
_BAD_INSIDE = re.compile(r"[{}\[\]<>|`\\]|\bhttps?://|```")
_CHAR_LOOP = re.compile(r"(.{1,4}?)\1{4,}")
_WORDISH = re.compile(r"\w", re.UNICODE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# JSON's "\ud800" escape decodes to a lone surrogate, which no file can hold as UTF-8.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _printable(text: str) -> str:
    return _SURROGATE.sub("", _CONTROL.sub(" ", text))


def _norm_token(tok: str) -> str:
    return tok.strip(_EDGE).casefold()


def collapse_repeats(text: str, max_n: int = 8, *, char_loops: bool = True) -> str:
    """Collapse run-on repetition: "the the the" -> "the", "a b a b a b" -> "a b",
    "hahahahaha" -> "ha" (unless not `char_loops`). A single word repeated only twice is
    left alone ("that that")."""
    if char_loops:
        text = _CHAR_LOOP.sub(r"\1", text)
    tokens = text.split()
    changed = True
    while changed:
        changed = False
        for n in range(1, max_n + 1):
            if len(tokens) < 2 * n:
                break
            out: list[str] = []
            i = 0
            while i < len(tokens):
                unit = [_norm_token(t) for t in tokens[i : i + n]]
                j = i + n
                reps = 1
                while j + n <= len(tokens) and [_norm_token(t) for t in tokens[j : j + n]] == unit:
                    j += n
                    reps += 1
                if len(unit) == n and any(unit) and reps >= (3 if n == 1 else 2):
                    out.extend(tokens[i : i + n])
                    i = j
                    changed = True
                else:
                    out.append(tokens[i])
                    i += 1
            tokens = out
    return " ".join(tokens)


def is_degenerate(text: str) -> bool:
    """True for loops and noise: few distinct words, or mostly non-word characters."""
    if not text or not _WORDISH.search(text):
        return True
    words = [_norm_token(w) for w in text.split()]
    words = [w for w in words if w]
    if len(words) >= 8 and len(set(words)) / len(words) < 0.5:
        return True
    if len(text) <= 6:
        return False
    wordish = sum(1 for ch in text if ch.isalnum() or ch.isspace())
    return wordish / len(text) < 0.6


def clean_item(value: Any, *, max_chars: int = 40, max_words: int = 4) -> str:
    """One list item (keyword, tag, box name), or "" when it is unusable."""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return ""
    raw = str(value).strip()
    if not raw or _BAD_INSIDE.search(raw) or "\n" in raw:
        return ""
    text = _WS.sub(" ", _printable(raw)).lstrip("#").strip(_EDGE).strip()
    if max_chars < len(text) <= max_chars * 2:  # a short phrase said over and over may still fit
        text = collapse_repeats(text, char_loops=False)
    if not text or len(text) > max_chars:
        return ""
    text = collapse_repeats(text).strip(_EDGE).strip()
    if not text or len(text.split()) > max_words:
        return ""
    if is_degenerate(text):
        return ""
    return text


def dedupe_key(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.casefold()).strip()


def clean_list(
    items: Any,
    *,
    max_items: int = 5,
    max_chars: int = 40,
    max_words: int = 4,
    exclude: Iterable[str] = (),
) -> list[str]:
    """Strip, drop empty/overlong/degenerate items, dedupe case-insensitively keeping the
    first spelling and the order, cap the count. `exclude` items are treated as seen."""
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, (list, tuple)):
        return []
    seen = {dedupe_key(e) for e in exclude}
    out: list[str] = []
    for raw in items:
        item = clean_item(raw, max_chars=max_chars, max_words=max_words)
        key = dedupe_key(item)
        if not item or key in seen:
            continue
        seen.add(key)
        out.append(item)
        if len(out) >= max_items:
            break
    return out


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9À-Ý])")
_LABEL = re.compile(r"^(?:context|summary|sentence|answer)\s*[:\-]\s*", re.IGNORECASE)


def first_sentence(text: str) -> str:
    parts = _SENTENCE_END.split(text.strip(), maxsplit=1)
    return parts[0] if parts else ""


def clean_sentence(value: Any, *, max_chars: int = 200, max_words: int = 30) -> str:
    """One sentence, bounded, with no repetition loop; "" when nothing usable is left."""
    if not isinstance(value, str):
        return ""
    if "```" in value or re.search(r"[{}<>]", value):
        return ""
    text = _WS.sub(" ", _printable(value)).strip().strip("\"'`").strip()
    text = _LABEL.sub("", text)
    if not text:
        return ""
    before = len(text.split())
    text = collapse_repeats(text)
    if before >= 6 and len(text.split()) * 2 < before:
        return ""  # mostly a repetition loop
    text = first_sentence(text)
    if is_degenerate(text):
        return ""
    return trim_words(text, max_chars=max_chars, max_words=max_words)


def trim_words(text: str, *, max_chars: int = 200, max_words: int = 30) -> str:
    """Trim to whole words within both bounds; a trimmed sentence ends with "…", a whole
    one gets a full stop if it has no closing punctuation and there is room. The result,
    ellipsis included, is never longer than `max_chars`."""
    words = text.split()
    trimmed = len(words) > max_words or len(" ".join(words)) > max_chars
    words = words[:max_words]
    budget = max_chars - 1 if trimmed else max_chars  # room for the "…"
    out = " ".join(words)
    while len(out) > budget and len(words) > 1:
        words = words[:-1]
        out = " ".join(words)
    out = out[:budget].strip()
    if not out:
        return ""
    if trimmed:
        return out.rstrip(_EDGE) + "…"
    if out[-1] not in ".!?…" and len(out) < max_chars:
        out += "."
    return out
