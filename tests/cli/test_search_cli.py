"""`amem search`, `amem context` and `amem add --after` through Typer's CliRunner
(fake embedder, real SQLite, real local Chroma)."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from amem_cli.cli.app import app
from conftest import isolate
from amem_cli.services.block import PREAMBLE, estimate_tokens

MODES = ("hybrid", "semantic", "keyword", "graph")
DUCK = "我喜欢在北京吃烤鸭"


def add(run, text, *args) -> str:
    res = run("add", text, *args)
    assert res.exit_code == 0, res.output
    return res.stdout.strip()


def show(run, note_id) -> dict:
    res = run("show", note_id, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def search_json(run, *args) -> list[dict]:
    res = run("search", *args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def copy_vault(template, vault) -> None:
    """A test's own copy of a vault built once for the module (files, index and vectors)."""
    shutil.rmtree(vault)
    shutil.copytree(template, vault)


@pytest.fixture(scope="module")
def notes_template(tmp_path_factory):
    """A small vault: pottery notes (two of them a sequence) and unrelated ones, built once
    through the CLI. Returns (folder, {name: id})."""
    folder = tmp_path_factory.mktemp("notes") / "vault"
    folder.mkdir()
    with pytest.MonkeyPatch.context() as mp:  # module scope: isolate the config here too
        isolate(mp, folder.parent / "config.toml")
        runner = CliRunner()

        def run(*args, input=None):
            return runner.invoke(app, ["--dir", str(folder), "--embedder", "fake", *map(str, args)], input=input)

        ids = {
            "tea": add(run, "Alice prefers green tea over coffee", "--created", "2023-01-05T09:00", "-t", "drinks"),
            "port": add(run, "The server runs on port 8080", "--created", "2023-02-05T09:00", "-t", "work"),
            "cat": add(run, "Dana adopted a grey cat named Pixel", "--created", "2023-03-05T09:00"),
            "soup": add(run, "A recipe for lentil soup with cumin", "--created", "2023-04-05T09:00"),
            "pottery": add(run, "Caroline joined a pottery class on Saturdays", "--created", "2023-05-08T13:56",
                           "-k", "pottery", "--context", "Caroline's new hobby.", "-t", "art"),
        }
        ids["reply"] = add(run, "Yes, she loves the kiln", "--created", "2023-05-08T13:57", "--after", ids["pottery"])
        ids["duck"] = add(run, DUCK, "--created", "2023-06-01T12:00")
        ids["tokyo"] = add(run, "东京的天气很好", "--created", "2023-06-02T12:00")
    return folder, ids


@pytest.fixture
def notes(notes_template, vault) -> dict[str, str]:
    template, ids = notes_template
    copy_vault(template, vault)
    return ids


# -- search modes --------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_search_every_mode(run, notes, mode):
    hits = search_json(run, "pottery class", "--mode", mode, "--limit", "3")
    assert 1 <= len(hits) <= 3
    assert hits[0]["id"] == notes["pottery"]
    human = run("search", "pottery class", "--mode", mode)
    assert human.exit_code == 0, human.output
    assert re.search(r"^ 1\. " + re.escape(notes["pottery"]) + r" 2023-05-08 score \d+\.\d{4}$", human.stdout, re.M)
    assert "Caroline joined a pottery class on Saturdays" in human.stdout


def test_search_mode_lists(run, notes):
    """Each mode reads its own lists: keyword and substring (and no vectors), semantic, graph only."""
    kw = search_json(run, "pottery", "--mode", "keyword")
    assert {n for h in kw for n in h["sources"]} == {"keyword", "substring"}
    assert {h["id"] for h in kw} == {notes["pottery"], notes["reply"]}  # the reply through its neighbour's text
    sem = search_json(run, "pottery", "--mode", "semantic", "--limit", "50")
    assert {n for h in sem for n in h["sources"]} == {"semantic"}
    assert {h["id"] for h in sem} == {notes["pottery"]}  # nearest vectors, down to the floor: not every note
    graph = search_json(run, "pottery", "--mode", "graph")
    assert {n for h in graph for n in h["sources"]} == {"graph"}
    hybrid = search_json(run, "pottery", "--mode", "hybrid")
    assert set(hybrid[0]["sources"]) == {"keyword", "substring", "semantic", "graph", "neighbour"}  # its reply lifts it


