"""`amem ingest` through CliRunner: notes written, sources, idempotence, redaction, similar."""

from __future__ import annotations

import json
import sqlite3

import pytest

from amem_cli.markdown import parse_note

AWS = "AKIAQWERTYUIOPASDFGH"
PW = "Sup3rS3cretPw"
GH = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"


def _notes(vault):
    return sorted((parse_note(p.read_text()) for p in vault.glob("*.md")), key=lambda n: n.metadata["source"])


def _jsonl(*rows):
    return "\n".join(json.dumps(r) for r in rows) + "\n"


CHAT = _jsonl(
    {"role": "user", "content": "Why does the nightly backup job fail on the new server?", "timestamp": "2024-05-01T10:00:00Z"},
    {"role": "assistant", "content": "The backup user lacks write access to /srv/backups.", "timestamp": "2024-05-01T10:00:05Z"},
    {"role": "user", "content": "ok", "timestamp": "2024-05-01T10:00:09Z"},
)


def test_jsonl_notes_with_sources_timestamps_and_sequence(run, vault, tmp_path):
    f = tmp_path / "chat.jsonl"
    f.write_text(CHAT)
    res = run("ingest", str(f))
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == ["ingested 2 notes from chat.jsonl (0 redactions, 0 already present)"]
    first, second = _notes(vault)
    assert first.content.startswith("user: Why does the nightly backup")
    assert first.metadata["source"] == "chat.jsonl#1" and first.metadata["role"] == "user"
    assert second.metadata["source"] == "chat.jsonl#2"
    assert first.created_at.isoformat() == "2024-05-01T10:00:00+00:00"
    assert first.next == second.id and second.previous == first.id


def test_second_ingest_adds_nothing(run, vault, tmp_path):
    f = tmp_path / "chat.jsonl"
    f.write_text(CHAT)
    assert run("ingest", str(f)).exit_code == 0
    res = run("ingest", "--json", str(f))
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["ingested"], out["skipped"], out["ids"]) == (0, 2, [])
    assert len(list(vault.glob("*.md"))) == 2


@pytest.mark.parametrize("name, text, expected", [
    ("notes.md", "# Deploys\n\nWe deploy on Fridays after the smoke tests pass.\n\nRollbacks use the previous image tag.", 2),
    ("talk.txt", "Alice: the staging database moves to the new cluster\nBob: then the migration runs on Monday", 2),
    ("openai.json", json.dumps({"messages": [{"role": "system", "content": "You are a careful assistant."},
                                             {"role": "user", "content": "Summarise the incident report please"}]}), 2),
    ("claude.jsonl", _jsonl(
        {"type": "user", "timestamp": "2025-01-02T03:04:05Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "Find why the login test is flaky"}]}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "The test shares a port with the mail stub."}, {"type": "tool_use", "name": "Bash"}]}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}},
    ), 2),
])
def test_formats(run, vault, tmp_path, name, text, expected):
    f = tmp_path / name
    f.write_text(text)
    res = run("ingest", str(f))
    assert res.exit_code == 0, res.output
    notes = _notes(vault)
    assert len(notes) == expected
    assert [n.metadata["source"] for n in notes] == [f"{name}#{i}" for i in range(1, expected + 1)]


def test_secrets_redacted_everywhere(run, vault):
    text = _jsonl(
        {"role": "user", "content": f"Deploy with key {AWS} and postgres://app:{PW}@db:5432/main please"},
        {"role": "assistant", "content": f"Pushed it with the token {GH} to the release branch."},
    )
    res = run("ingest", "--json", "-", input=text)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["redactions"] == 3
    files = "".join(p.read_text() for p in vault.glob("*.md"))
    assert "[REDACTED:aws_key]" in files and "postgres://app:[REDACTED:url_password]@db" in files
    db = b"".join(p.read_bytes() for p in (vault / ".amem").rglob("*") if p.is_file())
    for secret in (AWS, PW, GH):
        assert secret not in files and secret.encode() not in db
    con = sqlite3.connect(vault / ".amem" / "index.db")
    rows = " ".join(str(r) for r in con.execute("SELECT content, context, keywords, metadata FROM notes"))
    con.close()
    assert AWS not in rows and PW not in rows and GH not in rows


def test_no_redact_keeps_secrets(run, vault):
    res = run("ingest", "--no-redact", "-", input=f"user: my key is {AWS} for the deploy\nbot: noted, I will use it")
    assert res.exit_code == 0, res.output
    assert "(0 redactions" in res.stdout
    assert AWS in "".join(p.read_text() for p in vault.glob("*.md"))


def test_near_duplicate_is_named_similar(run, vault, tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("The nightly backup fails because the backup user lacks write access to the backups folder.")
    b.write_text("The nightly backup fails because the backup user lacks write access to the backups folder!")
    assert run("ingest", str(a)).exit_code == 0
    first = _notes(vault)[0].id
    res = run("ingest", str(b))
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == "ingested 1 notes from b.txt (0 redactions, 0 already present)"
    assert lines[1].startswith("similar: ") and f"~ {first} (" in lines[1]
    assert len(list(vault.glob("*.md"))) == 2  # reported, not merged
    # (b.txt piped again would be b.txt itself, and add nothing: a third wording)
    out = json.loads(run("ingest", "--json", "-", input=b.read_text().replace("!", "?") + "\n").stdout)
    assert out["similar"] and out["similar"][0]["score"] >= 0.9


def test_stdin_dash_and_no_argument(run, vault):
    res = run("ingest", input="A single paragraph about rotating the TLS certificates every quarter.")
    assert res.exit_code == 0, res.output
    assert "from stdin" in res.stdout
    assert _notes(vault)[0].metadata["source"] == "stdin#1"


def test_bad_files_fail_with_one_line(run, vault, tmp_path):
    res = run("ingest", str(tmp_path / "missing.jsonl"))
    assert res.exit_code == 3
    assert res.stderr.splitlines()[0] == f"Error: no file at {tmp_path / 'missing.jsonl'}"
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe\x00binary\x80")
    res = run("ingest", str(bad))
    assert res.exit_code == 2
    assert res.stderr.splitlines()[0] == f"Error: {bad} is not text: it holds NUL bytes"
    assert not list(vault.glob("*.md"))
