"""`amem import` through Typer's CliRunner (fake embedder, no model): JSONL and Markdown
folders, bad lines, sequences, re-imports, --defer and --json."""

from __future__ import annotations

import json
import os
from datetime import datetime

from amem_cli import AgentMemory
from amem_cli.markdown import parse_note
from conftest import index_rows


def jsonl(path, *lines) -> str:
    path.write_text("".join((json.dumps(x) if not isinstance(x, str) else x) + "\n" for x in lines), encoding="utf-8")
    return str(path)


def notes_by_source(vault) -> dict[str, object]:
    """The vault's notes as their files say, by `metadata.source`."""
    notes = [parse_note(p.read_text(encoding="utf-8")) for p in vault.glob("*.md")]
    return {n.metadata["source"]: n for n in notes}


def test_jsonl_with_all_fields(run, vault, tmp_path):
    path = jsonl(tmp_path / "chat.jsonl", {
        "content": "Alice prefers green tea over coffee",
        "keywords": ["Alice", "green tea"],
        "tags": ["people", "#drinks"],
        "context": "A drink preference Alice mentioned.",
        "created_at": "2023-05-08T13:56:00+02:00",
        "metadata": {"speaker": "Alice", "turn": 3},
    })
    res = run("import", path)
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "imported 1 note"
    note = notes_by_source(vault)["chat.jsonl#L1"]
    assert note.content == "Alice prefers green tea over coffee"
    assert note.keywords == ["Alice", "green tea"] and note.tags == ["people", "drinks"]
    assert note.context == "A drink preference Alice mentioned."
    assert note.created_at == datetime.fromisoformat("2023-05-08T13:56:00+02:00")
    assert note.metadata["speaker"] == "Alice" and note.metadata["turn"] == 3
    assert len(note.metadata["source_hash"]) == 16
    assert note.boxes  # the pipeline ran
    assert index_rows(vault, "SELECT id FROM notes") == [(note.id,)]
    assert index_rows(vault, "SELECT count(*) FROM notes WHERE embedded_hash = text_hash") == [(1,)]


def test_a_file_is_one_sequence_across_batches(run, vault, tmp_path):
    path = jsonl(tmp_path / "talk.jsonl", *({"content": f"turn number {i} of the talk"} for i in range(1, 6)))
    res = run("import", path, "--batch", "2")
    assert res.exit_code == 0, res.output
    by_source = notes_by_source(vault)
    chain = [by_source[f"talk.jsonl#L{i}"] for i in range(1, 6)]
    for before, after in zip(chain, chain[1:]):
        assert before.next == after.id and after.previous == before.id
    assert chain[0].previous is None and chain[-1].next is None


def test_bad_lines_are_reported_with_their_line_and_skipped(run, vault, tmp_path):
    path = jsonl(
        tmp_path / "mixed.jsonl",
        {"content": "a good first line"},
        "this is not json",
        "[1, 2]",
        {"content": "   "},
        {"tags": ["no content"]},
        {"content": "wrong type", "tags": 5},
        {"content": "bad date", "created_at": "the day after"},
        "",
        {"content": "a good last line", "id": "mine", "speaker": "Bo"},
    )
    res = run("import", path)
    assert res.exit_code == 1
    for line, problem in [(2, "not JSON"), (3, "not a JSON object"), (4, "'content' is empty"),
                          (5, "no 'content'"), (6, "'tags' must be a list of strings"), (7, "cannot read the date")]:
        assert f"{path}:{line}: {problem}" in res.stderr
    assert "unknown field 'id'" in res.stderr and "unknown field 'speaker'" in res.stderr
    assert "Traceback" not in res.output
    assert res.stdout.strip() == "imported 2 notes, skipped 6 (see above)"
    by_source = notes_by_source(vault)
    assert sorted(by_source) == ["mixed.jsonl#L1", "mixed.jsonl#L9"]
    assert by_source["mixed.jsonl#L1"].next == by_source["mixed.jsonl#L9"].id  # the chain skips bad lines
    assert by_source["mixed.jsonl#L9"].id != "mine"


def test_stdin(run, vault):
    lines = "".join(json.dumps({"content": t}) + "\n" for t in ("piped one", "piped two"))
    res = run("import", "-", input=lines)
    assert res.exit_code == 0, res.output
    assert sorted(notes_by_source(vault)) == ["stdin#L1", "stdin#L2"]