@pytest.mark.parametrize("bad", ["fuzzy", "HYBRID", ""])
def test_search_bad_mode(run, notes, bad):
    res = run("search", "pottery", "--mode", bad)
    assert res.exit_code == 2
    assert res.stdout == ""
    assert "Traceback" not in res.output
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("Error:")]
    assert errors == [f"Error: unknown search mode {bad!r}"]
    assert "Hint: use one of: hybrid, semantic, keyword, graph" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 2


def test_search_bad_mode_json(run, notes):
    res = run("search", "pottery", "--mode", "fuzzy", "--json")
    assert res.exit_code == 2
    assert json.loads(res.stdout) == {"error": "unknown search mode 'fuzzy'", "hint": "use one of: hybrid, semantic, keyword, graph"}


def test_search_explain(run, notes):
    res = run("search", "pottery class", "--explain", "--json")
    hits = json.loads(res.stdout)
    human = run("search", "pottery class", "--explain")
    assert human.exit_code == 0, human.output
    lines = human.stdout.splitlines()
    for rank, hit in enumerate(hits, 1):
        at = next(i for i, ln in enumerate(lines) if ln.startswith(f"{rank:>2}. {hit['id']} "))
        explain = next(ln for ln in lines[at + 1 :] if ln.startswith("    ") and "#" in ln)
        for name, src in hit["sources"].items():
            if name == "neighbour":
                assert f"neighbour of {src['of']} (+{src['gain']:.4f})" in explain, explain
            else:
                assert f"{name} #{src['rank']} ({src['score']:.4g})" in explain, (name, explain)
        assert explain.strip().count(";") == len(hit["sources"]) - 1
    assert "keyword #1 (" in human.stdout and "semantic #" in human.stdout and "graph #" in human.stdout
    assert hits[1]["id"] == notes["reply"] and hits[1]["sources"]["neighbour"]["of"] == notes["pottery"]
    # without --explain, no per-list line
    plain = run("search", "pottery class")
    assert "keyword #" not in plain.stdout and "semantic #" not in plain.stdout


def test_explain_shows_a_tiny_keyword_score_as_it_is_not_as_zero(run):
    """In a vault of two notes, a word one of them holds is in half the notes: FTS5's
    BM25 gives it an IDF of 1e-6, so the best keyword hit scores about 1e-6. It is shown
    so (six significant digits in JSON, four in text), never as 0 or 0.0000."""
    add(run, "Alice prefers tea over coffee", "-k", "Alice")
    add(run, "The deploy key lives in the team vault")
    (hit,) = search_json(run, "deploy key", "--mode", "keyword", "--explain")
    score = hit["sources"]["keyword"]["score"]
    assert 0 < score < 1e-4
    human = run("search", "deploy key", "--mode", "keyword", "--explain")
    assert f"keyword #1 ({score:.4g})" in human.stdout and "(0.0000)" not in human.stdout, human.stdout


def test_search_explain_name_boost(run):
    add(run, "Melanie: I love painting sunsets", "--created", "2023-05-08T10:00")
    car = add(run, "Caroline: I love painting sunsets", "--created", "2023-05-08T11:00")
    hits = search_json(run, "does Caroline love painting")
    assert hits[0]["id"] == car and hits[0]["sources"]["name"] == {"boost": 0.6}
    human = run("search", "does Caroline love painting", "--explain")
    assert "name boost x1.60" in human.stdout


def test_search_json_shape(run, notes):
    hits = search_json(run, "pottery", "--limit", "4")
    assert 1 <= len(hits) <= 4
    for h in hits:
        assert {"id", "score", "sources", "content", "created_at", "previous", "next"} <= set(h)
        assert isinstance(h["score"], float) and h["score"] == round(h["score"], 6)
        for name, src in h["sources"].items():
            assert name in {"keyword", "semantic", "graph", "substring", "name", "neighbour"}
            if name == "neighbour":
                assert set(src) == {"of", "gain"} and src["gain"] > 0
            elif name != "name":
                assert set(src) == {"rank", "score"} and isinstance(src["rank"], int) and src["rank"] >= 1
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert hits[0]["id"] == notes["pottery"]


