"""The index resolves links by name as the notes come and go: a link to a note not yet
written resolves when it is; a renamed or deleted note's links move; `amem rm` takes the
links to the note away however they were written; an index from before link names is
migrated without reading the files again."""

from __future__ import annotations

import json
import sqlite3

import sqlite_utils

from amem_cli.index.migrations import migrations
from amem_cli.index.sqlite import SqliteIndex
from amem_cli.retrieve.fields import SearchFields
from amem_cli.markdown import parse_note
from conftest import index_rows


def edges(mem) -> set[tuple[str, str, str]]:
    return set(index_rows(mem.path, "SELECT src, kind, dst FROM links WHERE dst IS NOT NULL"))


def test_links_resolve_as_notes_come_rename_and_go(memory):
    root = memory.path
    (root / "Ideas.md").write_text('---\nlinks: ["[[Project Plan|the plan]]"]\n---\nSee [[Budget#Q3]].\n')
    memory.sync()
    assert edges(memory) == set()
    assert memory.get("Ideas").links == ["Project Plan"]  # naming no note: shown as written
    (root / "Project Plan.md").write_text("The plan.\n")
    (root / "Budget.md").write_text("---\nid: budget-2024\n---\nCosts.\n")
    memory.sync()
    assert edges(memory) == {("Ideas", "link", "Project-Plan"), ("Ideas", "text", "budget-2024")}
    assert memory.get("Ideas").links == ["Project-Plan"]
    (root / "Project Plan.md").rename(root / "Plan v2.md")  # the id goes with the file name: the link no longer names it
    (root / "Old budget.md").write_text("---\ntitle: Budget\n---\nLast year.\n")  # a title ranks below the file name
    memory.sync()
    assert edges(memory) == {("Ideas", "text", "budget-2024")}
    (root / "Budget.md").unlink()
    memory.sync()
    assert edges(memory) == {("Ideas", "text", "Old-budget")}  # now the title is the best name


def test_rm_takes_away_the_links_to_the_note_however_written(memory):
    root = memory.path
    (root / "Project Plan.md").write_text("---\nbacklinks: ['[[Ideas]]']\n---\nThe plan.\n")
    (root / "Other.md").write_text("Other.\n")
    ideas = '---\nlinks: ["[[project plan#Goals|the plan]]", "[[Other]]"]\n---\nSee [[Project Plan]].\n'
    (root / "Ideas.md").write_text(ideas)
    memory.sync()
    memory.delete("Project-Plan")
    note = parse_note((root / "Ideas.md").read_text(), fallback_id="Ideas")
    assert note.links == ["Other"] and note.content == "See [[Project Plan]]."  # the text is never changed
    assert memory.doctor().ok


def test_an_index_from_before_link_names_is_migrated(tmp_path):
    path = tmp_path / "index.db"
    db = sqlite_utils.Database(sqlite3.connect(str(path), isolation_level=None))
    migrations.apply(db, stop_before="m008_link_names")
    for note_id, file, links in (("a", "a.md", ["b", "[[Project Plan|p]]"]), ("Project-Plan", "Project Plan.md", []),
                                 ("b", "sub/b.md", [])):
        db.execute("INSERT INTO notes(id, path, content, keywords, tags, links, backlinks, boxes, metadata, extra) "
                   "VALUES (?, ?, 'text [[b]]', '[]', '[]', ?, '[]', '[]', '{}', '{}')", [note_id, file, json.dumps(links)])
    db.execute("INSERT INTO links(src, dst, kind) VALUES ('a', 'b', 'link')")
    db.conn.close()
    index = SqliteIndex(path, SearchFields())
    rows = set(index.db.execute("SELECT src, kind, dst FROM links WHERE dst IS NOT NULL AND src != dst").fetchall())
    assert rows == {("a", "link", "b"), ("a", "link", "Project-Plan"), ("a", "text", "b"), ("Project-Plan", "text", "b")}
    assert index.notes.get("a").links == ["b", "Project-Plan"]
    index.close()