def test_markdown_folder(run, vault, tmp_path):
    src = tmp_path / "obsidian"
    (src / "daily").mkdir(parents=True)
    (src / ".trash").mkdir()
    (src / "plan.md").write_text(
        "---\nkeywords: [garden plan]\ntags: [idea]\ncontext: The garden plan.\ncreated: 2023-05-01T09:00:00+00:00\n"
        "aliases: [GP]\nmetadata:\n  project: garden\n---\nPlant tomatoes along the south wall.\n", encoding="utf-8")
    (src / "daily" / "plain.md").write_text("No frontmatter here.\n\nJust two paragraphs.\n", encoding="utf-8")
    os.utime(src / "daily" / "plain.md", (1_600_000_000, 1_600_000_000))
    (src / "bad.md").write_text("---\ntags: [unclosed\n---\nbody\n", encoding="utf-8")
    (src / ".trash" / "old.md").write_text("in a hidden folder\n", encoding="utf-8")
    (src / "readme.txt").write_text("not Markdown\n", encoding="utf-8")
    outside = tmp_path / "outside.md"
    outside.write_text("outside the folder\n", encoding="utf-8")
    (src / "link.md").symlink_to(outside)

    res = run("import", str(src))
    assert res.exit_code == 1
    assert f"{src / 'bad.md'}:3: bad YAML frontmatter" in res.stderr
    assert res.stdout.strip() == "imported 2 notes, skipped 1 (see above)"
    by_source = notes_by_source(vault)
    assert sorted(by_source) == ["obsidian/daily/plain.md", "obsidian/plan.md"]
    plan, plain = by_source["obsidian/plan.md"], by_source["obsidian/daily/plain.md"]
    assert plan.content == "Plant tomatoes along the south wall."
    assert plan.keywords == ["garden plan"] and plan.tags == ["idea"] and plan.context == "The garden plan."
    assert plan.created_at == datetime.fromisoformat("2023-05-01T09:00:00+00:00")
    assert plan.metadata["project"] == "garden" and plan.extra == {"aliases": ["GP"]}
    assert plain.content == "No frontmatter here.\n\nJust two paragraphs."
    assert plain.created_at.timestamp() == 1_600_000_000
    assert plain.keywords  # built by the pipeline
    assert plain.previous is None and plain.next is None  # a folder is no sequence


def test_reimport_adds_nothing_and_new_lines_continue_the_sequence(run, vault, tmp_path):
    lines = [{"content": f"line {i} of the log"} for i in range(1, 4)]
    path = jsonl(tmp_path / "log.jsonl", *lines)
    assert run("import", path).exit_code == 0
    files = {p.name: p.read_bytes() for p in vault.glob("*.md")}
    res = run("import", path)
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "imported 0 notes, skipped 3 already imported"
    assert {p.name: p.read_bytes() for p in vault.glob("*.md")} == files

    jsonl(tmp_path / "log.jsonl", *lines, {"content": "line 4 of the log"})
    res = run("import", path, "--json")
    assert json.loads(res.stdout)["imported"] == 1 and json.loads(res.stdout)["duplicates"] == 3
    by_source = notes_by_source(vault)
    assert by_source["log.jsonl#L3"].next == by_source["log.jsonl#L4"].id
    assert by_source["log.jsonl#L4"].previous == by_source["log.jsonl#L3"].id


def test_model_work_is_queued_then_processed(run, vault, tmp_path, monkeypatch):
    path = jsonl(tmp_path / "later.jsonl", {"content": "Deferred tea notes about Alice"},
                 {"content": "Deferred coffee notes about Bob"})
    monkeypatch.setenv("AMEM_LLM", "fake")  # the vault's own model
    res = run("import", path)  # a model: its work is queued (`--no-wait`, the default)
    assert res.exit_code == 0, res.output
    assert "queued the model's work on 2 notes" in res.stderr and "amem process" in res.stderr
    assert all(n.keywords and n.boxes for n in notes_by_source(vault).values())  # complete when stored
    assert index_rows(vault, "SELECT count(*) FROM jobs") == [(2,)]
    res = run("process", "--json")
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.stdout)["processed"]) == 2
    assert all(n.keywords and n.boxes for n in notes_by_source(vault).values())
    assert index_rows(vault, "SELECT count(*) FROM jobs") == [(0,)]


def test_json_output(run, tmp_path):
    path = jsonl(tmp_path / "j.jsonl", {"content": "first"}, "{oops", {"content": "second"})
    res = run("import", path, "--json")
    assert res.exit_code == 1
    data = json.loads(res.stdout)
    assert data["imported"] == 2 and data["skipped"] == 1 and data["duplicates"] == 0
    assert len(data["ids"]) == 2
    assert data["problems"] == [f"{path}:2: not JSON (Expecting property name enclosed in double quotes at column 2)"]


