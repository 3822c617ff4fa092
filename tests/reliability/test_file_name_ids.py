"""Ids from file names. A file without an `id:` gets its name as its id; every name
without ASCII letters (`会议.md`, `Заметка.md`, `Ιδέες.md`) used to become `note`, and
`My Note.md` and `My-Note.md` both `My-Note`: only the first of each was indexed, the
others vanished from search with one warning. Now a name keeps its letters in any
script, and where two files want one id both are indexed: one gets it, the other a
`collision_id` made from its own path, the same on every run, after a reindex and
whatever order the files came in; the collision is reported once, with both paths."""

from __future__ import annotations

import json
import random
import sqlite3
import unicodedata
from pathlib import Path

import pytest

from amem_cli import AgentMemory
from amem_cli.ids import check_id, is_valid_id

SCRIPTS = {
    "会议.md": ("会议", "Quarterly budget meeting with the finance team."),
    "Заметка.md": ("Заметка", "Notes on the Murmansk weather report."),
    "Ιδέες.md": ("Ιδέες", "Ideas for the new harbour museum."),
    "नमस्ते दुनिया.md": ("नमस्ते-दुनिया", "Greetings from the Kathmandu office."),  # combining vowel signs
    unicodedata.normalize("NFD", "Café.md"): ("Café", "The espresso machine needs descaling."),  # as macOS names it
}


def _ids(res) -> list[str]:
    assert res.exit_code == 0, res.output
    return [n["id"] for n in json.loads(res.stdout)]


def _indexed(vault: Path) -> dict[str, str]:
    con = sqlite3.connect(vault / ".amem" / "index.db")
    try:
        return dict(con.execute("SELECT path, id FROM notes"))
    finally:
        con.close()


def test_names_in_any_script_keep_their_letters(vault, run):
    for name, (_, text) in SCRIPTS.items():
        (vault / name).write_text(text + "\n", encoding="utf-8")
    (vault / "links.md").write_text("---\nid: links\nlinks: ['[[会议]]', '[[Заметка]]']\n---\nSee the others.\n")
    listed = run("list", "--json")
    assert sorted(_ids(listed)) == sorted(["links", *(i for i, _ in SCRIPTS.values())])
    assert "Warning" not in listed.stderr
    for _, (note_id, text) in SCRIPTS.items():
        assert is_valid_id(note_id) and check_id(note_id) == note_id
        word = text.split()[-2]
        assert _ids(run("search", word, "--mode", "keyword", "--json"))[:1] == [note_id], word
        shown = run("show", note_id, "--json")
        assert shown.exit_code == 0 and json.loads(shown.stdout)["content"] == text, shown.output
    around = run("graph", "--around", "links", "--format", "json")
    assert around.exit_code == 0, around.output
    assert {e["target"] for e in json.loads(around.stdout)["edges"]} >= {"会议", "Заметка"}
    before = (vault / "会议.md").read_bytes()
    fixed = run("doctor", "--fix", "--json")
    assert fixed.exit_code == 0, fixed.output
    assert json.loads(run("doctor", "--json").stdout)["ok"]
    assert sorted(json.loads(run("show", "links", "--json").stdout)["links"]) == sorted(["会议", "Заметка"])
    assert (vault / "会议.md").read_bytes() == before  # a note a person wrote gets no backlinks list from links
    assert json.loads(run("reindex", "--json").stdout)["errors"] == []
    assert sorted(_indexed(vault).values()) == sorted(["links", *(i for i, _ in SCRIPTS.values())])


def test_names_with_nothing_an_id_may_hold_get_ids_of_their_own(vault, run):
    names = ["🎉.md", "!!!.md", "a\u202eb.md", "zero\u200bwidth.md", "_draft.md", "Thoughts....md"]
    for n, name in enumerate(names):
        (vault / name).write_text(f"Hostile name number{n} here.\n", encoding="utf-8")
    ids = _ids(run("list", "--json"))
    assert len(set(ids)) == len(names) and all(is_valid_id(i) for i in ids)
    assert all(unicodedata.category(c)[0] != "C" and c not in "/ " for i in ids for c in i)  # no control or format characters
    for n in range(len(names)):
        assert len(_ids(run("search", f"number{n}", "--mode", "keyword", "--json"))) == 1


