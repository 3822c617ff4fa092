"""A vault on a read-only mount (a backup, a shared disk, a container's read-only volume)
can still be read and searched: its index is made in a private folder of the user's
cache, since `.amem/` cannot be written (Chroma cannot even open a local store it may not
write). Every write says in one line that the vault is read-only, exits non-zero and
changes nothing. Real `amem` processes, the warm server allowed: none may print a traceback."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import read_only_view

NOTES = ["The lighthouse keeper logs the weather at dawn", "Walruses sleep on the ice floe", "Tide tables for the harbour"]


def files(folder: Path) -> dict[str, bytes]:
    """Every file below `folder`, `.amem/` too, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def read_only(vault, tmp_path, amem_cmd):
    """(the vault seen through a read-only bind mount, `amem` on that view, the notes' ids)."""
    env = {**os.environ, "AMEM_EMBEDDER": "fake", "AMEM_SERVER": "auto", "AMEM_CACHE_DIR": str(tmp_path / "cache")}

    def amem(folder: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run([*amem_cmd, "--dir", str(folder), *args], input=stdin, text=True, capture_output=True,
                              env=env, timeout=120)

    ids = []
    for text in NOTES:
        res = amem(vault, "--no-server", "add", text)
        assert res.returncode == 0, res.stderr
        ids.append(res.stdout.strip())
    with read_only_view(vault, tmp_path / "read-only") as view:
        yield view, lambda *args, stdin="": amem(view, *args, stdin=stdin), ids


def ok(res) -> str:
    assert res.returncode == 0, (res.returncode, res.stderr)
    assert "Traceback" not in res.stderr
    return res.stdout


def test_a_read_only_vault_is_read_and_searched(read_only, vault, tmp_path):
    view, amem, ids = read_only
    assert {n["id"] for n in json.loads(ok(amem("list", "--json")))} == set(ids)
    assert json.loads(ok(amem("show", ids[1], "--json")))["content"] == NOTES[1]
    assert json.loads(ok(amem("status", "--json")))["notes"] == len(NOTES)
    for mode in ("keyword", "semantic", "hybrid"):
        hits = json.loads(ok(amem("search", "walruses sleep on the ice", "--mode", mode, "--json")))
        assert hits[0]["id"] == ids[1], (mode, hits)
    assert "lighthouse" in ok(amem("context", "lighthouse weather"))
    # The index is in a private folder of the user's cache, made for this vault.
    made = [p for p in (tmp_path / "cache" / "vaults").iterdir()]
    assert len(made) == 1 and (made[0] / "index.db").is_file()
    assert stat.S_IMODE(made[0].stat().st_mode) == 0o700


def test_every_write_to_a_read_only_vault_says_so_in_one_line(read_only, vault, tmp_path):
    view, amem, ids = read_only
    before = files(vault)
    (tmp_path / "more.jsonl").write_text(json.dumps({"content": "An imported note"}) + "\n")
    writes = [
        amem("add", "A note for a read-only vault"),
        amem("add", stdin="A piped note for a read-only vault"),
        amem("rm", ids[0]),
        amem("import", str(tmp_path / "more.jsonl")),
        amem("ingest", stdin="user: the boiler pressure dropped\n\nassistant: check the valve\n"),
        amem("edit", ids[0]),
        amem("reindex"),
        amem("doctor", "--fix"),
    ]
    for res in writes:
        assert res.returncode not in (0, 70), (res.args, res.stderr)
        assert "Traceback" not in res.stderr
        assert res.stderr.splitlines()[0].startswith("Error: the vault") and "read-only" in res.stderr.splitlines()[0]
    assert files(vault) == before
