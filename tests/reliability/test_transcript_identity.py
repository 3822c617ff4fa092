"""A transcript is known by what it says, not by its name. It used to be known by its
file's base name (or `stdin`) and the message number: two chats piped in that opened
with the same messages were spliced into one sequence, `a/session.jsonl` and
`b/session.jsonl` too, and a transcript piped and then passed by path was added twice.
Now: two sessions never splice (even when their first messages are the same, and when
one is all of the other and more but the logs give different session ids), the same
transcript by pipe, by path or from another folder adds nothing, and one that grew
adds only its new messages, at the end of its own sequence."""

from __future__ import annotations

import json
from pathlib import Path

SYSTEM = {"role": "system", "content": "You are a careful assistant who answers in full sentences."}
HELLO = {"role": "user", "content": "Hello there, I have a question about our infrastructure."}


def _jsonl(rows: list[dict], **extra) -> str:
    return "".join(json.dumps({**extra, **r}) + "\n" for r in rows)


def _turns(*texts: str) -> list[dict]:
    return [{"role": "user" if n % 2 == 0 else "assistant", "content": t} for n, t in enumerate(texts)]


SESSION_A = [SYSTEM, HELLO, *_turns("Why does the nightly backup job fail on the new server?",
                                    "The backup user lacks write access to the backups folder.",
                                    "How do we grant it without opening the folder to everyone?",
                                    "Add the backup user to the storage group and set the folder to 0770.")]
SESSION_B = [SYSTEM, HELLO, *_turns("Which port does the staging database listen on these days?",
                                    "It moved from 5432 to 6432 when the connection pooler went in.",
                                    "Does the migration script know about the new port yet?",
                                    "Not yet: its config still names 5432, so it fails to connect.")]


def _ingest(run, *args: str, input: str | None = None) -> dict:
    res = run("ingest", "--json", *args, input=input)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _notes(run) -> dict[str, dict]:
    res = run("list", "--json", "--limit", "1000")
    assert res.exit_code == 0, res.output
    return {n["id"]: n for n in json.loads(res.stdout)}


def _chains(run) -> list[list[str]]:
    """Every sequence in the vault, as the texts of its notes in order."""
    notes = _notes(run)
    heads = [n for n in notes.values() if not n["previous"]]
    chains = []
    for head in heads:
        chain, note = [], head
        while note is not None:
            chain.append(note["content"].split(": ", 1)[1])
            note = notes.get(note["next"]) if note["next"] else None
        chains.append(chain)
    return sorted(chains)


def _texts(rows: list[dict]) -> list[str]:
    return [r["content"] for r in rows]


def test_two_sessions_that_open_alike_never_splice(run):
    assert _ingest(run, "-", input=_jsonl(SESSION_A))["ingested"] == 6
    second = _ingest(run, "-", input=_jsonl(SESSION_B))
    assert (second["ingested"], second["skipped"]) == (6, 0)  # its own copy of the shared opening
    assert _chains(run) == sorted([_texts(SESSION_A), _texts(SESSION_B)])
    sessions = {n["metadata"]["session"] for n in _notes(run).values()}
    assert len(sessions) == 2


def test_same_name_in_two_folders_is_two_sessions(run, tmp_path):
    for folder, rows in (("a", SESSION_A), ("b", SESSION_B)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "session.jsonl").write_text(_jsonl(rows), encoding="utf-8")
    _ingest(run, str(tmp_path / "a" / "session.jsonl"), str(tmp_path / "b" / "session.jsonl"))
    assert _chains(run) == sorted([_texts(SESSION_A), _texts(SESSION_B)])
    assert {n["metadata"]["source"].split("#")[0] for n in _notes(run).values()} == {"session.jsonl"}  # for people