def test_search_filters_from_the_command_line(run, notes):
    for mode in MODES:
        got = {h["id"] for h in search_json(run, "pottery tea server", "--mode", mode, "--limit", "50",
                                             "--since", "2023-02-01", "--until", "2023-04-30")}
        assert got <= {notes["port"], notes["cat"], notes["soup"]}, mode
        assert notes["port"] in got, mode
        tagged = {h["id"] for h in search_json(run, "pottery tea server", "--mode", mode, "--tag", "drinks")}
        assert tagged == {notes["tea"]}, mode


def test_search_no_hits_message(run, notes):
    res = run("search", "zeppelin", "--mode", "keyword")
    assert res.exit_code == 0 and res.stdout.strip() == "No matching notes."
    assert search_json(run, "zeppelin", "--mode", "keyword") == []


# -- context ----------------------------------------------------------------------------


def test_context_fits_the_budget(run, notes):
    res = run("context", "pottery class", "--max-tokens", "70")
    assert res.exit_code == 0, res.output
    text = res.stdout.rstrip("\n")
    assert text, "at least one note fits in 70 tokens"
    assert estimate_tokens(text) <= 70 and len(text) <= 280
    assert text.startswith(f"{PREAMBLE}\n\n[{notes['pottery']}] 2023-05-08 13:56\n> Caroline joined a pottery class on Saturdays")
    big = run("context", "pottery class", "--max-tokens", "2000").stdout.rstrip("\n")
    assert big.startswith(text) and len(big) > len(text)  # the budget left notes out
    assert "> Context: Caroline's new hobby." in big and "> Keywords: pottery" in big and "> Tags: art" in big
    assert f"> Sequence: before [[{notes['reply']}]]" in big


