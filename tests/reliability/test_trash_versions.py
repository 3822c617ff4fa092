"""The trash keeps every removed version of a note (round 3): on bae2764 a note file
written again under a removed note's id, then removed too, replaced the first removal's
copy in `.amem/trash/`, and `undo` could bring back only the second."""

from __future__ import annotations

import json
import time

import pytest


def _plan(vault, text: str) -> bytes:
    """A note file a person writes, with `id: plan`; its bytes."""
    data = f"---\nid: plan\ntags: [work]\n---\n{text}\n".encode()
    (vault / "plan.md").write_bytes(data)
    return data


def _trash(run, *args) -> list[dict]:
    res = run("trash", *args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_a_reused_id_never_overwrites_an_earlier_removal(run, vault):
    first = _plan(vault, "The first plan: ship the kiln in May.")
    res = run("rm", "--yes", "plan")
    assert res.exit_code == 0 and "amem undo plan brings it back" in res.stdout

    second = _plan(vault, "The second plan: wait for the glaze order.")
    res = run("undo", "plan")  # a note holds the id again, and has no revision
    assert res.exit_code == 2
    assert "amem trash plan" in res.stderr and "plan@N" in res.stderr  # on bae2764: the trash went unnamed

    assert run("rm", "--yes", "plan").exit_code == 0
    listed = _trash(run, "plan")
    assert [(row["version"], row["text"]) for row in listed] == [
        ("plan@1", "The second plan: wait for the glaze order."),
        ("plan@2", "The first plan: ship the kiln in May."),
    ]
    assert all(row["path"] == "plan.md" and row["removed"] for row in listed)

    res = run("undo", "plan")  # the newest, and it says which and what is left
    assert res.exit_code == 0
    assert res.stdout.startswith("restored plan@1 (removed ") and "from plan.md); 1 more in the trash" in res.stdout
    assert (vault / "plan.md").read_bytes() == second
    assert [row["text"] for row in _trash(run)] == ["The first plan: ship the kiln in May."]

    assert run("rm", "--yes", "plan").exit_code == 0
    res = run("undo", "plan@2", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["restored"]["version"] == "plan@2"
    assert (vault / "plan.md").read_bytes() == first  # the first removal, byte for byte
    assert [row["text"] for row in _trash(run, "plan")] == ["The second plan: wait for the glaze order."]


def test_undo_of_a_version_that_is_not_there_or_over_a_note_is_refused(run, vault):
    _plan(vault, "A plan to remove.")
    assert run("rm", "--yes", "plan").exit_code == 0
    missing = run("undo", "plan@3")
    assert missing.exit_code == 3 and "no version 3 of plan" in missing.stderr
    _plan(vault, "A plan that holds the id now.")
    over = run("undo", "plan@1")
    assert over.exit_code == 2 and "would overwrite it" in over.stderr
    assert "holds the id now" in (vault / "plan.md").read_text()


def test_an_empty_trash_is_said(run):
    assert run("trash").stdout.strip() == "The trash is empty."
    assert _trash(run) == []


def test_a_removal_kept_by_an_older_amem_comes_back(run, vault):
    """`.amem/trash/ID.md` and `ID.json`, as bae2764 kept a removal."""
    assert run("add", "a note").exit_code == 0  # makes the index folder
    trash = vault / ".amem" / "trash"
    trash.mkdir(mode=0o700, exist_ok=True)
    data = b"---\nid: old\n---\nRemoved before versions were kept.\n"
    (trash / "old.md").write_bytes(data)
    (trash / "old.json").write_text(json.dumps({"id": "old", "path": "old.md", "removed": time.time(), "linked_from": {}}))
    assert [row["version"] for row in _trash(run)] == ["old@1"]
    assert run("undo", "old").exit_code == 0
    assert (vault / "old.md").read_bytes() == data
    assert list(trash.iterdir()) == []


def test_the_python_api_lists_and_brings_back_versions(memory):
    for text in ("Version one of the note.", "Version two of the note."):
        note = memory.add(text)
        memory.delete(note.id)
    ids = [entry.id for entry in memory.trash()]
    assert len(ids) == 2
    assert memory.undo(f"{ids[1]}@1").content == "Version one of the note."
    with pytest.raises(Exception, match="no version"):
        memory.undo(f"{ids[0]}@2")
