"""Transcripts into atomic notes (pure: text in, note fields out).

`parse` reads plain text or Markdown (paragraphs, or `Speaker: text` turns), JSONL chat
logs (`{"role", "content"}` lines, lines holding `{"messages": [...]}`, agent session
logs that nest the message as Claude Code's do) and whole-file JSON with "messages".
`split` turns the messages into notes: one message (or turn) a note, long ones cut at
paragraph then sentence boundaries, short ones merged into the speaker's previous note,
ones without content words ("ok", "thanks") dropped.

A transcript is known by what it says, not by its file's name: each message's `key` is
a hash chain over the transcript up to it (its role, time and text, and those of every
message before it), started from the session id the log carries, if any. The same
transcript piped or passed by path has the same keys; one that grew keeps its old keys
and adds new ones; two sessions part ways at the first message that differs (see
`services.ingest`). A note's `metadata.source_hash` is the key of the last message it
holds.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import UsageError
from .timeutil import to_datetime

MAX_CHARS = 1500  # a note's text at most (before the "role: " prefix)
TINY_CHARS = 20  # shorter messages join the speaker's previous note

_SPEAKER = re.compile(r"^([A-Za-z][\w .'-]{0,30}?):\s+(\S.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[^\W\d_]{3,}")
# Words that carry no idea on their own ("ok thanks", "yes please", "sounds good").
_FILLER = set(
    "yes yeah yep nope okay thanks thank you thx please sure great good nice cool fine perfect "
    "awesome right got that sounds lol hmm done and the".split()
)


@dataclass
class Message:
    index: int  # 1-based position in the transcript
    role: str | None
    text: str
    timestamp: str | None = None
    key: str = ""  # the transcript so far (`identify`)


@dataclass
class Transcript:
    messages: list[Message]
    session: str | None = None  # the id the log gives its session, if it gives one


@dataclass
class Chunk:
    """One note to be: `content` carries the speaker ("user: ...")."""

    content: str
    role: str | None
    source: str
    timestamp: str | None
    key: str  # the key of its last message (or, for a part of a long one, of that part)

    def fields(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"source": self.source}
        if self.role:
            meta["role"] = self.role
        meta["source_hash"] = self.key
        fields: dict[str, Any] = {"content": self.content, "metadata": meta}
        if self.timestamp:
            fields["created_at"] = self.timestamp
        return fields


def identify(messages: list[Message], session: str | None = None) -> None:
    """Set each message's key: a hash of the one before's key and this message, from a
    start made of the log's session id. Call it on the messages as they will be stored
    (redacted): a key must not be a hash of a secret."""
    chain = hashlib.sha256(json.dumps(["amem transcript", session]).encode()).hexdigest()
    for m in messages:
        chain = hashlib.sha256(json.dumps([chain, m.role, m.timestamp, m.text]).encode()).hexdigest()
        m.key = chain[:32]


def _part_key(key: str, part: int) -> str:
    return hashlib.sha256(f"{key}#{part}".encode()).hexdigest()[:32]


# -- parsing ---------------------------------------------------------------
def parse(text: str, clean: Callable[[str], str] | None = None) -> list[Message]:
    """The messages of a transcript, in order (see `read`)."""
    return read(text, clean).messages


def read(text: str, clean: Callable[[str], str] | None = None, date_order: str = "auto") -> Transcript:
    """The messages of a transcript, in order (keyed: `identify`), and its session id.
    `clean` (secret redaction) is applied to each message of a JSON transcript once
    decoded, and to a text transcript whole, before it is cut into turns and paragraphs:
    a private key block holds blank lines and "Proc-Type: ..." lines, and would be cut in
    pieces no detector knows. Keys are made of the cleaned text, never of a secret.
    `date_order`: how a message's time that reads both ways is read (`timeutil.DATE_ORDERS`)."""
    stripped = text.strip()
    records: list | None = None
    if stripped and stripped[0] in "{[":
        try:
            whole = json.loads(stripped)
        except ValueError:
            whole = None  # JSONL, or text that starts with a bracket
        records = [whole] if isinstance(whole, dict) else whole if isinstance(whole, list) else _jsonl(stripped)
    if records is not None:
        out = Transcript(_number((m for r in records for m in _from_record(r, None, date_order)), clean),
                         _session_of(records))
    else:
        out = Transcript(_number(_from_text(clean(stripped).strip() if clean else stripped)) if stripped else [])
    identify(out.messages, out.session)
    return out


def _number(items, clean: Callable[[str], str] | None = None) -> list[Message]:
    return [Message(i, role, clean(text) if clean else text, ts) for i, (role, text, ts) in enumerate(items, 1)]


# Where logs keep their session's id: Claude Code's and Gemini CLI's lines (`sessionId`),
# the generic names, and Codex's first line (`{"type": "session_meta", "payload": {"id"}}`).
_SESSION_KEYS = ("sessionId", "session_id", "conversation_id", "thread_id")


def _session_of(records: list) -> str | None:
    for record in records:
        if not isinstance(record, dict):
            continue
        if record.get("type") == "session_meta" and isinstance(record.get("payload"), dict):
            record = {"session_id": record["payload"].get("id")}
        for key in _SESSION_KEYS:
            value = record.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                return str(value).strip()
    return None


def _jsonl(text: str) -> list | None:
    """The records of a JSONL text, or None when its first line is not JSON. Lines that
    are not JSON further on (a log cut off mid-line) are left out."""
    records = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            if not records:
                return None
    return records


