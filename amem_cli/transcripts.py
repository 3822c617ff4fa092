"""Transcripts into atomic notes (pure: text in, note fields out).

`parse` reads plain text or Markdown (paragraphs, or `Speaker: text` turns), JSONL chat
logs (`{"role", "content"}` lines, lines holding `{"messages": [...]}`, agent session
logs that nest the message as Claude Code's do) and whole-file JSON with "messages".
`split` turns the messages into notes: one message (or turn) a note, long ones cut at
paragraph then sentence boundaries, short ones merged into the speaker's previous note.
Filler is no note of its own (`filler`): an acknowledgement ("ok", "Sounds good.") or a
message that only repeats the one before ("Updated config/settings.py" after a proposal to
change it) is kept with the message it answers; a lead-in ("Let me check the pods
first.", "Running the tests now.", a short question the next message answers) with the
message it leads into; filler with neither is dropped.

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
from .text import close_form, is_stopword
from .timeutil import to_datetime

MAX_CHARS = 1500  # a note's text at most (before the "role: " prefix)
TINY_CHARS = 20  # shorter messages join the speaker's previous note
SHORT_WORDS = 12  # a message of more content words than this has something of its own

_SPEAKER = re.compile(r"^([A-Za-z][\w .'-]{0,30}?):\s+(\S.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[^\W\d_]{3,}")
# Words that carry no idea on their own ("ok thanks", "yes please", "sounds good", "noted").
_FILLER = set(
    "yes yeah yep nope okay thanks thank you thx please sure great good nice cool fine perfect "
    "awesome right got that sounds lol hmm done and the haha hah noted deal agreed cheers amazing "
    "exactly absolutely indeed makes sense will all that's this really helpful appreciated welcome enjoy "
    "bye later talk speak soon ahead".split()
)
# Words that say a thing named just before was done ("Updated config/settings.py", "Sent.").
_DONE_WORDS = set("updated changed added removed applied sent done finished fixed".split())
# Words of a lead-in that says what comes next, not what it found ("Checking the pods").
_LEAD_WORDS = set(
    "let check checking look looking read reading run running build building rebuilding try trying "
    "test testing see start starting dig digging investigate redeploy redeploying deploy deploying "
    "apply applying applied wait waiting moment second minute sec first now next".split()
)
# Facts: a token with a digit (a number, a time, an id) or inner punctuation (a file, a path).
_FACT = re.compile(r"(?<![\w.])\.?(?:[\w-]*\d[\w:.-]*\w|\d|[\w-]+(?:[./_][\w-]+)+)")
# How a lead-in opens or ends: "Let me ...", "I'll ...", "Now ...", "Checking ...", "... now.", "... first."
_LEAD = re.compile(r"^(?:let me|let's|i'll|i will|i'm going to|now|next|first|one (?:sec|moment)|\w+ing\b)"
                   r"|\b(?:now|first|next)\W*$", re.IGNORECASE)


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
    messages: list[int]  # the messages it holds (their indexes): its own, and filler kept with it

    def add(self, message: Message, text: str) -> None:
        """`message` kept with this note, after what it holds."""
        self.content += "\n\n" + text
        self.key = message.key
        self.messages.append(message.index)

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
    for people: `metadata.source` is `name#3` (`#3.2` for a part), the message the note
    is of (filler kept with it aside)."""
    chunks: list[Chunk] = []
    lead: list[Message] = []  # lead-ins waiting for the message they lead into
    said = [m for m in messages if m.text.strip()]
    for n, msg in enumerate(said):
        text = msg.text.strip()
        last = chunks[-1] if chunks else None
        before = last.content if last is not None and not lead else None  # what it would be kept with
        kept_with = filler(text, before, said[n + 1].text if n + 1 < len(said) else None)
        if kept_with == "previous" and before is not None and len(before) + len(text) <= max_chars:
            last.add(msg, _prefixed(msg.role, text) if msg.role != last.role else text)
            continue
        if kept_with == "next":
            lead.append(msg)
            continue
        if kept_with is not None:  # filler with nothing to be kept with
            continue
        if len(text) < TINY_CHARS and last and not lead and last.role == msg.role and len(last.content) + len(text) <= max_chars:
            last.add(msg, text)  # "on port 8080" belongs with what the speaker just said
            continue
        parts = _pieces(text, max_chars)
        for k, part in enumerate(parts, 1):
            source = f"{name}#{msg.index}" + (f".{k}" if len(parts) > 1 else "")
            key = msg.key if k == len(parts) else _part_key(msg.key, k)
            chunk = Chunk(_prefixed(msg.role, part), msg.role, source, msg.timestamp, key, [msg.index])
            if k == 1 and lead:  # what led into it comes first, as it was said
                chunk.content = "\n\n".join([*(_prefixed(m.role, m.text.strip()) for m in lead), chunk.content])
                chunk.messages[:0] = [m.index for m in lead]
                lead = []
            chunks.append(chunk)
    return chunks


def filler(text: str, before: str | None, after: str | None) -> str | None:
    """Whether a message is filler, and the neighbour it is kept with: "previous" for an
    acknowledgement or a message whose every word the one before said (it answers it, or
    says that what it named is done), "next" for a lead-in whose words are a lead-in's or
    the next message's (it announces or asks what that one says); None for a message with
    content of its own. A number, time, file or id is a fact: said before, or content."""
    facts = {f.lower() for f in _FACT.findall(text)}
    said = [w.lower() for w in _WORD.findall(_FACT.sub(" ", text)) if not is_stopword(w)]
    own = [w for w in said if w not in _FILLER]
    if not own and not facts:
        return "previous" if before is not None else "next"
    if len(own) > SHORT_WORDS:
        return None
    if before is not None and facts <= _facts(before) and all(w in _DONE_WORDS or _said_in(w, before) for w in own):
        return "previous"
    if after is not None and (_LEAD.search(text) or text.rstrip().endswith("?")) and facts <= _facts(after) and all(
            w in _LEAD_WORDS or _said_in(w, after) for w in own):
        return "next"
    return None


def _facts(text: str) -> set[str]:
    return {f.lower() for f in _FACT.findall(text)}


def _said_in(word: str, text: str) -> bool:
    """`word` (lower-case) is a word of `text`, or a close form of one ("built", "build")."""
    return any(close_form(word, w) for w in _WORD.findall(text.lower()))


def _prefixed(role: str | None, text: str) -> str:
    return f"{role}: {text}" if role else text


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
