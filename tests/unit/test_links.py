"""`amem_cli.links`: the note a link names, however a person wrote it, and the round trip
of a link's written form through a note file."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from amem_cli.links import NameTable, body_links, key, names, target
from amem_cli.markdown import parse_note, render_note
from amem_cli.models import Note


@pytest.mark.parametrize(
    "written, aim",
    [
        ("[[20250103T091500000-zk01]]", "20250103T091500000-zk01"),
        ("[[Project Plan]]", "Project Plan"),
        ("[[Project Plan|the plan]]", "Project Plan"),
        ("[[Project Plan#Goals|the goals]]", "Project Plan"),
        ("[[x#heading]]", "x"),
        ("[[Note#^block-1]]", "Note"),
        ("![[Diagram note]]", "Diagram note"),
        ("[[folder/Note.md]]", "folder/Note.md"),
        ("[[a\\|shown in a table]]", "a"),
        ("[the plan](Project%20Plan.md#goals)", "Project Plan.md"),
        ("[zk](20250103T0915-ab12)", "20250103T0915-ab12"),
        ("[site](https://example.com/Note)", ""),
        ("[[#Heading in this note]]", ""),
        ("Project-Plan", "Project-Plan"),
        ("  Project Plan  ", "Project Plan"),
    ],
)
def test_target(written, aim):
    assert target(written) == aim


def test_key_ignores_case_md_and_leading_path_marks():
    assert key("./Folder/Project  Plan.MD") == key("folder/project plan") == "folder/project plan"
    assert key("../Budget.md") == key("/Budget") == "budget"
    assert key("Ｃafé") == key("ｃafé")  # NFC and casefold, not only ASCII


def test_names_and_their_ranks():
    got = names("Alice-Smith", "people/team/Alice Smith.md", {"title": "Alice", "aliases": ["A. Smith", 3, ""]})
    assert got == {"alice-smith": 0, "people/team/alice smith": 1, "team/alice smith": 1, "alice smith": 2,
                   "alice": 3, "a. smith": 3}


def test_resolution_order():
    table = NameTable()
    table.add("Plan", "Plan.md", {})
    table.add("plan", "old/plan.md", {})  # ids differing only in case
    table.add("budget-2024", "Budget.md", {"aliases": "plan"})  # an alias never beats a file name
    table.add("Project-Plan", "Project Plan.md", {})
    assert table.resolve("[[Plan]]") == "Plan" and table.resolve("[[plan]]") == "plan"  # the exact id first
    assert table.resolve("[[PLAN]]") == "Plan"  # then the smallest
    assert table.resolve("[[old/plan]]") == "plan"
    assert table.resolve("[[project plan|p]]") == "Project-Plan"
    assert table.resolve("[[Budget.md]]") == "budget-2024"
    assert table.resolve("[[Nowhere]]") is None and table.resolve("") is None and table.resolve(None) is None


def test_body_links_outside_code():
    text = (
        "See [[Project Plan#Goals|goals]], ![[Chart]] and [the budget](Budget.md \"title\").\n"
        "Not [a site](https://example.com), ![an image](pic.png) or [[#here]].\n"
        "`[[inline code]]` and\n```python\nx = '[[fenced]]'\n```\n~~~\n[[tilde fenced]]\n~~~\nafter [[After]]"
    )
    assert body_links(text) == ["[[Project Plan#Goals|goals]]", "![[Chart]]", "[[After]]",
                                '[the budget](Budget.md "title")']
    assert body_links("no links at all") == []


def test_body_links_take_linear_time_on_hostile_text():
    """Each regex stops at the next bracket and is bounded: no quadratic backtracking on
    2 MiB of brackets (a note file may be 2 MiB)."""
    hostile = ["[" * 2**21, "[[" + "a" * 2**21, "[a](" * 2**19, ("[x](" + "b" * 600) * 3000]
    for text in hostile:
        start = time.perf_counter()
        body_links(text)
        assert time.perf_counter() - start < 10  # quadratic would take hours; linear takes ~0.1 s


FORMS = st.sampled_from([
    "[[Project Plan|the plan]]", "[[x#heading]]", "[[people/Alice Smith]]", "[[Note.md]]", "Project Plan",
    "[the plan](Project%20Plan.md)", "![[Diagram]]", "[[20250103T091500000-zk01]]", "[[Plan#^b1|see]]",
])


@given(st.lists(FORMS, unique=True, max_size=5), st.lists(FORMS, unique=True, max_size=3))
def test_written_forms_survive_a_rewrite(links, backlinks):
    text = render_note(Note("n", "Body with [[Project Plan|the plan]]."))
    for name, written in (("\nlinks", links), ("\nbacklinks", backlinks)):
        if written:
            text = text.replace(f"{name}: []", f"{name}:" + "".join(f"\n- '{w}'" for w in written), 1)
    note = parse_note(text)
    rewritten = render_note(note)
    assert parse_note(rewritten) == note
    for w in links + backlinks:
        assert w in rewritten
    assert render_note(parse_note(rewritten)) == rewritten


def test_a_note_without_backlinks_is_not_given_an_empty_list():
    note = parse_note("---\ntags: [a]\n---\nA person's note.\n", fallback_id="x")
    assert not note.keeps_backlinks and "backlinks" not in render_note(note)
    note.backlinks = ["y"]
    assert parse_note(render_note(note)).keeps_backlinks


def test_an_unquoted_wikilink_in_yaml_gets_a_hint():
    with pytest.raises(Exception, match="put each link in quotes"):
        parse_note("---\nlinks:\n  - [[Project Plan]]\n---\nx\n", fallback_id="x")
