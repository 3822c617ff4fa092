"""A removed note leaves no byte of its text in `.amem/index.db` or its WAL: not in
freed pages, not in the full-text indexes' old segments (FTS5 keeps a deleted row's words
until its segments merge), not in old WAL frames. Checked with the connection still open
(as the warm server and `AgentMemory` hold it), after `rm`, after a file removed by hand
and synced, and after `reindex`."""

from __future__ import annotations

from pathlib import Path

import pytest


# Words found nowhere else, each as written and as the full-text index stores it (lower case).
MARKERS = ["Zebraquokka", "Marmalade7741", "Xylophonist", "Quixotrelle"]
TEXT = f"{MARKERS[0]} {MARKERS[1]} played the {MARKERS[2]} tune at {MARKERS[3]} hall"
OTHERS = [f"ordinary note {i} about gardening, tomatoes and the rain in spring" for i in range(30)]


def _traces(vault: Path) -> dict[str, list[str]]:
    """The marker words found in each of the index's files (as written or lower case)."""
    found = {}
    for path in sorted((vault / ".amem").glob("index.db*")):
        data = path.read_bytes()
        words = [w for w in MARKERS for form in (w, w.lower()) if form.encode() in data]
        if words:
            found[path.name] = sorted(set(words))
    return found


@pytest.fixture
def filled(memory):
    for text in OTHERS[:15]:
        memory.add(text)
    note = memory.add(TEXT)
    for text in OTHERS[15:]:
        memory.add(text)
    assert _traces(memory.path)  # the check can see the words while the note is there
    return memory, note


def test_rm_leaves_no_trace(filled):
    memory, note = filled
    memory.delete(note.id)
    assert _traces(memory.path) == {}
    assert memory.retrieve("gardening tomatoes", top_k=3)  # the others are still found


def test_removed_file_leaves_no_trace_after_sync_and_reindex(filled):
    memory, note = filled
    (memory.path / f"{note.id}.md").unlink()
    memory.sync()
    assert _traces(memory.path) == {}
    memory.reindex()
    assert _traces(memory.path) == {}
    assert len(memory.notes()) == len(OTHERS)


def test_rm_of_an_evolved_note_drops_its_revisions(vault):
    """Evolution keeps a note's bytes before each change (for `amem undo`): once the
    note is removed they can never be undone, and they hold its text."""
    from amem_cli import AgentMemory
    from amem_cli.llm.fake import ScriptedLLM, evolution_reply

    def reply(messages, schema):
        props = set(schema.get("properties", {}))
        if props == {"links"}:
            return {"links": [1]}
        if props == {"notes"}:
            return evolution_reply(messages, schema, lambda older: {
                "context": f"The {MARKERS[2]} tune played at the hall, heard again later.", "tags": ["hall"]})
        return {"keywords": ["tune"], "tags": ["music"], "context": "A tune played at a hall."}

    with AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=reply), link_threshold=0.0, link_choice="model") as mem:
        note = mem.add(TEXT, context="A concert.", tags=["music"], keywords=["tune"])
        mem.add("The same tune again, at the same hall, played by someone else")
        assert mem.history(note.id)  # evolution recorded the note's old bytes
        mem.delete(note.id)
        assert _traces(vault) == {}
