"""No link under `.amem/` is followed, at any depth (round 3). A vault that carries one
(a cloned repository, a shared folder) could otherwise make `amem undo` copy any
readable file into the vault, unredacted and indexed (a link in `.amem/trash/`), or
make `add` and `reindex` write Chroma's files outside the vault (a link in
`.amem/chroma/`). Every command refuses in one line naming the link (doctor too: it is
not "Consistent"); a long-lived process checks again before each use."""

from __future__ import annotations

import json
import os
import time

import pytest
from conftest import served

from amem_cli.errors import VaultError


def _one_error(res) -> str:
    """The error line of a refused command (its hint follows), nothing else."""
    lines = res.stderr.splitlines()
    assert res.exit_code == VaultError.exit_code, res.output
    assert len(lines) == 2 and lines[0].startswith("Error:") and lines[1].startswith("Hint:"), res.stderr
    return lines[0]


def _plant_trash_link(vault, target, note_id="k"):
    """The attack of the issue: a trash entry whose file is a link to `target`."""
    trash = vault / ".amem" / "trash"
    trash.mkdir(mode=0o700, exist_ok=True)
    (trash / f"{note_id}.md").symlink_to(target)
    info = {"id": note_id, "path": f"{note_id}.md", "removed": time.time(), "linked_from": {}}
    (trash / f"{note_id}.json").write_text(json.dumps(info))


@pytest.fixture
def key(tmp_path):
    path = tmp_path / "id_rsa"
    path.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----\n")
    return path


@pytest.mark.parametrize("args", [["undo", "k"], ["list"], ["doctor"], ["doctor", "--fix"]])
def test_a_link_in_the_trash_is_refused_and_leaks_nothing(run, vault, key, args):
    assert run("add", "a first note").exit_code == 0
    _plant_trash_link(vault, key)
    line = _one_error(run(*args))
    assert "trash/k.md" in line and "link" in line
    assert not (vault / "k.md").exists()  # on bae2764: the key, restored as a note
    assert "PRIVATE KEY" not in "".join(p.read_text(errors="replace") for p in vault.glob("*.md"))


def test_a_trash_folder_that_is_a_link_is_refused(run, vault, tmp_path):
    """`rm` would otherwise write the removed note into the folder the link names."""
    assert run("add", "a note to remove").exit_code == 0
    note_id = json.loads(run("list", "--json").stdout)[0]["id"]
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / ".amem" / "trash").symlink_to(outside)
    line = _one_error(run("rm", "--yes", note_id))
    assert ".amem/trash" in line
    assert list(outside.iterdir()) == []
    assert (vault / f"{note_id}.md").exists()


def _chroma(vault):
    return vault / ".amem" / "chroma"


@pytest.mark.parametrize("args", [["add", "another note"], ["reindex"], ["search", "note"], ["doctor", "--fix"]])
def test_chroma_database_that_is_a_link_is_refused(run, vault, tmp_path, args):
    assert run("add", "a note").exit_code == 0
    victim = tmp_path / "victim.sqlite3"
    (_chroma(vault) / "chroma.sqlite3").rename(victim)
    before = victim.read_bytes()
    (_chroma(vault) / "chroma.sqlite3").symlink_to(victim)
    line = _one_error(run(*args))
    assert "chroma/chroma.sqlite3" in line
    assert victim.read_bytes() == before  # on bae2764: written through the link


def test_a_chroma_segment_folder_that_is_a_link_is_refused(run, vault, tmp_path):
    assert run("add", "a note").exit_code == 0
    segment = next(p for p in _chroma(vault).iterdir() if p.is_dir())
    outside = tmp_path / "outside"
    segment.rename(outside)
    segment.symlink_to(outside)
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    line = _one_error(run("add", "another note"))
    assert segment.name in line
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before


def test_a_file_in_a_chroma_segment_that_is_a_link_is_refused(run, vault, tmp_path):
    for i in range(3):
        assert run("add", f"note number {i}").exit_code == 0
    segment = next(p for p in _chroma(vault).iterdir() if p.is_dir() and (p / "header.bin").exists())
    victim = tmp_path / "header.bin"
    (segment / "header.bin").rename(victim)
    before = victim.read_bytes()
    (segment / "header.bin").symlink_to(victim)
    line = _one_error(run("reindex"))
    assert "header.bin" in line
    assert victim.read_bytes() == before


def test_a_link_planted_while_a_process_holds_the_vault_is_refused_at_its_next_use(memory, vault, tmp_path, key):
    """A long-lived process (the API, the MCP and warm servers) checked the folder when it
    started: the trash and the vector store are checked again before each use."""
    memory.add("a note before the link")
    _plant_trash_link(vault, key)
    with pytest.raises(VaultError, match="trash/k.md"):
        memory.undo("k")
    assert not (vault / "k.md").exists()

    victim = tmp_path / "victim.sqlite3"
    (_chroma(vault) / "chroma.sqlite3").rename(victim)
    (_chroma(vault) / "chroma.sqlite3").symlink_to(victim)
    before = victim.read_bytes()
    with pytest.raises(VaultError, match="chroma.sqlite3"):
        memory.add("a note after the link")
    assert victim.read_bytes() == before


def test_the_warm_server_refuses_a_link_planted_after_it_started(run_amem, vault, key, tmp_path):
    """Checked before each request, as a command in its own process checks at its start:
    refused before anything is done (not a note written, then its vector refused)."""
    amem = served(run_amem, vault, {"AMEM_SERVER": "auto", "AMEM_EMBEDDER": "fake"})
    run = next(amem)
    try:
        assert run("add", "a note").returncode == 0
        assert json.loads(run("server", "status", "--json").stdout)["running"]
        _plant_trash_link(vault, key)
        res = run("undo", "k")
        assert res.returncode == VaultError.exit_code and "trash/k.md" in res.stderr, res.stdout + res.stderr
        assert not (vault / "k.md").exists()
        (vault / ".amem" / "trash" / "k.md").unlink()

        victim = tmp_path / "victim.sqlite3"
        (_chroma(vault) / "chroma.sqlite3").rename(victim)
        (_chroma(vault) / "chroma.sqlite3").symlink_to(victim)
        notes = sorted(vault.glob("*.md"))
        res = run("add", "a note after the link")
        assert res.returncode == VaultError.exit_code and "chroma.sqlite3" in res.stderr, res.stdout + res.stderr
        assert sorted(vault.glob("*.md")) == notes  # no note stored half-way
        assert json.loads(run("server", "status", "--json").stdout)["running"]  # served by the server, not a new process
    finally:
        next(amem, None)


def test_the_index_folder_is_walked_without_following_a_link(tmp_path):
    """A link to a folder is reported, not entered: a loop of links cannot hang the check."""
    from amem_cli.vault import links_under

    folder = tmp_path / "index"
    (folder / "a" / "b").mkdir(parents=True)
    (folder / "a" / "b" / "loop").symlink_to(folder)
    (folder / "a" / "file").write_text("x")
    os.symlink("/nonexistent", folder / "dangling")
    assert links_under(folder) == ["a/b/loop", "dangling"]