def test_missing_path_is_one_line_with_a_hint(run, tmp_path):
    res = run("import", str(tmp_path / "nope.jsonl"))
    assert res.exit_code == 3
    assert "no file or folder" in res.stderr and "Hint:" in res.stderr and "Traceback" not in res.output


def test_python_api(memory, tmp_path):
    path = jsonl(tmp_path / "api.jsonl", {"content": "from the API", "tags": ["api"]})
    report = memory.import_file(path)
    assert len(report.ids) == 1 and memory.get(report.ids[0]).tags == ["api"]
    assert memory.import_file(path).duplicates == 1


def test_api_defer(vault, tmp_path):
    from amem_cli.llm.fake import ScriptedLLM, schema_example

    path = jsonl(tmp_path / "d.jsonl", {"content": "queued"})
    with AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=schema_example)) as mem:  # a model's work is queued
        report = mem.import_file(path, defer=True)
        assert report.queued == 1 and mem.process() == report.ids


def test_one_markdown_file_and_a_folder_inside_the_vault(run, vault, tmp_path):
    (tmp_path / "one.md").write_text("A single Markdown file\n", encoding="utf-8")
    res = run("import", str(tmp_path / "one.md"))
    assert res.exit_code == 0, res.output
    assert list(notes_by_source(vault)) == [f"{tmp_path.name}/one.md"]
    (vault / "sub").mkdir()
    res = run("import", str(vault / "sub"))
    assert res.exit_code == 2 and "in the vault already" in res.stderr


def test_a_day_first_export_imports_and_an_unreadable_date_is_one_line(run, vault, tmp_path):
    """A chat export's dates as it writes them (issue 22: `29.12.2023, 00:51:12` stopped
    the import); a date that reads both ways is reported on its line, the rest imported."""
    src = tmp_path / "export.jsonl"
    src.write_text("\n".join(json.dumps(line) for line in [
        {"content": "Anna: the ferry leaves at nine", "created_at": "29.12.2023, 00:51:12"},
        {"content": "Ben: I booked the cabin", "created_at": 1703811132},
        {"content": "Anna: see you on the pier", "created_at": "05/01/2024 10:00"},
    ]) + "\n")
    res = run("import", src, "--json")
    assert res.exit_code == 1
    assert f"{src}:3: the date '05/01/2024 10:00' could be" in res.stderr
    days = sorted(row[0][:10] for row in index_rows(vault, "SELECT created FROM notes"))
    assert days == ["2023-12-29", "2023-12-29"]


def test_no_model_queues_nothing_and_wait_does_the_work_before_returning(run, vault, tmp_path, monkeypatch):
    res = run("--llm", "none", "import", jsonl(tmp_path / "a.jsonl", {"content": "Tea notes about Alice"}), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["queued"] == 0 and "queued" not in res.stderr
    res = run("--llm", "fake", "import", jsonl(tmp_path / "b.jsonl", {"content": "Coffee notes about Bob"}), "--wait", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["queued"] == 0
    assert index_rows(vault, "SELECT count(*) FROM jobs") == [(0,)]
    assert all(n.keywords and n.boxes for n in notes_by_source(vault).values())
    monkeypatch.setenv("AMEM_LLM", "fake")  # the vault's own model: its work may wait in the queue
    res = run("import", jsonl(tmp_path / "c.jsonl", {"content": "Cocoa"}), "--defer", "--json")
    assert json.loads(res.stdout)["queued"] == 1  # --defer: the old name of --no-wait
    res = run("import", str(tmp_path / "c.jsonl"), "--wait", "--no-wait")
    assert res.exit_code == 2 and "contradict" in res.stderr


def test_work_asked_of_another_model_is_done_now_not_queued_for_the_vaults(run, vault, monkeypatch):
    """A job names no model and the warm server or `amem process` works it with the vault's
    own: a command that asks for another model does its work before it returns."""
    monkeypatch.setenv("AMEM_LLM", "fake")  # the vault's model
    res = run("add", "Tea notes about Alice", "--json")
    assert json.loads(res.stdout)["queued"] == 1
    monkeypatch.setenv("AMEM_LLM", "none")  # the vault's: none; this command's: fake
    res = run("--llm", "fake", "add", "Coffee notes about Bob", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["queued"] == 0
    assert index_rows(vault, "SELECT count(*) FROM jobs") == [(1,)]  # the first note's only
