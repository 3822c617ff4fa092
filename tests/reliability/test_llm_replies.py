"""230 broken model replies (hostile_replies.py) through the fake LLM: into each pipeline
step directly, and into `add` end to end (construction, links, boxes, and the
evolution of a linked neighbour). No exception escapes, every note is stored with its
text and id as given, only whitelisted fields change, and field lengths stay bounded."""

from __future__ import annotations

import time
import unicodedata

import pytest
from hostile_replies import NEIGHBOUR, NEW, replies

from amem_cli import AgentMemory
from amem_cli.ids import is_valid_id
from amem_cli.llm import prompts
from amem_cli.llm.fake import ScriptedLLM
from amem_cli.markdown import parse_note
from amem_cli.steps import construct, decide_evolution
from amem_cli.steps.evolve import MAX_TAGS, Neighbour, NewNote


REPLIES = replies()
SECONDS_PER_REPLY = 5.0  # generous for a loaded CI machine: the slowest took 88 s before replies were cut to their budget


def _clean(text: str) -> bool:
    """One line of text a file can hold: UTF-8, no control characters."""
    text.encode("utf-8")
    return not any(unicodedata.category(ch) == "Cc" for ch in text)


def _bounded_note_fields(keywords, tags, context, boxes=()) -> None:
    assert len(keywords) <= 5 and all(len(k) <= prompts.KEYWORD_MAX_CHARS and _clean(k) for k in keywords), keywords
    assert len(tags) <= MAX_TAGS and all(len(t) <= prompts.TAG_MAX_CHARS and _clean(t) for t in tags), tags
    assert len(context) <= prompts.CONTEXT_MAX_CHARS and _clean(context), context
    assert all(b and _clean(b) for b in boxes), boxes


def test_230_replies_cover_every_kind():
    kinds = {kind for kind, _ in REPLIES}
    assert len(REPLIES) >= 200
    assert kinds == {"non-json", "truncated", "wrong-types", "huge", "not-whitelisted", "control-unicode", "yaml"}


def test_each_step_reads_every_reply_without_raising():
    neighbour = Neighbour("neighbour", NEIGHBOUR, "Why migrations run at night.", ["ops"])
    for kind, raw in REPLIES:
        llm = ScriptedLLM(default=raw)
        started = time.perf_counter()
        c = construct(NEW, llm=llm)
        d = decide_evolution(NewNote(NEW, c.keywords, c.context), neighbour, llm=llm)
        assert time.perf_counter() - started < SECONDS_PER_REPLY, (kind, raw[:80])
        _bounded_note_fields(c.keywords, c.tags, c.context)
        if d.evolution is not None:
            assert set(d.evolution.changes()) <= {"context", "tags"}
            assert d.evolution.neighbour_id == "neighbour"
            tags = d.evolution.tags or neighbour.tags
            assert tags[: len(neighbour.tags)] == neighbour.tags  # tags are only ever added
            _bounded_note_fields([], tags, d.evolution.context or "")


@pytest.fixture
def neighbourhood(vault):
    """A vault with one note that every new note links to and may evolve."""
    holder = {"raw": None}
    llm = ScriptedLLM(default=lambda messages, schema: holder["raw"])
    with AgentMemory(vault, embedder="fake", llm=llm, link_threshold=-1.0, link_k=1, link_choice="model") as mem:
        mem.add_many([{"content": NEIGHBOUR, "keywords": ["Postgres"], "tags": ["ops"], "boxes": ["infra"],
                       "context": "Why migrations run at night.", "metadata": {"owner": "ops team"}}])
        yield mem, holder


def _body(path) -> bytes:
    """The bytes after the frontmatter: the note's own text, as stored."""
    return path.read_bytes().split(b"\n---\n", 1)[1]


def test_add_stores_the_note_through_every_reply_and_changes_only_whitelisted_fields(neighbourhood):
    mem, holder = neighbourhood
    (first,) = [n.id for n in mem.notes()]
    path = mem.path / f"{first}.md"
    original, original_body = parse_note(path.read_text(encoding="utf-8")), _body(path)
    before, evolved = original, 0
    for n, (kind, raw) in enumerate(REPLIES):
        holder["raw"] = raw
        text = f"{NEW} Case {n} ({kind})."
        note = mem.add(text)

        stored = parse_note((mem.path / f"{note.id}.md").read_text(encoding="utf-8"))
        assert is_valid_id(stored.id) and stored.id == note.id, (kind, raw[:80])
        assert stored.content == text, (kind, raw[:80])
        _bounded_note_fields(stored.keywords, stored.tags, stored.context, stored.boxes)
        assert set(stored.links) <= {first}, (kind, raw[:80])  # a model may choose no link ("[]")

        now = parse_note(path.read_text(encoding="utf-8"))
        assert _body(path) == original_body, (kind, raw[:80])  # byte for byte
        whitelisted = {"context": now.context, "tags": now.tags, "backlinks": now.backlinks, "updated_at": now.updated_at,
                       "metadata": {**original.metadata, **{k: v for k, v in now.metadata.items() if k == "amem_generated"}}}
        assert now.__class__(**{**original.__dict__, **whitelisted}) == now, (kind, raw[:80])
        assert set(now.generated) <= {"context", "tags"}  # what evolution may write, and nothing else
        assert now.tags[:1] == ["ops"]
        _bounded_note_fields([], now.tags, now.context)
        evolved += (now.context, now.tags) != (before.context, before.tags)
        before = now
        mem.delete(note.id)  # keep the vault at one neighbour, so each reply meets it
    assert evolved > 0  # the grounded replies did get through: the checks above saw real changes
    assert len(mem.history(first)) == evolved  # each change is a recorded, undoable revision
