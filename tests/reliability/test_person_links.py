"""Links as people write them (Obsidian, zk, basic-memory) name the notes they mean, and
nothing amem does removes or rewrites them.

The vault below is written the way Obsidian writes one: file names with spaces, a
folder, notes without frontmatter or without an `id`, links in the frontmatter as
`"[[Project Plan|the plan]]"`, `"[[budget-2024#Q3]]"`, `"[[people/Alice Smith]]"` and in
the text as `[[...]]`, `[[Note#Heading]]`, an alias, `[text](../Budget.md)` and zk's
`[text](id)`. On fe90fbb doctor called the frontmatter links dangling and `--fix`
rewrote the file with `links: []`; the graph had no edge from a name; a rewrite of a
note (a backlink added) turned `[[Project Plan|the plan]]` into `[[Project Plan]]`; and
doctor said "Consistent" with a file whose YAML is broken."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from amem_cli import AgentMemory
from amem_cli.markdown import parse_note, render_note
from amem_cli.models import Note
from conftest import internals

VAULT = {
    "Project Plan.md": "# Project Plan\n\nThe launch of the walnut orchard app, step by step.\n\n## Goals\n\nShip by June.\n",
    "Budget.md": (
        "---\nid: budget-2024\naliases:\n  - Money\n  - Spending 2024\n---\n"
        "Costs of the walnut orchard app: servers, design and a stand at the farmers' market.\n"
    ),
    "people/Alice Smith.md": (
        "Alice runs design. She wrote [[Project Plan#Goals]] and keeps [the numbers](../Budget.md).\n"
        "`[[Not A Link]]` is code, and so is this:\n\n```\n[[Nor This]]\n```\n"
    ),
    "Meeting 2024-05-01.md": (
        "---\ntags: [meeting]\nlinks:\n"
        '  - "[[Project Plan|the plan]]"\n  - "[[budget-2024#Q3]]"\n  - "[[people/Alice Smith]]"\n'
        "---\nWe agreed on [[Project Plan|the plan]] and on [[Money]].\n"
    ),
    "Ideas.md": "Next: a [[project plan.md]] review, more [[spending 2024|money]], and [the meeting](Meeting%202024-05-01).\n",
}
IDS = {"Project Plan.md": "Project-Plan", "Budget.md": "budget-2024", "people/Alice Smith.md": "Alice-Smith",
       "Meeting 2024-05-01.md": "Meeting-2024-05-01", "Ideas.md": "Ideas"}
# The links above, as pairs of the notes they name (each pair once, whichever way).
EDGES = {
    frozenset(pair)
    for pair in [
        ("Meeting-2024-05-01", "Project-Plan"),  # frontmatter alias form, and in the text
        ("Meeting-2024-05-01", "budget-2024"),  # `[[budget-2024#Q3]]`, and `[[Money]]` (an alias)
        ("Meeting-2024-05-01", "Alice-Smith"),  # a path in a folder
        ("Alice-Smith", "Project-Plan"),  # `[[Project Plan#Goals]]` in the text
        ("Alice-Smith", "budget-2024"),  # `[the numbers](../Budget.md)`
        ("Ideas", "Project-Plan"),  # `[[project plan.md]]`: case and `.md` aside
        ("Ideas", "budget-2024"),  # an alias, `[[spending 2024|money]]`
        ("Ideas", "Meeting-2024-05-01"),  # zk's `[text](id)`, URL-encoded
    ]
}


def write_vault(vault: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (vault / name).parent.mkdir(parents=True, exist_ok=True)
        (vault / name).write_bytes(text.encode("utf-8"))


def digests(vault: Path) -> dict[str, str]:
    return {str(p.relative_to(vault)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in vault.rglob("*.md") if ".amem" not in p.parts}


@pytest.fixture
def obsidian(vault: Path) -> Path:
    write_vault(vault, VAULT)
    return vault


def test_an_obsidian_vault_is_consistent_and_its_links_are_the_graph(obsidian, run):
    assert run("reindex").exit_code == 0
    # One note amem keeps backlinks in, with a backlink from a note that does not link
    # it: `--fix` has backlinks to mend, and must touch no other file while it does.
    (obsidian / "tidy.md").write_text(render_note(Note("tidy", "Tidy the shed.", backlinks=["Ideas"])), encoding="utf-8")
    before = digests(obsidian)
    assert run("doctor").exit_code == 8
    res = run("doctor", "--fix")
    assert res.exit_code == 0, res.output
    assert res.stdout.strip().endswith("Consistent: 6 notes.")
    after = digests(obsidian)
    assert {name for name in after if after[name] != before[name]} == {"tidy.md"}
    assert parse_note((obsidian / "tidy.md").read_text()).backlinks == []
    res = run("doctor")
    assert res.exit_code == 0 and res.stdout.strip() == "Consistent: 6 notes.", res.output

    graph = json.loads(run("graph", "--format", "json").stdout)
    assert {frozenset((e["source"], e["target"])) for e in graph["edges"]} == EDGES
    shown = json.loads(run("show", "Meeting-2024-05-01", "--json").stdout)
    assert shown["links"] == ["Project-Plan", "budget-2024", "Alice-Smith"]
    assert digests(obsidian) == after  # reading changed nothing


def test_the_search_graph_list_reaches_a_note_by_its_name(obsidian):
    with AgentMemory(obsidian, embedder="fake") as mem:
        mem.sync()
        search = internals(mem).search
        # The walk from the meeting note alone (a search's graph list, seeded by one hit).
        reached = dict(search._graph({"Meeting-2024-05-01": 1.0}, 50, None))
        assert {"Project-Plan", "budget-2024", "Alice-Smith"} <= set(reached)
        # From Alice, two hops: through the plan and the budget, to the meeting and the ideas.
        assert set(dict(search._graph({"Alice-Smith": 1.0}, 50, None))) == set(IDS.values())


def test_a_dangling_link_is_reported_and_kept(obsidian, run):
    draft = "---\nlinks:\n  - \"[[Not Yet Written|later]]\"\n  - \"[[Project Plan]]\"\n---\nA draft.\n"
    write_vault(obsidian, {"Draft.md": draft})
    assert run("reindex").exit_code == 0
    before = digests(obsidian)
    for args in (["doctor"], ["doctor", "--fix"], ["doctor"]):
        res = run(*args)
        assert res.exit_code == 8, res.output
        assert "problem: dangling_link: Draft.md links [[Not Yet Written|later]], which names no note" in res.stdout
        assert "create that note, or correct the link in Draft.md" in res.stdout
        assert "problem:" not in res.stdout.replace("problem: dangling_link", "")  # nothing else is wrong
        assert digests(obsidian) == before
    res = run("doctor", "--json")
    problems = json.loads(res.stdout)["problems"]
    assert [(p["kind"], p["subject"]) for p in problems] == [("dangling_link", "Draft")]


def test_a_file_doctor_cannot_read_is_a_problem_left_byte_identical(vault, run):
    """On fe90fbb: a warning, exit 0 and "Consistent: 1 note."."""
    broken = b"---\ntitle: Groceries\ntags: [food\nlinks: ['[[Project Plan]]']\n---\nEggs, flour.\n"
    write_vault(vault, {"Project Plan.md": VAULT["Project Plan.md"]})
    (vault / "Groceries.md").write_bytes(broken)
    assert run("reindex").exit_code == 0
    for args in (["doctor"], ["doctor", "--fix"]):
        res = run(*args)
        assert res.exit_code == 8, res.output
        assert res.stdout.startswith("problem: bad_file: Groceries.md:4: bad YAML frontmatter"), res.output
        assert "edit the files named above" in res.stderr
        assert (vault / "Groceries.md").read_bytes() == broken
    data = json.loads(run("doctor", "--fix", "--json").stdout)
    assert data["ok"] is False and data["fixed"] == []
    assert [(p["kind"], p["subject"]) for p in data["problems"]] == [("bad_file", "Groceries.md")]


def test_amem_rewriting_a_persons_note_keeps_their_link_forms(obsidian):
    with AgentMemory(obsidian, embedder="fake", llm="none", link_threshold=-1.0, link_k=10, max_links=10) as mem:
        new = mem.add("A review of the walnut orchard plan, its goals, budget and meeting.")
        assert set(new.links) == set(IDS.values())  # linked to every note: each gets a backlink
        for name, text in VAULT.items():
            now = (obsidian / name).read_text(encoding="utf-8")
            was, note = parse_note(text, fallback_id="x"), parse_note(now, fallback_id="x")
            assert note.content == was.content, name  # the text, byte for byte
            assert note.links == was.links, name  # every link as the person wrote it
            assert new.id in note.backlinks, name  # amem's backlink, by id
            for form in ("[[Project Plan|the plan]]", "[[budget-2024#Q3]]", "[[people/Alice Smith]]"):
                assert (form in now) == (form in text), (name, form)
            assert now.endswith(text.split("---\n")[-1]), name  # the body, byte for byte
        meeting = parse_note((obsidian / "Meeting 2024-05-01.md").read_text(), fallback_id="x")
        assert meeting.links == ["[[Project Plan|the plan]]", "[[budget-2024#Q3]]", "[[people/Alice Smith]]"]
        # Made whole when first written: the plan keeps a backlink from the meeting too.
        plan = parse_note((obsidian / "Project Plan.md").read_text(), fallback_id="x")
        assert plan.backlinks == ["Meeting-2024-05-01", new.id]
        report = mem.doctor()
        assert report.ok, report.problems