def _from_record(record: Any, timestamp: str | None, order: str):
    """(role, text, timestamp) for each message in a JSON value."""
    if isinstance(record, list):
        for item in record:
            yield from _from_record(item, timestamp, order)
        return
    if not isinstance(record, dict):
        return
    ts = _timestamp(record, order) or timestamp
    if isinstance(record.get("messages"), list):
        yield from _from_record(record["messages"], ts, order)
    elif isinstance(record.get("message"), dict):  # agent logs: {"type": "user", "message": {...}}
        inner = record["message"]
        role = inner.get("role") or record.get("type")
        yield from _from_record({**inner, "role": role}, _timestamp(inner, order) or ts, order)
    elif record.get("type") == "response_item" and isinstance(record.get("payload"), dict):  # Codex's lines
        yield from _from_record(record["payload"], ts, order)
    elif "content" in record or "text" in record:
        role = record.get("role") or record.get("speaker") or record.get("author")
        if isinstance(role, dict):
            role = role.get("role") or role.get("name")
        text = _text_of(record.get("content", record.get("text")))
        yield (str(role) if role else None), text, ts


def _text_of(content: Any) -> str:
    """A string, or the text parts of a list of parts (tool calls, images left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type", "text") in ("text", "input_text", "output_text"):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
        return "\n\n".join(parts)
    return ""


def _timestamp(record: dict, order: str) -> str | None:
    """The record's time as ISO 8601, if it gives one that reads as a time."""
    for key in ("timestamp", "created_at", "time"):
        value = record.get(key)
        try:
            if isinstance(value, (str, int, float)) and str(value).strip():  # (a number: Unix time)
                return to_datetime(value, order).isoformat()
        except (UsageError, ValueError, OverflowError, OSError):
            pass
    return None


def _from_text(text: str):
    lines = text.splitlines()
    first = next(line for line in lines if line.strip())
    if _SPEAKER.match(first) and sum(1 for line in lines if _SPEAKER.match(line)) >= 2:
        # "Speaker: text" turns; lines without a speaker continue the turn.
        role, body = None, []
        for line in lines:
            m = _SPEAKER.match(line)
            if m:
                if body:
                    yield role, "\n".join(body), None
                role, body = m.group(1).strip(), [m.group(2)]
            else:
                body.append(line)
        yield role, "\n".join(body), None
        return
    for para in _paragraphs(text):
        yield None, para, None


def _paragraphs(text: str) -> list[str]:
    """Blank-line paragraphs; a code fence stays whole, a heading joins what follows it."""
    paras: list[str] = []
    heading = open_fence = False
    for block in re.split(r"\n\s*\n", text):
        block = block.strip("\n")
        if not block.strip():
            continue
        if open_fence or heading:
            paras[-1] += "\n\n" + block
        else:
            paras.append(block)
        open_fence ^= block.count("```") % 2 == 1
        heading = not open_fence and all(line.startswith("#") for line in block.splitlines())
    return paras


# -- splitting into notes ----------------------------------------------------
def split(messages: list[Message], name: str, *, max_chars: int = MAX_CHARS) -> list[Chunk]:
    """The notes for these messages; `name` is the transcript's (a file name, "stdin"),
    for people: `metadata.source` is `name#3` (`#3.2` for a part)."""
    chunks: list[Chunk] = []
    for msg in messages:
        text = msg.text.strip()
        if not text:
            continue
        if not _has_content_words(text):  # "ok", "thanks!"
            continue
        last = chunks[-1] if chunks else None
        if len(text) < TINY_CHARS and last and last.role == msg.role and len(last.content) + len(text) <= max_chars:
            last.content += "\n\n" + text  # "on port 8080" belongs with what the speaker just said
            last.key = msg.key
            continue
        parts = _pieces(text, max_chars)
        for n, part in enumerate(parts, 1):
            source = f"{name}#{msg.index}" + (f".{n}" if len(parts) > 1 else "")
            key = msg.key if n == len(parts) else _part_key(msg.key, n)
            chunks.append(Chunk(_prefixed(msg.role, part), msg.role, source, msg.timestamp, key))
    return chunks


def _prefixed(role: str | None, text: str) -> str:
    return f"{role}: {text}" if role else text


def _has_content_words(text: str) -> bool:
    return any(w.lower() not in _FILLER for w in _WORD.findall(text))


def _pieces(text: str, limit: int) -> list[str]:
    """The text cut at paragraph, then sentence, then word boundaries into pieces of at most `limit`."""
    if len(text) <= limit:
        return [text]
    units: list[tuple[str, str]] = []  # (separator before it, text)
    for para in re.split(r"\n\s*\n", text):
        sep = "\n\n"
        for sentence in [para] if len(para) <= limit else _SENTENCE_END.split(para):
            while len(sentence) > limit:  # one endless sentence: cut at the last space
                cut = sentence.rfind(" ", 0, limit)
                cut = cut if cut > 0 else limit
                units.append((sep, sentence[:cut]))
                sentence, sep = sentence[cut:].lstrip(), " "
            units.append((sep, sentence))
            sep = " "
    pieces: list[str] = []
    for sep, unit in units:
        unit = unit.strip()
        if not unit:
            continue
        if pieces and len(pieces[-1]) + len(sep) + len(unit) <= limit:
            pieces[-1] += sep + unit
        else:
            pieces.append(unit)
    return pieces
