"""Current facts first, end to end through the CLI (Typer's CliRunner, fake embedder,
real SQLite and Chroma): supersession found when a note is added, `amem supersede`,
search and context putting the current note first, `--as-of`, exact duplicates,
`amem consolidate`, `--ttl` / `expires:` with `--include-expired` and `amem forget
--expired`."""

from __future__ import annotations

import json

import pytest

from conftest import index_rows

# A month of work notes, among them the two of issue 38: a caching decision changed, and a
# cut-over date moved.
WORK = [
    ("2024-03-01T10:00", "Decided to cache API responses with a 10-minute TTL."),
    ("2024-03-02T10:00", "The billing service owner is Tomás."),
    ("2024-03-04T10:00", "Events gateway cut-over scheduled for April 15, 22:00 UTC."),
    ("2024-03-05T10:00", "Weekly sync with the data team moved to Thursdays."),
    ("2024-03-07T10:00", "Staging uses the small Postgres instance; prod the large one."),
    ("2024-03-11T10:00", "The CDN purges run every night at 02:00."),
    ("2024-03-19T10:00", "Caching decision changed (Mar 19): we now cache API responses for 60 minutes, not 10."),
    ("2024-03-21T10:00", "Reviewed the on-call rota for April with Priya."),
    ("2024-03-28T10:00", "Events gateway cut-over is April 10, not April 15: the vendor's freeze starts on the 12th."),
]


