"""Supersessions found during an import (issue 40: imports at the machine's pace): found
without a look at the whole vault per note, and with every guarantee of one found when a
note is added: a pinned or hand-edited older note gets `superseded_by` in the index only,
its file left as it is; every other change is a revision."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from amem_cli.config import load_settings
from amem_cli.operations import Facade
from amem_cli.services.indexer import Indexer
from amem_cli.vault import Vault
from amem_cli.wire.editing import History
from amem_cli.wire.intake import Import
from amem_cli.wire.notes import Show

from conftest import internals

SYSTEMS = ["billing", "payroll", "search", "gateway", "ledger", "mailer", "scheduler", "archive", "metrics",
           "catalog", "invoice", "reports"]


def planned(n: int) -> list[dict]:
    """A migration date for each of `n` systems."""
    return [{"content": f"The {s} service migration is scheduled for March {i + 3}.", "created_at": f"2024-01-{i + 1:02d}T10:00"}
            for i, s in enumerate(SYSTEMS[:n])]


def moved(n: int) -> list[dict]:
    """Each of those dates moved: the newer note supersedes the older."""
    return [{"content": f"The {s} service migration moved to April {i + 10}, not March {i + 3}.",
             "created_at": f"2024-02-{i + 1:02d}T10:00"} for i, s in enumerate(SYSTEMS[:n])]


def jsonl(path: Path, items: list[dict]) -> str:
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return str(path)


def facade_on(vault: Path, **settings) -> Facade:
    """The command's own process (no server, so no watcher: each sync looks at every file)."""
    return Facade(load_settings(dir=str(vault), embedder="fake", llm="none", **settings), create=True)


@pytest.fixture
def facade(tmp_path):
    facade = facade_on(tmp_path / "vault")
    yield facade
    facade.close()


def test_an_import_looks_at_and_writes_the_vault_as_often_for_3_supersessions_as_for_12(tmp_path, monkeypatch):
    """n older notes and the n newer that supersede them, in one import (one batch): the
    vault is scanned, synced and written (each write one flush to disk) as often for n = 3
    as for 12 (it was a sync once per supersession, and a write of each of its two notes)."""
    looks = {}
    for n in (3, 12):
        facade = facade_on(tmp_path / f"vault-{n}")
        try:
            with monkeypatch.context() as patch:
                counts = counted(patch)
                report = facade.run(Import(jsonl(tmp_path / f"notes-{n}.jsonl", planned(n) + moved(n))))
            looks[n] = counts
            old, new = report.ids[:n], report.ids[n:]
            superseding = [facade.run(Show(i)).note.supersedes for i in new]
        finally:
            facade.close()
        assert sum(bool(set(s) & set(old)) for s in superseding) >= n // 2  # recorded as the import goes (8 of 12)
    assert looks[3] == looks[12]


def counted(monkeypatch) -> dict[str, int]:
    """How often the vault is scanned whole, synced, and written (a file, or a batch of
    files), from now on."""
    counts = {"scans": 0, "syncs": 0, "writes": 0}
    for cls, name, key in ((Vault, "scan", "scans"), (Indexer, "sync", "syncs"), (Vault, "write_text", "writes"),
                           (Vault, "write_many", "writes")):
        monkeypatch.setattr(cls, name, counting(counts, key, getattr(cls, name)))
    return counts


def counting(counts: dict[str, int], key: str, method):
    def counted_method(self, *args, **kwargs):
        counts[key] += 1
        return method(self, *args, **kwargs)
    return counted_method


def test_a_note_both_superseding_and_superseded_in_one_import_is_written_once(facade, tmp_path):
    """A date moved twice, the three notes in one import: the middle note supersedes the
    first and is superseded by the last, both said in its one revision."""
    dates = [{"content": "The billing service migration is scheduled for March 3.", "created_at": "2024-01-01T10:00"},
             {"content": "The billing service migration moved to April 10, not March 3.", "created_at": "2024-02-01T10:00"},
             {"content": "The billing service migration moved to May 20, not April 10.", "created_at": "2024-03-01T10:00"}]
    first, middle, last = facade.run(Import(jsonl(tmp_path / "notes.jsonl", dates))).ids
    note = facade.run(Show(middle)).note
    assert (note.supersedes, note.superseded_by) == ([first], [last])
    [revision] = facade.run(History(middle))
    assert revision.change.startswith(f"supersedes {first} (") and revision.change.endswith(f"; superseded by {last}")
    assert [r.change for r in facade.run(History(first))] == [f"superseded by {middle}"]
    assert f"superseded_by:\n- '[[{last}]]'" in (tmp_path / "vault" / f"{middle}.md").read_text()


