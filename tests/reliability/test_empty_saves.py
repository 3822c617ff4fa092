"""An empty note file is a file being saved, not a note (round 3). Editors that truncate
the file, close it, open it again and append save so. On bae2764 amem took the moment
between for a note with no text: `amem add --after ID` wrote `keywords: []`, an empty
body and `next:` into the emptied file, the editor's append then left two frontmatter
blocks in one file, and `doctor` said "Consistent"."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

from conftest import internals

from amem_cli.errors import ConflictError

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))

from edit_race import race  # noqa: E402


def _add(run, *args) -> str:
    res = run("add", *args)
    assert res.exit_code == 0, res.output
    return res.stdout.strip()


def test_an_emptied_note_is_never_rewritten_and_is_reported(run, vault):
    first = _add(run, "The kiln log: fired at 1240 degrees.")
    path = vault / f"{first}.md"
    path.write_bytes(b"")  # `: > ID.md`, and it stays so
    res = run("add", "next", "--after", first)
    assert res.exit_code != 0
    assert path.read_bytes() == b""  # on bae2764: amem's frontmatter, `keywords: []`, `next:`
    assert f"{first}.md: empty" in res.stderr
    doctor = run("doctor", "--json")
    assert doctor.exit_code == 8
    problems = {p["kind"]: p["detail"] for p in json.loads(doctor.stdout)["problems"]}
    assert f"{first}.md: empty" in problems["bad_file"]  # (its vector's delete pending too: the add stopped)
    assert path.read_bytes() == b""


def test_a_note_saved_in_two_steps_is_waited_for(run, vault):
    """The file is empty for a moment: amem waits for the editor's write, then adds its
    link to what the editor wrote, once (one frontmatter)."""
    first = _add(run, "The kiln log: fired at 1240 degrees.")
    path = vault / f"{first}.md"
    saved = path.read_bytes().replace(b"1240 degrees", b"1250 degrees, corrected")
    path.write_bytes(b"")

    def append_later():
        time.sleep(0.3)
        with open(path, "ab") as fh:
            fh.write(saved)

    editor = threading.Thread(target=append_later)
    editor.start()
    second = _add(run, "The next firing.", "--after", first)
    editor.join()
    text = path.read_text()
    assert text.count("\n---\n") == 1 and text.startswith("---\n")  # one frontmatter
    assert "1250 degrees, corrected" in text and f"next: '[[{second}]]'" in text, text
    assert run("doctor").exit_code == 0


def test_the_writer_refuses_a_file_that_stays_empty(memory, monkeypatch):
    """The moment between amem's read of the index and its write: the file is emptied then."""
    note = memory.add("A note an editor is about to save in two steps.")
    path = memory.path / internals(memory).notes.path_of(note.id)
    monkeypatch.setattr("amem_cli.vault.SETTLE", 0.2)
    path.write_bytes(b"")
    try:
        internals(memory).notes.update(note.id, lambda n: n.copy(), sync=False, embed=False)
        raise AssertionError("the emptied file was rewritten")
    except ConflictError as exc:
        assert "is empty" in exc.message
    assert path.read_bytes() == b""


def test_doctor_finds_two_frontmatter_blocks_and_leaves_them(run, vault):
    note = _add(run, "The kiln log.")
    path = vault / f"{note}.md"
    own = path.read_text()
    path.write_text(own[: own.index("\n---\n", 3) + 5] + own)  # amem's frontmatter in the emptied file, then the editor's save
    before = path.read_bytes()
    res = run("doctor", "--fix", "--json")
    assert res.exit_code == 8
    problems = json.loads(res.stdout)["problems"]
    assert [p["kind"] for p in problems] == ["second_frontmatter"] and f"{note}.md" in problems[0]["detail"]
    assert path.read_bytes() == before  # the person's to mend


def test_a_horizontal_rule_is_no_second_frontmatter(run, vault):
    (vault / "rule.md").write_text("---\nid: rule\n---\n---\nA line between two rules.\n---\nmore text\n")
    assert run("search", "line between rules").exit_code == 0  # indexed and embedded
    assert run("doctor").exit_code == 0


def test_an_editor_saving_in_two_steps_during_a_race_never_sees_two_frontmatters(vault):
    o = race(vault, adds=30, pause=0.003, ways=("in two steps",))
    assert o.failures == [] and o.lost == []
    assert o.doubled == 0, f"{o.doubled} of the editor's reads found two frontmatter blocks"
    assert o.saves >= 100 and o.amem_rewrites >= 3
    assert o.doctor == []
