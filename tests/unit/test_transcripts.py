"""Transcripts parsed into messages and split into notes."""

from __future__ import annotations

import json

from amem_cli.transcripts import MAX_CHARS, parse, split


def _roles_texts(text):
    return [(m.role, m.text) for m in parse(text)]


def test_jsonl_role_content_lines():
    text = "\n".join(json.dumps(r) for r in [
        {"role": "user", "content": "How do I rotate the logs?", "timestamp": "2024-05-01T10:00:00Z"},
        {"role": "assistant", "content": [{"type": "text", "text": "Use logrotate."}, {"type": "image_url"}], "time": "soon"},
        {"role": "user", "content": "Thanks, that works", "timestamp": 1714557600},
    ])
    msgs = parse(text)
    assert [(m.index, m.role, m.text, m.timestamp) for m in msgs] == [
        (1, "user", "How do I rotate the logs?", "2024-05-01T10:00:00+00:00"),
        (2, "assistant", "Use logrotate.", None),
        (3, "user", "Thanks, that works", "2024-05-01T10:00:00+00:00"),
    ]


def test_messages_arrays_in_lines_and_whole_file():
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello there"}]
    assert _roles_texts(json.dumps({"messages": msgs}, indent=2)) == [("system", "Be brief."), ("user", "Hello there")]
    line = json.dumps({"messages": msgs})
    assert len(parse(line + "\n" + line)) == 4


def test_claude_code_style_nested_message():
    lines = [
        {"type": "summary", "summary": "ignored"},
        {"type": "user", "timestamp": "2025-01-02T03:04:05Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "Fix the flaky test"}]}},
        {"type": "assistant", "timestamp": "2025-01-02T03:04:09Z",
         "message": {"role": "assistant", "content": [
             {"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Done: it raced on a port."},
             {"type": "tool_use", "name": "Bash", "input": {"command": "pytest"}}]}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}},
    ]
    msgs = parse("\n".join(json.dumps(r) for r in lines))
    assert [(m.role, m.text, m.timestamp) for m in msgs if m.text] == [
        ("user", "Fix the flaky test", "2025-01-02T03:04:05+00:00"),
        ("assistant", "Done: it raced on a port.", "2025-01-02T03:04:09+00:00"),
    ]


def test_speaker_turns_and_paragraphs():
    assert _roles_texts("Alice: we ship friday\nand not before\nBob: fine by me") == [
        ("Alice", "we ship friday\nand not before"), ("Bob", "fine by me")]
    md = "# Setup\n\nInstall the package.\n\n```\nline one\n\nline two\n```\n\nLast paragraph here."
    assert [t for _, t in _roles_texts(md)] == [
        "# Setup\n\nInstall the package.", "```\nline one\n\nline two\n```", "Last paragraph here."]


def test_long_message_split_at_boundaries_with_part_sources():
    sentence = "The cache keeps rankings rather than notes, so a hit fetches fresh notes. "
    text = "\n\n".join([sentence * 10, sentence * 50])
    chunks = split(parse(json.dumps({"role": "user", "content": text})), "log.jsonl")
    assert len(chunks) > 2
    assert all(len(c.content) <= MAX_CHARS + len("user: ") for c in chunks)
    assert [c.source for c in chunks] == [f"log.jsonl#1.{n}" for n in range(1, len(chunks) + 1)]
    assert all(c.content.removeprefix("user: ").rstrip().endswith(".") for c in chunks)


def test_tiny_messages_merged_or_skipped():
    rows = [("user", "Please deploy the service to staging today"), ("user", "on port 8080"),
            ("assistant", "ok"), ("assistant", "Deploying it to staging now."), ("assistant", "thanks!"),
            ("user", "Use port 8080.")]
    text = "\n".join(json.dumps({"role": r, "content": c}) for r, c in rows)
    chunks = split(parse(text), "s")
    assert [(c.content, c.source) for c in chunks] == [
        ("user: Please deploy the service to staging today\n\non port 8080", "s#1"),
        ("assistant: Deploying it to staging now.", "s#4"),
        ("user: Use port 8080.", "s#6"),
    ]
    meta = chunks[0].fields()["metadata"]
    assert meta["role"] == "user" and len(meta["source_hash"]) == 32
