"""The CLI through Typer's CliRunner: exit codes, output, and the files and rows written."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from typer.testing import CliRunner

from amem_cli.cli.app import app
from amem_cli.markdown import parse_note
from conftest import index_rows


def test_init_writes_gitignore(run, vault):
    res = run("init")
    assert res.exit_code == 0, res.output
    assert ".amem/" in (vault / ".gitignore").read_text()
    assert (vault / ".amem" / "index.db").exists()


def test_add_prints_id_and_writes_file(run, vault):
    res = run("add", "Alice prefers tea over coffee", "-k", "Alice", "-t", "people", "--box", "friends",
              "--meta", "source=chat", "--context", "A drink preference.")
    assert res.exit_code == 0, res.output
    note_id = res.stdout.strip()
    path = vault / f"{note_id}.md"
    note = parse_note(path.read_text())
    assert note.content == "Alice prefers tea over coffee"
    assert note.keywords == ["Alice"] and note.tags == ["people"] and note.boxes == ["friends"]
    assert note.metadata == {"source": "chat"} and note.context == "A drink preference."
    assert index_rows(vault, "SELECT id FROM notes") == [(note_id,)]
    assert index_rows(vault, "SELECT tag FROM note_tags") == [("people",)]


def test_add_from_stdin(run, vault):
    res = run("add", input="piped text\n")
    assert res.exit_code == 0, res.output
    res2 = run("add", "-", input="dash text")
    assert res2.exit_code == 0
    contents = sorted(parse_note(p.read_text()).content for p in vault.glob("*.md"))
    assert contents == ["dash text", "piped text"]


def test_add_json(run):
    res = run("add", "hello world", "--json")
    data = json.loads(res.stdout)
    assert set(data) >= {"id", "content", "keywords", "tags", "context", "created_at", "updated_at", "links",
                         "backlinks", "boxes", "metadata"}
    assert data["content"] == "hello world"


def test_empty_content_fails_cleanly(run, vault):
    res = run("add", "   ")
    assert res.exit_code == 2
    assert "empty" in res.stderr
    assert "Traceback" not in res.output
    assert not list(vault.glob("*.md"))


def test_bad_meta(run):
    res = run("add", "x", "--meta", "novalue")
    assert res.exit_code == 2 and "key=value" in res.stderr


def test_show_unknown_id(run):
    run("init")
    res = run("show", "20990101T000000000-dead")
    assert res.exit_code == 3
    assert "no note with the id" in res.stderr


def test_show_json_error_object(run):
    run("init")
    res = run("show", "nope", "--json")
    assert res.exit_code == 3
    assert json.loads(res.stdout)["error"].startswith("no note")


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/../../b", "..", "a\x00b"])
def test_ids_cannot_escape(run, bad):
    run("init")
    res = run("show", bad)
    assert res.exit_code == 2
    assert "not a valid note id" in res.stderr


def test_missing_vault(tmp_path):
    res = CliRunner().invoke(app, ["--dir", str(tmp_path / "nope"), "list"])
    assert res.exit_code == 4
    assert "does not exist" in res.stderr and "amem init" in res.stderr


def test_unwritable_vault(tmp_path):
    import os

    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    res = CliRunner().invoke(app, ["--dir", str(ro), "init"])
    assert res.exit_code == 4


def test_list_filters(run):
    run("add", "old note", "-t", "a", "--created", "2020-01-01")
    run("add", "new note", "-t", "b", "--box", "work", "--created", "2024-06-01")
    ids = lambda res: [n["content"] for n in json.loads(res.stdout)]  # noqa: E731
    assert ids(run("list", "--json")) == ["new note", "old note"]
    assert ids(run("list", "--tag", "a", "--json")) == ["old note"]
    assert ids(run("list", "--box", "work", "--json")) == ["new note"]
    assert ids(run("list", "--since", "2023-01-01", "--json")) == ["new note"]
    assert ids(run("list", "--until", "2023-01-01", "--json")) == ["old note"]
    assert ids(run("list", "--limit", "1", "--json")) == ["new note"]
    human = run("list")
    assert human.exit_code == 0 and "old note" in human.stdout


def test_search(run):
    run("add", "Alice prefers tea over coffee")
    run("add", "The server runs on port 8080")
    res = run("search", "tea", "--json")
    assert res.exit_code == 0, res.output
    hits = json.loads(res.stdout)
    assert hits[0]["content"] == "Alice prefers tea over coffee"
    assert "keyword" in hits[0]["sources"]
    human = run("search", "port 8080", "--explain")
    assert "The server runs on port 8080" in human.stdout and "keyword #1" in human.stdout


def test_search_empty_query(run):
    run("init")
    res = run("search", "  ")
    assert res.exit_code == 2


def test_rm_removes_links(run, vault):
    a = run("add", "note a").stdout.strip()
    b = run("add", "note b").stdout.strip()
    # Link them by hand, the way a person would in an editor.
    pa, pb = vault / f"{a}.md", vault / f"{b}.md"
    pa.write_text(pa.read_text().replace("links: []", f"links:\n- '[[{b}]]'"))
    pb.write_text(pb.read_text().replace("backlinks: []", f"backlinks:\n- '[[{a}]]'"))
    assert json.loads(run("show", a, "--json").stdout)["links"] == [b]
    res = run("rm", b)
    assert res.exit_code == 0, res.output
    assert not pb.exists()
    assert parse_note(pa.read_text()).links == []
    assert index_rows(vault, "SELECT count(*) FROM links") == [(0,)]
    assert run("show", b).exit_code == 3


def test_external_edit_new_and_deleted_files_are_picked_up(run, vault):
    a = run("add", "original text").stdout.strip()
    path = vault / f"{a}.md"
    path.write_text(path.read_text().replace("original text", "edited by hand"))
    assert json.loads(run("show", a, "--json").stdout)["content"] == "edited by hand"
    (vault / "dropped.md").write_text("A note dropped into the folder\n")
    assert json.loads(run("show", "dropped", "--json").stdout)["content"] == "A note dropped into the folder"
    assert json.loads(run("search", "dropped folder", "--json").stdout)[0]["id"] == "dropped"
    path.unlink()
    assert run("show", a).exit_code == 3
    assert [n["id"] for n in json.loads(run("list", "--json").stdout)] == ["dropped"]


def test_malformed_file_is_reported_and_skipped(run, vault):
    run("add", "good note")
    bad = vault / "bad.md"
    bad.write_text("---\nid: bad\ntags: [unclosed\n---\nbody\n")
    before = bad.read_bytes()
    res = run("list", "--json")
    assert res.exit_code == 0
    assert len(json.loads(res.stdout)) == 1
    assert "bad.md:4" in res.stderr
    assert bad.read_bytes() == before
    status = json.loads(run("status", "--json").stdout)
    assert any("bad.md" in e for e in status["errors"])


def test_status_and_reindex(run, vault):
    for text in ("one", "two", "three"):
        run("add", text)
    st = json.loads(run("status", "--json").stdout)
    assert st["notes"] == 3 and st["indexed"] == 3 and st["embedded"] == 3
    assert st["embedding_model"] == "hash" and st["embedding_dimensions"] == 256
    (vault / "extra.md").write_text("four\n")
    assert json.loads(run("status", "--json").stdout)["pending_changes"] == 1
    before = json.loads(run("search", "two four", "--json").stdout)
    import shutil

    shutil.rmtree(vault / ".amem")
    res = run("reindex")
    assert res.exit_code == 0, res.output
    assert "Indexed 4 notes" in res.stdout
    after = json.loads(run("search", "two four", "--json").stdout)
    assert [(h["id"], h["score"]) for h in after] == [(h["id"], h["score"]) for h in before]


def test_embedder_change_requires_reindex(vault):
    runner = CliRunner()
    runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "add", "hello"])
    con = sqlite3.connect(vault / ".amem" / "index.db")
    con.execute("UPDATE meta SET value = 'other-model:99' WHERE key = 'embedder'")
    con.commit()
    con.close()
    res = runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "search", "hello"])
    assert res.exit_code == 7
    assert "amem reindex" in res.stderr
    assert runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "reindex", "-q"]).exit_code == 0
    assert runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "search", "hello"]).exit_code == 0


def test_edit_uses_editor(run, vault, monkeypatch, tmp_path):
    a = run("add", "before edit").stdout.strip()
    script = tmp_path / "ed.sh"
    script.write_text("#!/bin/sh\nsed -i 's/before edit/after edit/' \"$1\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(script))
    res = run("edit", a)
    assert res.exit_code == 0, res.output
    assert json.loads(run("show", a, "--json").stdout)["content"] == "after edit"
    assert index_rows(vault, "SELECT content FROM notes_fts") == [("after edit",)]


def test_version():
    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.startswith("amem ")


def test_show_renders_the_whole_note(run, vault):
    """Every field; links, backlinks, previous and next with the first words of the note
    each names (a link to no note says so); metadata as YAML, not a Python dict."""
    first = run("add", "Caroline joined a pottery class on Saturdays with an old friend from work",
                "-m", "source=chat", "-m", "mood=very: happy", "-k", "pottery", "-t", "art", "--box", "hobbies",
                "--context", "A new hobby.", "--created", "2023-05-08T13:56").stdout.strip()
    reply = run("add", "Yes, she loves the kiln", "--after", first).stdout.strip()
    other = run("add", "Kilns reach 1240 degrees").stdout.strip()
    path = vault / f"{first}.md"
    path.write_text(path.read_text().replace("links: []", f"links:\n- '[[{other}]]'\n- '[[Nobody Here]]'"))
    back = vault / f"{other}.md"
    back.write_text(back.read_text().replace("backlinks: []", f"backlinks:\n- '[[{first}]]'"))
    res = run("show", first)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == first
    assert "created: 2023-05-08T13:56:00+00:00" in lines and any(ln.startswith("updated: ") for ln in lines)
    assert {"keywords: pottery", "tags: art", "boxes: hobbies", "context: A new hobby."} <= set(lines)
    assert f"next: {reply}  Yes, she loves the kiln" in lines
    at = lines.index("links:")
    assert lines[at + 1:at + 3] == [f"  {other}  Kilns reach 1240 degrees", "  Nobody Here  (no such note)"]
    at = lines.index("metadata:")
    assert lines[at + 1:at + 3] == ["  source: chat", "  mood: 'very: happy'"]
    assert "{" not in res.stdout  # no Python dict
    assert lines[-1] == "Caroline joined a pottery class on Saturdays with an old friend from work"
    back = run("show", other).stdout.splitlines()
    assert back[back.index("backlinks:") + 1] == f"  {first}  Caroline joined a pottery class on Saturdays with …"
    assert f"previous: {first}  Caroline joined a pottery class on Saturdays with …" in run("show", reply).stdout
    assert "related" not in json.loads(run("show", first, "--json").stdout)  # --json: the note as ever


# -- rm: asks in a terminal, and can be undone ------------------------------------------------


def _rm_at_a_terminal(amem_cmd, vault, note_id: str, answer: str) -> tuple[int, str]:
    """`amem rm ID` with its standard input a terminal (a pty) that types `answer`."""
    import os
    import pty
    import subprocess

    main, child = pty.openpty()
    proc = subprocess.Popen([*amem_cmd, "--dir", str(vault), "--embedder", "fake", "rm", note_id],
                            stdin=child, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    os.close(child)
    os.write(main, answer.encode() + b"\n")
    out, _ = proc.communicate(timeout=120)
    os.close(main)
    return proc.returncode, out


def test_rm_asks_at_a_terminal(run, vault, amem_cmd):
    note = run("add", "a note to keep").stdout.strip()
    code, out = _rm_at_a_terminal(amem_cmd, vault, note, "n")
    assert code == 1 and f"Remove 1 note ({note}) (`amem undo ID` brings one back)? [y/N]" in out and "Aborted" in out
    assert (vault / f"{note}.md").exists()
    code, out = _rm_at_a_terminal(amem_cmd, vault, note, "y")
    assert code == 0 and f"removed {note}" in out
    assert not (vault / f"{note}.md").exists()


def test_rm_without_a_terminal_goes_on_and_undo_brings_the_note_back(run, vault):
    """A script is not asked (rm(1) asks no one but a person either); the note, the links
    other notes had to it and its place in its sequence all come back with `amem undo`."""
    first = run("add", "first turn about pottery").stdout.strip()
    middle = run("add", "second turn about kilns", "--after", first).stdout.strip()
    last = run("add", "third turn about glaze", "--after", middle).stdout.strip()
    other = run("add", "a note that links to the kilns").stdout.strip()
    path = vault / f"{other}.md"
    path.write_text(path.read_text().replace("links: []", f"links:\n- '[[{middle}]]'"))
    before = (vault / f"{middle}.md").read_bytes()

    res = run("rm", middle)
    assert res.exit_code == 0 and res.stdout == f"removed {middle} (amem undo {middle} brings it back)\n"
    assert not (vault / f"{middle}.md").exists()
    assert show(run, first)["next"] == last and show(run, other)["links"] == []
    assert run("search", "kilns", "--json").stdout.count(middle) == 0

    res = run("undo", middle)
    assert res.exit_code == 0 and re.fullmatch(rf"restored {middle}@1 \(removed [0-9T:+-]+ from {middle}\.md\)", res.stdout.strip())
    assert (vault / f"{middle}.md").read_bytes() == before
    assert show(run, first)["next"] == middle and show(run, last)["previous"] == middle
    assert show(run, other)["links"] == [middle]
    assert json.loads(run("search", "kilns", "--json").stdout)[0]["id"] == middle
    assert not list((vault / ".amem" / "trash").iterdir())  # taken out of the trash


def test_rm_purge_keeps_nothing(run, vault):
    note = run("add", "the api key was hunter2hunter2").stdout.strip()
    res = run("rm", "--purge", note, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout) == {"removed": [note]}
    assert not list((vault / ".amem" / "trash").glob(f"{note}.*"))
    undo = run("undo", note)
    assert undo.exit_code == 3 and "no note with the id" in undo.stderr


def test_trash_days_zero_keeps_nothing_and_old_removals_expire(run, vault, monkeypatch):
    import time

    old = run("add", "removed long ago").stdout.strip()
    assert run("rm", old).exit_code == 0
    (info,) = (vault / ".amem" / "trash").glob(f"{old}@*.json")
    data = json.loads(info.read_text())
    info.write_text(json.dumps({**data, "removed": time.time() - 31 * 86400}))
    fresh = run("add", "removed now").stdout.strip()
    assert run("rm", fresh).exit_code == 0
    assert sorted(p.name.split("@")[0] + p.suffix for p in (vault / ".amem" / "trash").iterdir()) == [f"{fresh}.json", f"{fresh}.md"]
    monkeypatch.setenv("AMEM_TRASH_DAYS", "0")
    gone = run("add", "not kept").stdout.strip()
    res = run("rm", gone)
    assert res.exit_code == 0 and res.stdout == f"removed {gone}\n"  # no promise of an undo
    assert not list((vault / ".amem" / "trash").glob(f"{gone}*")) and not list((vault / ".amem" / "trash").glob(f"{fresh}*"))


def show(run, note_id) -> dict:
    res = run("show", note_id, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_boxes_rebuild_files_the_notes_again_and_says_what_it_did(run, vault):
    texts = ["Sourdough starter: feed the sourdough starter with rye flour every morning.",
             "The sourdough starter doubled overnight after a rye flour feed.",
             "Sourdough bread: the starter needs rye flour and a warm kitchen."]
    for text in texts:
        assert run("--llm", "none", "add", text).exit_code == 0
    for path in vault.glob("*.md"):  # as if amem had left them in the inbox
        path.write_text(path.read_text().replace("- sourdough\n", "- inbox\n"))  # boxes and metadata.amem_boxes
    res = run("--llm", "none", "boxes", "--rebuild", "--json")
    assert res.exit_code == 0, res.output
    done = json.loads(res.stdout)
    assert done["filed"] == done["moved"] == 3 and [b["box"] for b in done["boxes"]] == ["sourdough"]
    res = run("--llm", "none", "boxes", "--rebuild")
    assert res.exit_code == 0 and "3 notes filed into 1 boxes, 0 moved" in res.stdout


def test_commands_with_a_progress_bar_print_only_their_result_on_a_pipe(run_amem, vault):
    """The bar is drawn on a terminal only: stopped on a pipe, it left a blank line."""
    run_amem("--dir", vault, "--embedder", "fake", "add", "One note to index", check=True)
    for args, said in ((["reindex"], "Indexed 1 notes, embedded 1.\n"),
                       (["process"], "Processed 0 notes; 0 still queued.\n")):
        res = run_amem("--dir", vault, "--embedder", "fake", *args, check=True)
        assert res.stdout == said