def test_sessions_with_their_own_ids_never_splice_even_when_one_extends_the_other(run):
    """Without ids, a transcript that says all another says and more is that one grown;
    a log that gives its session id (Claude Code's `sessionId`) says otherwise."""
    opening = [{"type": r["role"], "message": r} for r in SESSION_A[:4]]
    more = [{"type": r["role"], "message": r} for r in SESSION_A[4:]]
    _ingest(run, "-", input=_jsonl(opening, sessionId="7f1c0a52-first"))
    second = _ingest(run, "-", input=_jsonl(opening + more, sessionId="b2e9d413-second"))
    assert second["ingested"] == 6
    assert _chains(run) == sorted([_texts(SESSION_A[:4]), _texts(SESSION_A)])


def test_piped_then_by_path_from_anywhere_adds_nothing(run, tmp_path):
    text = _jsonl(SESSION_A)
    first = _ingest(run, "-", input=text)
    (tmp_path / "elsewhere").mkdir()
    for path in (tmp_path / "chat.jsonl", tmp_path / "elsewhere" / "renamed.jsonl"):
        path.write_text(text, encoding="utf-8")
        again = _ingest(run, str(path))
        assert (again["ingested"], again["skipped"]) == (0, first["ingested"])
    assert _ingest(run, "-", input=_jsonl(SESSION_A[:4]))["ingested"] == 0  # an older copy: held already
    assert _chains(run) == [_texts(SESSION_A)]


def test_a_grown_transcript_adds_only_its_new_messages_to_its_own_sequence(run, tmp_path):
    """An agent's end-of-session hook ingests the whole log again each time, by pipe or
    by path; another session in between shares its opening."""
    log = tmp_path / "session.jsonl"
    lines = [{"type": r["role"], "timestamp": f"2025-03-0{n + 1}T10:00:00Z", "message": r} for n, r in enumerate(SESSION_A)]
    opened = _ingest(run, "-", input=_jsonl(lines[:3], sessionId="5d0c-hook"))
    assert opened["ingested"] == 3
    _ingest(run, "-", input=_jsonl(SESSION_B))
    log.write_text(_jsonl(lines[:5], sessionId="5d0c-hook"), encoding="utf-8")
    grown = _ingest(run, str(log))
    assert (grown["ingested"], grown["skipped"]) == (2, 3)
    log.write_text(_jsonl(lines, sessionId="5d0c-hook"), encoding="utf-8")
    assert _ingest(run, str(log))["ingested"] == 1
    notes = _notes(run)
    assert notes[grown["ids"][0]]["previous"] == opened["ids"][-1]  # continues its own sequence
    assert _chains(run) == sorted([_texts(SESSION_A), _texts(SESSION_B)])


def test_a_grown_plain_text_transcript_continues_too(run, tmp_path):
    talk = ["Alice: the staging database moves to the new cluster on Monday",
            "Bob: then the migration script needs the new port first",
            "Alice: I will update its config before the move",
            "Bob: and I will tell the on-call engineer about the window"]
    assert _ingest(run, "-", input="\n".join(talk[:2]))["ingested"] == 2
    path = Path(tmp_path / "talk.txt")
    path.write_text("\n".join(talk), encoding="utf-8")
    grown = _ingest(run, str(path))
    assert (grown["ingested"], grown["skipped"]) == (2, 2)
    assert _chains(run) == [[line.split(": ", 1)[1] for line in talk]]


def test_a_key_is_never_a_hash_of_a_secret(run):
    """Keys are made from the messages as stored: a hash of the text before redaction
    would let anyone with the vault test guesses of a short password against it."""
    from amem_cli.redact import redact
    from amem_cli.transcripts import identify, read

    text = _jsonl([HELLO, {"role": "assistant", "content": "Connect with postgres://app:Sup3rS3cretPw@db:5432/main please."}])
    out = _ingest(run, "-", input=text)
    assert out["redactions"] == 1
    stored = {n["metadata"]["source_hash"] for n in _notes(run).values()}
    raw = read(text)
    assert raw.messages[1].key not in stored  # (the message with the password)
    for m in raw.messages:
        m.text = redact(m.text)[0]
    identify(raw.messages, raw.session)
    assert stored == {m.key for m in raw.messages}