def test_pinned_and_hand_edited_older_notes_are_superseded_in_the_index_only(tmp_path):
    """Older notes imported first; then a person pins one and edits another (their save
    comes after amem's write); the newer notes imported later supersede all three: the
    pinned and the edited files stay as the person left them, the index says it of them,
    the third file says it too, in a revision. (No links: a backlink written into the
    edited file would make it amem's latest version again.)"""
    facade = facade_on(tmp_path / "vault", max_links=0)
    try:
        superseded_in_the_index_only(facade, tmp_path)
    finally:
        facade.close()


def superseded_in_the_index_only(facade: Facade, tmp_path: Path) -> None:
    pinned, edited, plain = facade.run(Import(jsonl(tmp_path / "old.jsonl", planned(3)))).ids
    vault = tmp_path / "vault"
    pin = vault / f"{pinned}.md"
    pin.write_text(pin.read_text().replace("---\n", "---\npinned: true\n", 1))
    edit = vault / f"{edited}.md"
    edit.write_text(edit.read_text().replace("---\n", "---\nreviewed: by Ana\n", 1))  # the text as it was
    later = os.stat(edit).st_mtime + 10  # saved well after amem wrote it
    os.utime(edit, (later, later))
    before = {p: p.read_bytes() for p in (pin, edit)}

    newer = facade.run(Import(jsonl(tmp_path / "new.jsonl", moved(3)))).ids

    for older, newest in zip((pinned, edited, plain), newer):
        assert facade.run(Show(older)).note.superseded_by == [newest]
        assert facade.run(Show(newest)).note.supersedes == [older]
    assert {p: p.read_bytes() for p in before} == before
    assert "supersede" not in [r.cause for r in facade.run(History(pinned)) + facade.run(History(edited))]
    assert f"superseded_by:\n- '[[{newer[2]}]]'" in (vault / f"{plain}.md").read_text()
    assert [r.change for r in facade.run(History(plain))] == [f"superseded by {newer[2]}"]


def test_a_pin_saved_while_the_import_stores_keeps_the_file_as_the_person_left_it(facade, tmp_path, monkeypatch):
    """A person pins an older note of the same import just before its supersession is
    recorded (after the import's last sync, within seconds of amem's write, so its file
    does not look hand-edited): amem reads the file afresh, finds it pinned and leaves it."""
    supersessions = internals(facade).supersessions
    detect = supersessions.detect
    vault = tmp_path / "vault"

    def pinned_first(notes):
        for path in vault.glob("*.md"):
            if "scheduled for March 3" in path.read_text():
                path.write_text(path.read_text().replace("---\n", "---\npinned: true\n", 1))
                return detect(notes)
        raise AssertionError("the older note is not there")

    monkeypatch.setattr(supersessions, "detect", pinned_first)
    old, new = facade.run(Import(jsonl(tmp_path / "notes.jsonl", planned(1) + moved(1)))).ids
    text = (vault / f"{old}.md").read_text()
    assert "pinned: true" in text and "superseded_by" not in text
    assert facade.run(Show(new)).note.supersedes == [old]
    assert facade.run(Show(old)).note.superseded_by == [new]  # the index knows it from the newer note


def test_a_save_during_the_batch_s_write_gets_the_supersession_on_its_bytes_in_one_revision(facade, tmp_path, monkeypatch):
    """A person saves an older note between amem's read of the batch's files and their
    write: no file of the batch is changed by that try, its revisions are dropped, and
    the next try makes the change on the person's bytes, one revision a note."""
    writer = internals(facade).writer
    revise_many, write_many = writer.revise_many, Vault.write_many
    saved = []

    def saving_first(self, items, *rest):
        if not saved:
            old = self.abspath(next(rel for rel, text, _ in items if "superseded_by" in text))
            old.write_text(old.read_text().replace("scheduled for March 3.", "scheduled for March 3 (said Ana)."))
            saved.append(old)
        return write_many(self, items, *rest)

    def recording(changes, **options):
        with monkeypatch.context() as patch:
            patch.setattr(Vault, "write_many", saving_first)
            return revise_many(changes, **options)

    monkeypatch.setattr(writer, "revise_many", recording)
    old, new = facade.run(Import(jsonl(tmp_path / "notes.jsonl", planned(1) + moved(1)))).ids
    text = saved[0].read_text()
    assert "(said Ana)" in text and f"superseded_by:\n- '[[{new}]]'" in text
    assert [r.change for r in facade.run(History(old))] == [f"superseded by {new}"]
    assert [r.change for r in facade.run(History(new))] == [f"supersedes {old} (date: March 3 -> April 10)"]