def test_context_json(run, notes):
    res = run("context", "pottery class", "--max-tokens", "70", "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert set(data) == {"query", "context", "tokens", "notes"}
    assert data["query"] == "pottery class"
    assert data["tokens"] == estimate_tokens(data["context"]) and 0 < data["tokens"] <= 70
    assert data["notes"][0] == notes["pottery"]
    assert re.findall(r"^\[(\S+)\] \d{4}-\d\d-\d\d \d\d:\d\d$", data["context"], re.M) == data["notes"]
    plain = run("context", "pottery class", "--max-tokens", "70").stdout.rstrip("\n")
    assert plain == data["context"]


def test_context_budget_too_small(run, notes):
    data = json.loads(run("context", "pottery", "--max-tokens", "1", "--json").stdout)
    assert data == {"query": "pottery", "context": "", "tokens": 0, "notes": []}
    assert run("context", "pottery", "--max-tokens", "0").exit_code == 2  # min=1


# -- add --after ---------------------------------------------------------------------------


def test_add_after_sets_previous_and_next(run):
    a = add(run, "first message")
    b = add(run, "second message", "--after", a)
    assert (show(run, a)["previous"], show(run, a)["next"]) == (None, b)
    assert (show(run, b)["previous"], show(run, b)["next"]) == (a, None)
    # inserting after a puts the new note between a and b
    m = add(run, "in between", "--after", a)
    assert show(run, a)["next"] == m
    assert (show(run, m)["previous"], show(run, m)["next"]) == (a, b)
    assert show(run, b)["previous"] == m


def test_add_after_json_output(run):
    a = add(run, "first message")
    res = run("add", "second message", "--after", a, "--json")
    data = json.loads(res.stdout)
    assert data["previous"] == a and data["next"] is None


def test_add_after_unknown_id(run, vault):
    res = run("add", "orphan", "--after", "20990101T000000000-dead")
    assert res.exit_code != 0
    assert "Traceback" not in res.output
    assert "20990101T000000000-dead" in res.stderr
    assert list(vault.glob("*.md")) == []


# -- CJK ----------------------------------------------------------------------------------


@pytest.fixture
def duck(notes) -> str:
    return notes["duck"]


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
@pytest.mark.parametrize("query", ["烤鸭", "北京吃烤鸭", "我喜欢在北京吃烤鸭", "烤"], ids=["two", "three", "all", "one"])
def test_cjk_search(run, duck, mode, query):
    hits = search_json(run, query, "--mode", mode)
    assert hits[0]["id"] == duck and hits[0]["content"] == DUCK
    if mode == "keyword":
        assert [h["id"] for h in hits] == [duck]
        assert "substring" in hits[0]["sources"]


def test_cjk_one_character_queries_do_not_crash(run, duck):
    for query in ("鸭", "京", "我", "の", "한"):
        for mode in MODES:
            res = run("search", query, "--mode", mode)
            assert res.exit_code == 0, (query, mode, res.output)
            assert "Traceback" not in res.output
    tokyo = search_json(run, "京", "--mode", "keyword")
    assert {h["content"] for h in tokyo} == {DUCK, "东京的天气很好"}
    assert search_json(run, "の", "--mode", "keyword") == []


def test_cjk_human_output(run, duck):
    res = run("search", "烤鸭")
    assert res.exit_code == 0 and DUCK in res.stdout


# -- the floor: only hits that mean something ----------------------------------------------


def test_search_leaves_unrelated_notes_out(run, notes):
    """A hybrid search used to fill --limit with every note (the last ones at score 0.0000)."""
    hits = search_json(run, "pottery class", "--limit", "8")
    assert {h["id"] for h in hits} == {notes["pottery"], notes["reply"]}  # the reply: next to the match
    assert all(h["score"] > 0 for h in hits)
    assert search_json(run, "zeppelin airship", "--limit", "8") == []  # matches nothing: shows nothing
    human = run("search", "zeppelin airship")
    assert human.exit_code == 0 and human.stdout.strip() == "No matching notes."


@pytest.mark.parametrize("query", ["a", "what is it?"])
def test_a_query_of_common_words_says_so(run, notes, query):
    res = run("search", query)
    assert res.exit_code == 0, res.output  # as for any search that finds nothing
    assert res.stdout.strip() == "No matching notes."
    assert res.stderr.strip().splitlines() == [
        f"Warning: the query has only common words ({', '.join(query.strip('?').split())}): nothing to search for"]
    assert search_json(run, query) == []
    context = run("context", query, "--json")
    assert context.exit_code == 0 and json.loads(context.stdout)["notes"] == []
    assert "only common words" in context.stderr


def test_context_never_fills_its_budget_with_noise(run, notes):
    data = json.loads(run("context", "lentil soup", "--max-tokens", "2000", "--json").stdout)
    assert data["notes"] == [notes["soup"]]
    none = json.loads(run("context", "zeppelin airship", "--json").stdout)
    assert none == {"query": "zeppelin airship", "context": "", "tokens": 0, "notes": []}


def test_search_show_and_context_never_print_a_notes_text_twice(run):
    """A context that only repeats the note (a vault's older notes, or a person's) is not printed again."""
    text = "The staging database moved to eu-west-1 on Friday."
    note_id = add(run, text, "--context", text)
    for args in (("search", "staging database"), ("context", "staging database"), ("show", note_id)):
        res = run(*args)
        assert res.exit_code == 0, res.output
        assert res.stdout.count(text) == 1, res.stdout


# -- the moment a query is asked: --now ---------------------------------------------


def test_now_reads_the_querys_relative_times_against_it(run):
    """"Four weeks ago" names another week for another `--now`; the notes of that week come first."""
    italian = add(run, "Booked a table at the Italian place for the team", "--created", "2023-04-03T12:00")
    thai = add(run, "Booked a table at the Thai place for the team", "--created", "2023-05-01T12:00")
    query = "the table I booked for the team four weeks ago"
    late = search_json(run, query, "--now", "2023-05-29")
    early = search_json(run, query, "--now", "2023-05-01T18:30:00+02:00")
    assert [h["id"] for h in late] == [thai, italian] and [h["id"] for h in early] == [italian, thai]
    assert late[0]["sources"]["dated"] == {"boost": 0.5} and "dated" not in late[1]["sources"]
    # Without --now the query is read today: neither note is of that week.
    assert all("dated" not in h["sources"] for h in search_json(run, query))
    block = run("context", query, "--now", "2023-05-29", "--json")
    assert block.exit_code == 0, block.output
    assert json.loads(block.stdout)["notes"][0] == thai


@pytest.mark.parametrize("command", ["search", "context"])
def test_a_bad_now_is_a_one_line_error(run, command):
    add(run, "Booked a table at the Thai place", "--created", "2023-05-01T12:00")
    res = run(command, "the table I booked", "--now", "next blue moon")
    assert res.exit_code == 2 and res.stdout == "" and "Traceback" not in res.output
    assert [ln for ln in res.stderr.splitlines() if ln.startswith("Error:")] == ["Error: cannot read the date 'next blue moon'"]
