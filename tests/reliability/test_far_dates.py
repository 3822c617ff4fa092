"""Dates at the ends of Python's calendar: `created: 9999-12-31T23:30:00-05:00` is the
year 10000 in UTC, and `0001-01-01T00:10:00+05:00` the year 0; a naive `0001-01-01` has
no local offset Python can look up. One such file used to stop every command (exit 70,
OverflowError) and the warm server. amem keeps such a date as written, and sorts it at
the end of the calendar it passed (see `timeutil`): every command works, the note is
found, and its file is never changed. The same dates through the other ways in
(`add --created`, `--since`/`--until`, an import's `created_at`, a transcript's
timestamps) work too."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

FAR = {
    "future.md": ("9999-12-31T23:30:00-05:00", "Zanzibar spice notes from the end of time."),
    "future-naive.md": ("9999-12-31 23:59:59", "Quetzal feathers kept until the last second."),
    "past.md": ("0001-01-01T00:10:00+05:00", "Yggdrasil roots at the start of the calendar."),
    "past-naive.md": ("0001-01-01", "Xylophone lessons on the first day."),
}
NEWEST_FIRST = ["future", "future-naive", "middle", "past", "past-naive"]  # then by id where the key is the same


@pytest.fixture
def far_vault(vault, monkeypatch) -> Path:
    # East of Greenwich the first naive day is the year 0 in UTC; both ends fail in some zone.
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    for name, (created, text) in FAR.items():
        (vault / name).write_text(f"---\ncreated: {created}\nupdated: {created}\n---\n{text}\n", encoding="utf-8")
    (vault / "middle.md").write_text("---\ncreated: 2024-05-08T13:56:00+00:00\n---\nMarmots in the middle.\n")
    yield vault
    monkeypatch.undo()
    time.tzset()


def _digests(vault: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in vault.glob("*.md")}


def _ids(res) -> list[str]:
    assert res.exit_code == 0, res.output
    return [n["id"] for n in json.loads(res.stdout)]


def test_every_command_works_and_finds_the_far_notes(far_vault, run):
    before = _digests(far_vault)
    assert _ids(run("list", "--json")) == NEWEST_FIRST  # the sync every command starts with, then the sort
    reindexed = run("reindex", "--json")
    assert reindexed.exit_code == 0, reindexed.output
    assert json.loads(reindexed.stdout)["errors"] == []
    for name, (created, text) in FAR.items():
        word = text.split()[0]
        assert _ids(run("search", word, "--json"))[:1] == [name[:-3]], word
        shown = run("show", name[:-3], "--json")
        assert shown.exit_code == 0, shown.output
        assert json.loads(shown.stdout)["created_at"].startswith(created[:10])  # as written, not moved
    doctor = run("doctor", "--fix", "--json")
    assert doctor.exit_code == 0, doctor.output
    assert json.loads(doctor.stdout)["ok"] and json.loads(run("doctor", "--json").stdout)["ok"]
    assert _digests(far_vault) == before  # nothing was clamped in the files

    assert run("add", "A plain new note about walruses.").exit_code == 0
    late = run("add", "A note from the very end.", "--created", "9999-12-31T23:30:00-05:00")
    early = run("add", "A note from the very start.", "--created", "0001-01-01T00:00:00+14:00")
    assert late.exit_code == 0 and early.exit_code == 0, late.output + early.output
    newest = _ids(run("list", "--json"))  # the far ends share the first and last key: by id among them
    assert set(newest[:2]) == {"future", late.stdout.strip()}
    assert set(newest[-3:]) == {"past", "past-naive", early.stdout.strip()}
    assert set(_ids(run("list", "--since", "9999-12-31T23:30:00-05:00", "--json"))) == {"future", late.stdout.strip()}
    assert set(_ids(run("list", "--until", "0001-01-01T00:00:00+14:00", "--json"))) == {
        "past", "past-naive", early.stdout.strip()}
    assert _ids(run("search", "walruses", "--since", "0001-01-01", "--until", "9999-12-31", "--json"))


def test_far_dates_through_import_and_ingest(far_vault, run, tmp_path):
    lines = tmp_path / "far.jsonl"
    lines.write_text("".join(json.dumps({"content": f"Imported {word} note.", "created_at": created}) + "\n"
                             for word, created in [("ultimate", "9999-12-31T23:30:00-05:00"),
                                                   ("primordial", "0001-01-01T00:00:00+14:00"),
                                                   ("earliest", "0001-01-01")]))
    imported = run("import", str(lines), "--json")
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.stdout)["imported"] == 3
    chat = "".join(json.dumps({"role": role, "content": text, "timestamp": ts}) + "\n" for role, text, ts in [
        ("user", "When does the archive of the future open?", "9999-12-31T23:30:00-05:00"),
        ("assistant", "The archive of the past opened first.", "0001-01-01T00:00:00+14:00"),
        ("user", "And the epoch far past the calendar?", 10**17),
    ])
    ingested = run("ingest", "--json", "-", input=chat)
    assert ingested.exit_code == 0, ingested.output
    assert json.loads(ingested.stdout)["ingested"] == 3
    for word in ("ultimate", "primordial", "earliest", "archive", "epoch"):
        assert _ids(run("search", word, "--mode", "keyword", "--json")), word
    doctor = run("doctor", "--json")
    assert json.loads(doctor.stdout).get("ok"), doctor.output


def test_the_warm_server_starts_on_a_vault_with_far_dates(vault, run_amem):
    (vault / "future.md").write_text("---\ncreated: 9999-12-31T23:30:00-05:00\n---\nZanzibar spice.\n")
    env = {"AMEM_SERVER": "auto", "AMEM_EMBEDDER": "fake"}
    try:
        run_amem("--dir", vault, "init", env=env)  # a vault with `.amem/` is one a server may serve
        found = run_amem("--dir", vault, "search", "Zanzibar", "--json", env=env)
        assert found.returncode == 0, found.stderr
        assert [h["id"] for h in json.loads(found.stdout)] == ["future"]
        status = run_amem("--dir", vault, "server", "status", "--json", env=env)
        assert json.loads(status.stdout)["running"], status.stdout
    finally:
        run_amem("--dir", vault, "server", "stop", env=env)


def test_a_local_date_before_standard_time_is_written_so_it_reads_back(vault, run, monkeypatch):
    """Tokyo's offset in 1850 is +09:18:59 (its local mean time): YAML's timestamps have
    none with seconds, and such a file, once amem wrote it, stopped every command."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        added = run("add", "Edo period letters about rice prices.", "--created", "1850-01-01")
        assert added.exit_code == 0, added.output
        assert run("reindex", "-q").exit_code == 0
        shown = run("show", added.stdout.strip(), "--json")
        assert shown.exit_code == 0, shown.output
        assert json.loads(shown.stdout)["created_at"] == "1850-01-01T00:00:00+09:18:59"
        assert _ids(run("search", "Edo", "--json")) == [added.stdout.strip()]
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("value", ["!!timestamp soon", "!!bool maybe"])
def test_a_value_that_does_not_fit_its_tag_is_reported_not_a_crash(vault, run, value):
    (vault / "tagged.md").write_text(f"---\nid: tagged\ntags: [a]\ncreated: {value}\n---\nTagged.\n", encoding="utf-8")
    (vault / "fine.md").write_text("---\nid: fine\n---\nA fine note about otters.\n", encoding="utf-8")
    res = run("list", "--json")
    assert res.exit_code == 0, res.output
    assert [n["id"] for n in json.loads(res.stdout)] == ["fine"]
    assert "tagged.md:4: bad YAML frontmatter: cannot read the value as its tag" in res.stderr
