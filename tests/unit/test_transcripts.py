"""Transcripts parsed into messages and split into notes."""

from __future__ import annotations

import json

import pytest

from amem_cli.transcripts import MAX_CHARS, filler, parse, split


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


def test_tiny_messages_merged_and_filler_kept_with_what_it_answers():
    rows = [("user", "Please deploy the service to staging today"), ("user", "on port 8080"),
            ("assistant", "ok"), ("assistant", "Deploying it to staging now."), ("assistant", "thanks!"),
            ("user", "Use port 8080 from now on.")]
    text = "\n".join(json.dumps({"role": r, "content": c}) for r, c in rows)
    chunks = split(parse(text), "s")
    assert [(c.content, c.source, c.messages) for c in chunks] == [
        ("user: Please deploy the service to staging today\n\non port 8080\n\nassistant: ok\n\n"
         "assistant: Deploying it to staging now.\n\nassistant: thanks!", "s#1", [1, 2, 3, 4, 5]),
        ("user: Use port 8080 from now on.", "s#6", [6]),
    ]
    meta = chunks[0].fields()["metadata"]
    assert meta["role"] == "user" and meta["source_hash"] == parse(text)[4].key  # the last message it holds


def test_filler_is_kept_with_the_message_it_answers_or_leads_into():
    rows = [("user", "The staging deploy of billing-api is stuck, pods in CrashLoopBackOff."),
            ("assistant", "Let me check the pods first."),
            ("assistant", "The pods crash because DATABASE_URL is missing from the billing-api-secrets Secret."),
            ("user", "Go ahead."),
            ("assistant", "Updated .env.staging"),  # a file not named before: a fact of its own
            ("user", "2 pm then."),  # a time: content
            ("user", "Thanks!")]
    chunks = split(parse("\n".join(json.dumps({"role": r, "content": c}) for r, c in rows)), "s")
    assert [c.messages for c in chunks] == [[1], [2, 3, 4], [5], [6, 7]]
    assert chunks[1].content.startswith("assistant: Let me check the pods first.\n\nassistant: The pods crash")
    assert chunks[1].source == "s#3"  # the note of the message the lead-in led into
    assert split(parse(json.dumps({"role": "user", "content": "ok thanks"})), "s") == []  # nothing to keep it with


@pytest.mark.parametrize(("text", "before", "after", "kept_with"), [
    ("Sounds good. Do both.", "Add the index and retry the job.", None, "previous"),
    ("Updated config/settings.py", "I'd put both timeouts in config/settings.py.", None, "previous"),
    ("Updated config/settings.py", "I'd put both timeouts in the settings module.", None, None),  # the file is new
    ("Running the tests now.", "Fine.", "The tests pass: 214 passed, 0 failed.", "next"),
    ("Deploy the tax-preview branch to staging.", None, "Deploying the tax-preview branch to staging.", None),  # a request
    ("Agreed, the old test was wrong. Go ahead.", "The test asserts the insertion order.", None, None),  # a judgement
])
def test_what_is_filler(text, before, after, kept_with):
    assert filler(text, before, after) == kept_with


def test_codex_rollout_lines_and_session_ids():
    from amem_cli.transcripts import read

    lines = [
        {"timestamp": "2025-12-08T00:37:46Z", "type": "session_meta", "payload": {"id": "0199-codex", "cwd": "/src"}},
        {"timestamp": "2025-12-08T00:38:00Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Rename the flag"}]}},
        {"timestamp": "2025-12-08T00:38:02Z", "type": "event_msg", "payload": {"type": "user_message", "message": "Rename the flag"}},
        {"timestamp": "2025-12-08T00:38:05Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Renamed it everywhere."}]}},
    ]
    codex = read("\n".join(json.dumps(r) for r in lines))
    assert codex.session == "0199-codex"
    assert [(m.role, m.text) for m in codex.messages] == [("user", "Rename the flag"), ("assistant", "Renamed it everywhere.")]
    claude = read(json.dumps({"type": "user", "sessionId": "abc-123", "message": {"role": "user", "content": "Hi there all"}}))
    assert claude.session == "abc-123"
    assert read(json.dumps({"conversation_id": "c-9", "messages": [{"role": "user", "content": "Hello"}]})).session == "c-9"
    assert read("user: plain text\nbot: has no session id").session is None


def test_keys_chain_the_transcript_so_far():
    from amem_cli.transcripts import identify, read

    rows = [{"role": "user", "content": "First question here"}, {"role": "assistant", "content": "First answer here"}]
    text = "\n".join(json.dumps(r) for r in rows)
    keys = [m.key for m in parse(text)]
    assert len(set(keys)) == 2 and all(len(k) == 32 for k in keys)
    assert [m.key for m in parse(text + "\n" + json.dumps({"role": "user", "content": "More"}))][:2] == keys  # grown
    assert parse(json.dumps(rows[1]))[0].key != keys[1]  # the same words after other ones
    other = read(text)
    identify(other.messages, "a-session-id")
    assert [m.key for m in other.messages] != keys  # a session id starts another chain