COLLIDING = {
    "My Note.md": "Walruses haul out on the ice floes.",
    "My-Note.md": "Otters hold hands while they sleep.",
    "My  Note!.md": "Seals sing underwater in spring.",
    "a/session.md": "Alpha session about harbour cranes.",
    "b/session.md": "Beta session about lighthouse lenses.",
}


def test_colliding_names_are_both_found_and_reported_once(vault, run):
    from amem_cli.ids import collision_id

    for name, text in COLLIDING.items():
        (vault / name).parent.mkdir(exist_ok=True)
        (vault / name).write_text(text + "\n", encoding="utf-8")
    listed = run("list", "--json")
    assert len(_ids(listed)) == len(COLLIDING)
    warnings = [line for line in listed.stderr.splitlines() if line.startswith("Warning")]
    assert len(warnings) == 3  # one per file that did not get the id its name gives
    assert any("My Note.md" in w and "My-Note.md" in w for w in warnings)
    assert any("b/session.md" in w and "a/session.md" in w for w in warnings)
    assert "Warning" not in run("list", "--json").stderr  # once, not on every command

    ids = _indexed(vault)
    assert ids["My-Note.md"] == "My-Note" and ids["a/session.md"] == "session"  # the name that is the id as it is
    assert ids["My Note.md"] == collision_id("My-Note", "My Note.md")
    for name, text in COLLIDING.items():
        assert _ids(run("search", text.split()[0], "--mode", "keyword", "--json"))[:1] == [ids[name]]
        assert json.loads(run("show", ids[name], "--json").stdout)["content"] == text

    assert json.loads(run("reindex", "--json").stdout)["notes"] == len(COLLIDING)
    assert _indexed(vault) == ids  # the same ids after a rebuild
    assert json.loads(run("doctor", "--json").stdout)["ok"]

    (vault / "My-Note.md").unlink()  # the id is free again: the file that wants it most gets it
    assert "My-Note" in _ids(run("list", "--json"))
    freed = _indexed(vault)
    assert run("reindex", "-q").exit_code == 0
    assert _indexed(vault) == freed
    assert json.loads(run("doctor", "--json").stdout)["ok"]


def test_a_named_id_keeps_its_file_and_a_name_gives_way(vault, run):
    from amem_cli.ids import collision_id

    (vault / "My Note.md").write_text("Walruses haul out on the ice floes.\n")
    assert _ids(run("list", "--json")) == ["My-Note"]
    (vault / "other.md").write_text("---\nid: My-Note\n---\nA note that names its id.\n")
    listed = run("list", "--json")
    assert _indexed(vault) == {"other.md": "My-Note", "My Note.md": collision_id("My-Note", "My Note.md")}
    assert "My Note.md" in listed.stderr and "other.md" in listed.stderr


@pytest.mark.parametrize("seed", range(6))
def test_ids_do_not_depend_on_the_order_files_come_in(tmp_path, seed):
    """Files added and removed in a random order, synced at random moments: the ids are
    those a rebuild from scratch gives, every file is indexed, and doctor agrees."""
    names = [*COLLIDING, "note.md", "c/note.md", "named.md", "x/My-Note.md", "会议.md", "d/会议.md"]
    rnd = random.Random(seed)
    vault = tmp_path / "vault"
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        present: set[str] = set()
        for step in range(16):
            name = rnd.choice(names)
            path = vault / name
            if name in present and rnd.random() < 0.35:
                path.unlink()
                present.discard(name)
            else:
                path.parent.mkdir(exist_ok=True)
                head = "---\nid: note\n---\n" if name == "named.md" else ""
                path.write_text(f"{head}Text of {name} at step {step}.\n", encoding="utf-8")
                present.add(name)
            if rnd.random() < 0.6:
                mem.sync()
        mem.sync()
        synced = _indexed(vault)
        assert sorted(synced) == sorted(present)
        mem.reindex()
        assert _indexed(vault) == synced
        assert mem.doctor().ok
