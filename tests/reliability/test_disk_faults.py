"""A full disk and a read-only vault: every write fails with one clear line and a non-zero
exit, the note files stay byte for byte as they were, no temp file is left, and once
there is room again the vault is consistent (`amem doctor`, or `--fix` without losing a
note). The real thing where we may mount a small tmpfs (root); a patched write otherwise."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amem_cli.cli.app import app
from conftest import read_only_view

NOTES = [f"Note {i}: the lighthouse keeper logs the weather at {i} o'clock, zqw{i}" for i in range(6)]


@pytest.fixture
def small_fs(tmp_path):
    """A 32 MB tmpfs (room for a small vault and its index), unmounted afterwards."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small filesystem needs root")
    mnt = tmp_path / "fs"
    mnt.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def amem(vault: Path, *args: str):
    return CliRunner().invoke(app, ["--dir", str(vault), "--embedder", "fake", "--no-server", *args])


def stocked(vault: Path) -> list[str]:
    """A vault of linked notes, indexed and embedded."""
    assert amem(vault, "init").exit_code == 0
    ids = []
    for text in NOTES:
        res = amem(vault, "add", text)
        assert res.exit_code == 0, res.output
        ids.append(res.stdout.strip())
    return ids


def note_files(vault: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in vault.glob("*.md")}


def temp_files(vault: Path) -> list[str]:
    return [p.name for p in vault.rglob("*.tmp")]


def fill(fs: Path) -> Path:
    """Fill the filesystem to the last byte; the filler file is returned to be removed."""
    filler = fs / "filler"
    with open(filler, "wb", buffering=0) as fh:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    fh.write(b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    return filler


def one_clear_line(res, *words: str) -> None:
    assert res.exit_code not in (0, 70), res.output  # 70: an internal error, a bug
    assert "Traceback" not in res.output
    out = res.output.strip()
    message = json.loads(out)["error"] if out.startswith("{") else out.splitlines()[0]
    assert any(w in message.lower() for w in words), res.output


def assert_consistent(vault: Path, ids: list[str]) -> None:
    """`amem doctor` finds the vault consistent, or `--fix` makes it so; no note is lost."""
    res = amem(vault, "doctor", "--json")
    if res.exit_code != 0:
        fixed = amem(vault, "doctor", "--fix", "--json")
        assert fixed.exit_code == 0, fixed.output
        res = amem(vault, "doctor", "--json")
    report = json.loads(res.stdout)
    assert report["ok"], report
    listed = json.loads(amem(vault, "list", "--json", "--limit", "1000").stdout)
    assert set(ids) <= {n["id"] for n in listed}


def test_a_full_disk(small_fs, tmp_path):
    vault = small_fs / "vault"
    ids = stocked(vault)
    before = note_files(vault)
    jsonl = tmp_path / "more.jsonl"
    jsonl.write_text("".join(json.dumps({"content": f"Imported note {i} " + "word " * 2000}) + "\n" for i in range(20)))
    filler = fill(small_fs)

    one_clear_line(amem(vault, "add", "A new note about tides " + "tide " * 20000), "space", "full")
    one_clear_line(amem(vault, "import", str(jsonl)), "space", "full")
    one_clear_line(amem(vault, "rm", ids[0]), "space", "full")  # rewrites the notes that link it
    assert note_files(vault) == before
    assert temp_files(vault) == []
    res = amem(vault, "search", "lighthouse weather", "--json")  # SQLite may need a byte to open
    if res.exit_code != 0:
        one_clear_line(res, "space")

    filler.unlink()
    assert_consistent(vault, ids)
    res = amem(vault, "add", "Room again: this note is stored")
    assert res.exit_code == 0, res.output
    assert_consistent(vault, [*ids, res.stdout.strip()])


def test_a_read_only_vault(vault, tmp_path):
    """The same vault seen through a read-only bind mount."""
    ids = stocked(vault)
    before = note_files(vault)
    with read_only_view(vault, tmp_path / "read-only") as view:
        one_clear_line(amem(view, "add", "A note for a read-only vault"), "read-only")
        one_clear_line(amem(view, "rm", ids[0]), "read-only")
        res = amem(view, "search", "lighthouse weather", "--json")
        if res.exit_code != 0:
            one_clear_line(res, "read-only")
        assert note_files(vault) == before
    assert temp_files(vault) == []
    assert_consistent(vault, ids)


def test_a_write_that_fails_half_way_leaves_the_old_file(vault, monkeypatch):
    """Anywhere: the disk fills while a note's new version is being written."""
    ids = stocked(vault)
    before = note_files(vault)

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("amem_cli.vault.os.fsync", full)
    one_clear_line(amem(vault, "add", "One note too many"), "space")
    one_clear_line(amem(vault, "rm", ids[0]), "space")
    monkeypatch.undo()
    assert note_files(vault) == before
    assert temp_files(vault) == []
    assert_consistent(vault, ids)


def test_a_batch_write_that_fails_leaves_every_file_as_it_was(vault, tmp_path, monkeypatch):
    """An import writes a batch's files together, made durable by one flush; when that
    flush fails (here where `syncfs` is missing, so each file's fsync), none is renamed."""
    ids = stocked(vault)
    before = note_files(vault)
    jsonl = tmp_path / "more.jsonl"
    jsonl.write_text("".join(json.dumps({"content": f"The lighthouse keeper's note {i}"}) + "\n" for i in range(5)))

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("amem_cli.vault._syncfs", lambda: None)
    monkeypatch.setattr("amem_cli.vault.os.fsync", full)
    one_clear_line(amem(vault, "import", str(jsonl)), "space")
    monkeypatch.undo()
    assert note_files(vault) == before
    assert temp_files(vault) == []
    assert_consistent(vault, ids)


def test_a_batch_write_is_durable_with_syncfs_or_without(vault, tmp_path, monkeypatch):
    """The same import, once through `syncfs` and once through an fsync a file."""
    ids = stocked(vault)
    for n, syncfs in enumerate((None, "real")):
        if syncfs is None:
            monkeypatch.setattr("amem_cli.vault._syncfs", lambda: None)
        else:
            monkeypatch.undo()
        jsonl = tmp_path / f"more{n}.jsonl"
        jsonl.write_text("".join(json.dumps({"content": f"Import {n}: the keeper's log, page {i}"}) + "\n" for i in range(5)))
        res = amem(vault, "import", str(jsonl), "--json")
        assert res.exit_code == 0, res.output
        ids += json.loads(res.stdout)["ids"]
    assert len(note_files(vault)) == len(ids) == len(NOTES) + 10
    assert temp_files(vault) == []
    assert_consistent(vault, ids)