def add(run, text: str, *args: str) -> dict:
    res = run("add", text, *args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def search(run, query: str, *args: str) -> list[dict]:
    res = run("search", query, *args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture
def work(run) -> dict[str, str]:
    """The work notes, added one by one as a person would: {first words: id}."""
    return {text[:20]: add(run, text, "--created", created)["id"] for created, text in WORK}


def test_a_changed_decision_ranks_first_and_the_old_one_is_marked(run, work):
    old, new = work["Decided to cache API"], work["Caching decision cha"]
    hits = search(run, "what did we decide about caching?")
    ids = [h["id"] for h in hits]
    assert ids.index(new) < ids.index(old)
    assert hits[ids.index(old)]["replaced_by"] == [{"id": new, "date": "2024-03-19T10:00:00+00:00"}]
    assert [r["id"] for r in hits[ids.index(new)]["replaces"]] == [old]
    shown = run("search", "what did we decide about caching?").stdout
    assert f"superseded 2024-03-19 by {new}" in shown and f"replaces {old} of 2024-03-01" in shown


def test_a_moved_cut_over_ranks_first_in_search_and_context(run, work):
    ids = {h["created_at"][:10]: h["id"] for h in search(run, "when is the events gateway cut-over?")}
    old, new = ids["2024-03-04"], ids["2024-03-28"]
    ranked = [h["id"] for h in search(run, "when is the events gateway cut-over?")]
    assert ranked.index(new) < ranked.index(old)
    block = json.loads(run("context", "when is the events gateway cut-over?", "--json").stdout)
    assert block["notes"][0] == new and old not in block["notes"]  # the current fact, saying what it replaces
    assert f"[{new}] 2024-03-28 10:00 (replaces {old} of 2024-03-04)" in block["context"]
    history = json.loads(run("context", "when is the events gateway cut-over?", "--history", "--json").stdout)
    assert history["notes"].index(new) < history["notes"].index(old)
    assert f"[{old}] 2024-03-04 10:00 (superseded 2024-03-28 by {new})" in history["context"]


def test_both_files_say_it_and_each_change_is_a_revision(run, work, vault):
    old, new = work["Decided to cache API"], work["Caching decision cha"]
    assert f"supersedes:\n- '[[{old}]]'" in (vault / f"{new}.md").read_text()
    assert f"superseded_by:\n- '[[{new}]]'" in (vault / f"{old}.md").read_text()
    shown = json.loads(run("show", old, "--json").stdout)
    assert shown["superseded_by"] == [new]
    history = json.loads(run("history", old, "--json").stdout)
    assert history[-1]["cause"] == "supersede" and history[-1]["change"] == f"superseded by {new}"
    edges = json.loads(run("graph", "--format", "json").stdout)["edges"]
    assert {"source": new, "target": old, "kind": "supersedes"} in edges
    res = run("undo", old)  # the older file as it was: the newer note still says so, so the index does
    assert res.exit_code == 0 and "superseded_by" not in (vault / f"{old}.md").read_text()
    assert json.loads(run("show", old, "--json").stdout)["superseded_by"] == [new]


def test_as_of_answers_as_things_stood_then(run, work):
    old = work["Decided to cache API"]
    then = search(run, "what did we decide about caching?", "--as-of", "2024-03-10")
    assert [h["id"] for h in then][0] == old and then[0]["replaced_by"] == []
    assert all(h["created_at"] < "2024-03-11" for h in then)
    now = search(run, "what did we decide about caching?")
    assert next(h for h in now if h["id"] == old)["replaced_by"]


def test_supersede_by_hand_undo_and_suggestions(run, vault):
    contract = add(run, "Contract value with Northwind: 48,000 EUR a year.", "--created", "2024-01-10")["id"]
    renewal = add(run, "Northwind pays 52k EUR a year.", "--created", "2024-04-02")
    assert renewal["supersedes"] == []  # no word says it changed: only suggested
    assert not [p for p in vault.glob("*.md") if "supersede" in p.read_text()]  # a hint is kept in the index only
    res = run("supersede", "--suggest", "--json")
    assert res.exit_code == 0
    suggested = json.loads(res.stdout)
    assert [(s["old"], s["new"]) for s in suggested] == [(contract, renewal["id"])]
    assert "48,000 -> 52k" in suggested[0]["reason"]
    res = run("supersede", contract, renewal["id"], "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["supersedes"] is True
    assert json.loads(run("supersede", "--suggest", "--json").stdout) == []  # confirmed: no longer a suggestion
    hits = search(run, "Northwind contract value")
    assert [h["id"] for h in hits][:2] == [renewal["id"], contract]
    res = run("supersede", "--undo", contract, renewal["id"])
    assert res.exit_code == 0
    assert json.loads(run("show", contract, "--json").stdout)["superseded_by"] == []
    again = run("supersede", "--undo", contract, renewal["id"])
    assert again.exit_code == 2 and "does not supersede" in again.output
    itself = run("supersede", contract, contract)
    assert itself.exit_code == 2 and "cannot supersede itself" in itself.output


def test_a_person_writes_supersedes_by_hand(run, vault):
    old = add(run, "The team offsite is in Lisbon.", "--created", "2024-01-05")["id"]
    (vault / "offsite.md").write_text(f"---\nsupersedes:\n- '[[{old}]]'\n---\nThe team offsite is in Porto.\n")
    hits = search(run, "where is the team offsite?")
    assert [h["id"] for h in hits][:2] == ["offsite", old]
    assert json.loads(run("show", old, "--json").stdout)["superseded_by"] == ["offsite"]


def test_a_supersession_naming_no_note_marks_nothing(run, vault):
    """A name written by hand that names no note (a typo, a note since deleted) is kept in
    the file, but search neither marks a hit with it nor moves anything for it."""
    old = add(run, "The team offsite is in Lisbon.", "--created", "2024-01-05")["id"]
    (vault / "offsite.md").write_text("---\nsupersedes:\n- '[[no-such-note]]'\n---\nThe team offsite is in Porto.\n")
    hits = {h["id"]: h for h in search(run, "where is the team offsite?")}
    assert set(hits) == {"offsite", old}
    assert hits["offsite"]["replaces"] == [] and hits[old]["replaced_by"] == []
    assert "no-such-note" in (vault / "offsite.md").read_text()


def test_the_same_text_again_is_one_note_with_both_dates(run, vault):
    first = add(run, "I prefer dark mode in every editor.", "--created", "2024-02-01")
    res = run("add", "I prefer  dark mode in every editor.\n", "--created", "2024-05-01", "--json")
    assert res.exit_code == 0 and "not stored again" in res.stderr
    again = json.loads(res.stdout)
    assert again["id"] == first["id"] and again["duplicate"] is True
    assert again["metadata"]["amem_occurrences"] == ["2024-05-01T00:00:00+00:00"]
    assert len(list(vault.glob("*.md"))) == 1


def test_consolidate_keeps_one_note_with_every_date(run, vault):
    kept = add(run, "User prefers answers in British English.", "--created", "2024-01-01")["id"]
    later = add(run, "User prefers answers in British English!", "--created", "2024-02-01")["id"]
    standup = add(run, "Standup is at 10:00, not 9:30.", "--created", "2024-01-02")["id"]
    # the same words, so a near vector, but the time changed: not the same fact said again
    other = add(run, "Standup is at 9:30, not 10:00.", "--created", "2024-03-01")["id"]
    assert json.loads(run("show", other, "--json").stdout)["supersedes"] == [standup]
    dry = json.loads(run("consolidate", "--dry-run", "--json").stdout)
    assert dry["groups"] == [{"kept": kept, "merged": [later], "dates": ["2024-02-01T00:00:00+00:00"]}]
    assert (vault / f"{later}.md").exists()
    res = run("consolidate", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["groups"][0]["merged"] == [later]
    assert not (vault / f"{later}.md").exists() and (vault / f"{other}.md").exists() and (vault / f"{standup}.md").exists()
    assert json.loads(run("show", kept, "--json").stdout)["metadata"]["amem_occurrences"] == ["2024-02-01T00:00:00+00:00"]
    assert run("undo", later).exit_code == 0 and (vault / f"{later}.md").exists()  # from the trash


def test_pinned_notes_are_never_consolidated(run, vault):
    first = add(run, "User prefers answers in British English.", "--created", "2024-01-01")["id"]
    add(run, "User prefers answers in British English!", "--created", "2024-02-01")
    path = vault / f"{first}.md"
    path.write_text(path.read_text().replace("---\nid:", "---\npinned: true\nid:", 1))
    assert json.loads(run("consolidate", "--json").stdout)["groups"] == []


def test_expired_notes_leave_search_until_asked_for(run, vault):
    rota = add(run, "On-call this week: Kenji.", "--created", "2024-01-01", "--ttl", "7d")
    assert rota["expires"] == "2024-01-08T00:00:00+00:00"
    assert "expires: 2024-01-08" in (vault / f"{rota['id']}.md").read_text()
    (vault / "sprint.md").write_text("---\nexpires: 2999-01-01\n---\nSprint plan: who is on call.\n")
    assert [h["id"] for h in search(run, "who is on call")] == ["sprint"]
    assert {h["id"] for h in search(run, "who is on call", "--include-expired")} == {rota["id"], "sprint"}
    assert rota["id"] in [h["id"] for h in search(run, "who is on call", "--as-of", "2024-01-05")]
    block = json.loads(run("context", "on call this week", "--json").stdout)
    assert rota["id"] not in block["notes"]
    dry = json.loads(run("forget", "--expired", "--dry-run", "--json").stdout)
    assert dry["removed"] == [rota["id"]] and (vault / f"{rota['id']}.md").exists()
    res = run("forget", "--expired", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["removed"] == [rota["id"]]
    assert not (vault / f"{rota['id']}.md").exists() and (vault / "sprint.md").exists()
    assert index_rows(vault, "SELECT id FROM notes ORDER BY id") == [("sprint",)]


def test_bad_ttl_and_dates_are_one_line_errors(run):
    res = run("add", "Something", "--ttl", "soon")
    assert res.exit_code == 2 and "not a while" in res.output and "Traceback" not in res.output
    res = run("search", "something", "--as-of", "someday")
    assert res.exit_code == 2 and "Traceback" not in res.output
    res = run("forget")
    assert res.exit_code == 2 and "--expired" in res.output


def test_removing_a_superseded_note_leaves_no_link_to_it_and_undo_brings_it_back(run, work, vault):
    old, new = work["Decided to cache API"], work["Caching decision cha"]
    assert run("rm", old, "--yes").exit_code == 0
    assert "supersedes" not in (vault / f"{new}.md").read_text()
    assert json.loads(run("doctor", "--json").stdout)["ok"]
    assert run("undo", old).exit_code == 0
    assert json.loads(run("show", new, "--json").stdout)["supersedes"] == [old]
