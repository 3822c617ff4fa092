"""Malformed and unusual note files (corpus in hostile_files.py), through the sync every
command starts with, `amem reindex`, `amem status` and search: every bad file is
reported with its path and line and left byte-identical, the rest of the vault indexes,
and the odd-but-valid files read right and survive amem rewriting them."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from hostile_files import bad_files, odd_files

from amem_cli.markdown import parse_note
from amem_cli.limits import MAX_CONTENT_BYTES
from amem_cli.text import is_stopword, words

GOOD = {
    "good-1": "Zebras migrate across the Serengeti every year.",
    "good-2": "Quokkas live on Rottnest Island near Perth.",
    "good-3": "Axolotls regrow their limbs and parts of their brains.",
}


def _digests(vault: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in vault.glob("*.md")}


def _where(bad) -> str:
    return f"{bad.name}:{bad.line}:" if bad.line else f"{bad.name}:"


@pytest.fixture
def hostile_vault(vault: Path) -> Path:
    for note_id, text in GOOD.items():
        (vault / f"{note_id}.md").write_text(f"---\nid: {note_id}\n---\n{text}\n", encoding="utf-8")
    for f in [*bad_files(), *odd_files()]:
        (vault / f.name).write_bytes(f.data)
    return vault


def _reported(problems: list[str], bad) -> bool:
    return any(p.startswith(_where(bad)) and bad.says in p for p in problems)


def test_bad_files_are_reported_with_path_and_line_and_left_alone(hostile_vault, run):
    before = _digests(hostile_vault)
    bad = bad_files()

    first = run("list", "--json", "--limit", "1000")  # the sync any command starts with
    assert first.exit_code == 0, first.output
    warnings = [line.removeprefix("Warning: ") for line in first.stderr.splitlines()]
    assert [b.name for b in bad if not _reported(warnings, b)] == []

    reindexed = run("reindex", "--json")
    assert reindexed.exit_code == 0, reindexed.output
    report = json.loads(reindexed.stdout)
    assert [b.name for b in bad if not _reported(report["errors"], b)] == []
    assert report["notes"] == len(GOOD) + len(odd_files())

    status = run("status", "--json")
    assert status.exit_code == 0, status.output
    st = json.loads(status.stdout)
    assert [b.name for b in bad if not _reported(st["errors"], b)] == []
    assert len(st["errors"]) == len(bad)  # one line per bad file, none for the others
    assert st["indexed"] == st["embedded"] == len(GOOD) + len(odd_files())

    for note_id, text in GOOD.items():
        found = run("search", text.split()[0], "--mode", "keyword", "--json")
        assert found.exit_code == 0, found.output
        assert [h["id"] for h in json.loads(found.stdout)][:1] == [note_id]

    assert _digests(hostile_vault) == before  # not one byte of any file changed


def test_odd_but_valid_files_index_as_written(hostile_vault, run):
    assert run("reindex", "-q").exit_code == 0
    for odd in odd_files():
        res = run("show", odd.id, "--json")
        assert res.exit_code == 0, (odd.name, res.output)
        note = json.loads(res.stdout)
        assert note["content"] == odd.content, odd.name
        assert tuple(note["tags"]) == odd.tags, odd.name
        if odd.content.strip():
            word = next(w for w in words(odd.content) if w.isalpha() and len(w) > 3 and not is_stopword(w))
            hits = json.loads(run("search", word, "--mode", "keyword", "--json", "--limit", "50").stdout)
            assert odd.id in [h["id"] for h in hits], (odd.name, word)


def test_odd_files_survive_amem_rewriting_them(hostile_vault, run):
    """`add --after ID` makes amem rewrite note ID's file (its `next`): its text, tags
    and a person's own keys must come back as they were."""
    assert run("reindex", "-q").exit_code == 0
    paths = {odd.id: hostile_vault / odd.name for odd in odd_files()}
    for odd in odd_files():
        res = run("add", f"After {odd.id}.", "--after", odd.id, "--tag", "t")
        assert res.exit_code == 0, (odd.name, res.output)
        new_id = res.stdout.strip()
        rewritten = parse_note(paths[odd.id].read_text(encoding="utf-8"))
        assert rewritten.id == odd.id
        assert rewritten.content == odd.content, odd.name
        assert tuple(rewritten.tags) == odd.tags, odd.name
        assert rewritten.next == new_id
        for key, value in (odd.extra or {}).items():
            assert rewritten.extra[key] == value, (odd.name, key)
    # And the rewritten files index cleanly from scratch.
    report = json.loads(run("reindex", "--json").stdout)
    assert [e for e in report["errors"] if not any(e.startswith(b.name) for b in bad_files())] == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_named_md_does_not_hang_the_vault(vault, run):
    (vault / "ok.md").write_text("---\nid: ok\n---\nPlain note\n", encoding="utf-8")
    os.mkfifo(vault / "pipe.md")
    res = run("list", "--json")  # reading the FIFO would block for ever
    assert res.exit_code == 0, res.output
    assert [n["id"] for n in json.loads(res.stdout)] == ["ok"]


@pytest.mark.parametrize(
    "text, says",
    [
        ("before\x00after", "NUL character"),
        ("x" * (MAX_CONTENT_BYTES + 1), "larger than"),
        ("a stray byte \udcff from argv", "not valid UTF-8"),
    ],
    ids=["nul", "oversized", "surrogate"],
)
def test_amem_never_writes_a_note_it_would_refuse_to_read(vault, run, text, says):
    if "\udcff" not in text:  # a bad byte on argv is replaced, not refused (test_bad_bytes.py)
        res = run("add", "-", input=text) if len(text) > 1000 else run("add", text)
        assert res.exit_code == 2, res.output
        assert says in res.stderr and "Traceback" not in res.output
        assert list(vault.glob("*.md")) == []
    jsonl = vault.parent / "in.jsonl"
    jsonl.write_text(json.dumps({"content": text}) + "\n" + json.dumps({"content": "A fine line."}) + "\n")
    report = json.loads(run("import", str(jsonl), "--json").stdout)
    assert report["imported"] == 1 and len(report["problems"]) == 1 and says in report["problems"][0]
    assert json.loads(run("reindex", "--json").stdout)["errors"] == []
