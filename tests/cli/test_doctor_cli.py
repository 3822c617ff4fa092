"""`amem doctor [--fix] [--json]`: exit 0 when consistent, 8 and one summary line when not."""

from __future__ import annotations

import json


def test_doctor_consistent(run):
    assert run("add", "tea with Alice").exit_code == 0
    res = run("doctor")
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "Consistent: 1 note."


def test_doctor_reports_then_fixes(run, vault):
    note_id = run("add", "tea with Alice").stdout.strip()
    (vault / f".{note_id}.md.abcd1234.tmp").write_text("half")
    (vault / ".amem" / "index.db").unlink()  # the index is derived: doctor rebuilds it

    res = run("doctor")
    assert res.exit_code == 8
    assert "problem: temp_file:" in res.stdout and "unindexed_file" in res.stdout
    assert res.stderr.splitlines()[0].startswith("Error: ") and "problems:" in res.stderr
    assert "amem doctor --fix" in res.stderr and "Traceback" not in res.stderr

    res = run("doctor", "--fix")
    assert res.exit_code == 0, res.output
    assert f"fixed: removed .{note_id}.md.abcd1234.tmp" in res.stdout
    assert res.stdout.strip().endswith("Consistent: 1 note.")
    assert not (vault / f".{note_id}.md.abcd1234.tmp").exists()
    assert run("doctor").exit_code == 0
    assert json.loads(run("show", note_id, "--json").stdout)["content"] == "tea with Alice"


def test_doctor_json(run, vault):
    note_id = run("add", "tea with Alice").stdout.strip()
    (vault / f"{note_id}.md").unlink()
    res = run("doctor", "--json")
    assert res.exit_code == 8
    data = json.loads(res.stdout)
    assert data["ok"] is False and data["fixed"] == []
    assert {p["kind"] for p in data["problems"]} == {"orphaned_index"}
    assert {p["subject"] for p in data["problems"]} == {f"{note_id}.md"}
    data = json.loads(run("doctor", "--fix", "--json").stdout)
    assert data["ok"] is True and data["problems"] == [] and data["fixed"]
