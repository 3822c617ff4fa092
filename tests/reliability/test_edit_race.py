"""A person saving a note while amem rewrites it: no save is ever replaced by amem's copy
of an older version. A real race through the warm server (an editor saving every few ms
while added notes link to its note; `benchmarks/edit_race.py` runs it at full size), and
the moments such a race can hit, made to happen exactly: a save while amem's new version
is made durable, and a save in place that is under way while amem writes."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from amem_cli.errors import ConflictError

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))

from edit_race import race  # noqa: E402
from conftest import internals


def test_an_editor_saving_while_the_server_links_its_note_loses_no_save(vault):
    o = race(vault, adds=40, pause=0.003)
    assert o.failures == []
    assert o.lost == [], f"{len(o.lost)} of {o.saves} saves lost: {o.lost[:5]}"
    assert o.adds == 40
    assert o.saves >= 200  # a race, not a handful of saves
    assert o.amem_rewrites >= 5  # amem did write the note under the editor, many times
    assert o.doubled == 0  # saves in two steps: amem never wrote into the emptied file
    assert o.doctor == []  # links the editor's old buffers undid were mended at the next sync


def save_by_rename(path: Path, text: str) -> None:
    """As `sed -i` and vim save: a new file renamed over the note."""
    tmp = path.with_name("sed-save")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def test_a_save_while_amem_makes_its_version_durable_is_kept_and_amem_redoes_its_change(memory, monkeypatch):
    """The moment fe90fbb lost saves in: after the unchanged-check, before the rename."""
    note = memory.add("The keeper's first log entry.", tags=["log"])
    path = memory.path / f"{note.id}.md"
    person = path.read_text(encoding="utf-8").replace("first log entry", "first log entry, corrected by hand")
    fsync, saved = os.fsync, []

    def fsync_after_a_save(fd):
        if not saved:
            saved.append(save_by_rename(path, person))
        fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_after_a_save)
    internals(memory).notes.update(note.id, lambda n: replace(n, tags=[*n.tags, "weather"]), embed=False)
    monkeypatch.undo()
    assert saved
    text = path.read_text(encoding="utf-8")
    assert "corrected by hand" in text  # the person's bytes
    assert "- weather" in text  # amem's change, made again on top of them
    assert memory.get(note.id).tags == ["log", "weather"]
    assert "corrected by hand" in memory.get(note.id).content


def test_a_save_in_place_under_way_is_never_replaced(memory):
    """An editor that writes into the file itself (truncate, write) has it open for writing:
    amem's version must not take the file's place meanwhile, or the save goes into a file
    that is no longer the note's."""
    note = memory.add("The keeper's log, before the storm.")
    path = memory.path / f"{note.id}.md"
    person = path.read_bytes().replace(b"before the storm", b"after the storm, saved in place")
    with open(path, "r+b") as editor:
        editor.truncate(0)
        with pytest.raises(ConflictError, match="is being saved by another program"):
            internals(memory).notes.update(note.id, lambda n: replace(n, tags=["storm"]), embed=False)
        editor.write(person)
    assert path.read_bytes() == person
    assert [p.name for p in memory.path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_rewritten_note_keeps_its_mode_and_a_new_note_gets_what_an_editor_gives(memory):
    """Finding 7: a note file's mode 0664 became 0600 once amem rewrote it."""
    note = memory.add("A note a group shares.")
    path = memory.path / f"{note.id}.md"
    for mode in (0o664, 0o640):
        path.chmod(mode)
        internals(memory).notes.update(note.id, lambda n: replace(n, tags=[*n.tags, f"m{mode:o}"]), embed=False)
        assert path.stat().st_mode & 0o7777 == mode
    old = os.umask(0o002)
    try:
        added = memory.add("A note added under umask 002.")
    finally:
        os.umask(old)
    assert (memory.path / f"{added.id}.md").stat().st_mode & 0o7777 == 0o664


def test_an_evolution_that_meets_a_save_gives_way_and_the_add_goes_on(vault, monkeypatch):
    """The model's change to a linked note is dropped, not made on the person's new
    version (a note a person edits is theirs: amem does not evolve those), and the note
    being added is stored and linked all the same."""
    from amem_cli import AgentMemory
    from amem_cli.llm.fake import ScriptedLLM, evolution_reply

    def reply(messages, schema):
        props = set(schema.get("properties", {}))
        if props == {"notes"}:
            return evolution_reply(messages, schema, lambda older: {
                "context": "The lighthouse keeper's log of the weather and the tides.", "tags": ["weather"]})
        return {"links": [1]} if props == {"links"} else {"keywords": ["lighthouse"], "tags": ["log"], "context": "A log."}

    with AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=reply), link_threshold=0.0) as mem:
        old = mem.add("The lighthouse keeper logs the weather.", context="The keeper's log.")
        path = mem.path / f"{old.id}.md"
        fsync, saved = os.fsync, []

        def fsync_after_a_save(fd):  # when amem makes the evolved version of the old note durable
            if not saved and os.readlink(f"/proc/self/fd/{fd}").startswith(str(path.with_name(f".{path.name}."))):
                person = path.read_text(encoding="utf-8").replace("logs the weather", "logs the weather, twice a day")
                saved.append(save_by_rename(path, person))
            fsync(fd)

        monkeypatch.setattr(os, "fsync", fsync_after_a_save)
        new = mem.add("The lighthouse keeper logs the tides.")
        monkeypatch.undo()
        assert saved
        kept = mem.get(old.id)
        assert "twice a day" in kept.content and kept.context == "The keeper's log."
        assert kept.backlinks == [new.id] and mem.get(new.id).links == [old.id]
        # No evolution: only the fields amem derived (keywords, tags), derived again from the new text.
        assert [r.cause for r in mem.history(old.id)] == ["edit"]
