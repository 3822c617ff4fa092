"""A vault's own files cannot turn amem against files outside its index: `.amem/` must be
a real folder holding no symlinks (a cloned repository may carry one), and no note may be
a symlink into `.amem/` or another hidden folder (amem would rewrite its lock or index)."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading

import pytest

from amem_cli.errors import VaultError
from amem_cli.vault import Vault


def _snapshot(folder):
    """The folder's mode and every file's name and bytes."""
    return stat.S_IMODE(folder.stat().st_mode), {p.name: p.read_bytes() for p in folder.iterdir()}


def _one_error(res) -> str:
    """The error line of a refused command (and its hint), nothing else."""
    lines = res.stderr.splitlines()
    assert res.exit_code == VaultError.exit_code, res.output
    assert len(lines) == 2 and lines[0].startswith("Error:") and lines[1].startswith("Hint:"), res.stderr
    return lines[0]


@pytest.mark.parametrize("args", [["list"], ["add", "a note"], ["init"], ["search", "x"], ["doctor", "--fix"]])
def test_an_index_folder_that_is_a_symlink_is_refused(run, vault, tmp_path, args):
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o755)
    outside.chmod(0o755)
    (outside / "passwd").write_text("root:x:0:0\n")
    (vault / ".amem").symlink_to(outside)
    before = _snapshot(outside)
    line = _one_error(run(*args))
    assert "symlink" in line and ".amem" in line
    assert _snapshot(outside) == before  # not chmod-ed, nothing written into it
    assert (vault / ".amem").is_symlink()


def test_an_index_folder_that_is_a_file_is_refused(run, vault):
    (vault / ".amem").write_text("not a folder")
    assert ".amem" in _one_error(run("list"))
    assert (vault / ".amem").read_text() == "not a folder"


@pytest.mark.parametrize("name", ["write.lock", "index.db", "server.log"])
def test_a_symlink_inside_the_index_folder_is_refused(run, vault, tmp_path, name):
    """The lock is opened with O_TRUNC, the index written, the log appended to: through a
    link each would change a file outside the vault."""
    precious = tmp_path / "precious"
    precious.write_text("keep me\n")
    (vault / ".amem").mkdir(mode=0o700)
    (vault / ".amem" / name).symlink_to(precious)
    line = _one_error(run("add", "a note"))
    assert name in line
    assert precious.read_text() == "keep me\n"


def _lock(vault):
    st = (vault / ".amem" / "write.lock").stat()
    return st.st_ino, st.st_size


def test_a_note_symlinked_to_the_lock_file_is_no_note(run, vault):
    """`x.md -> .amem/write.lock`: `add --after x` used to replace the lock file with a note
    (a new inode), so two writers no longer excluded each other."""
    assert run("add", "first").exit_code == 0
    lock = _lock(vault)
    (vault / "x.md").symlink_to(".amem/write.lock")
    res = run("add", "--after", "x", "second")
    assert res.exit_code != 0 and "x" in res.stderr
    assert _lock(vault) == lock
    assert "x" not in [n["id"] for n in json.loads(run("list", "--json").stdout)]


def test_an_indexed_note_swapped_for_a_symlink_to_the_lock_file_is_not_written(run, vault):
    assert run("add", "first").exit_code == 0
    (vault / "y.md").write_text("---\nid: y\n---\nhello\n")
    assert run("show", "y").exit_code == 0  # indexed as a note
    lock = _lock(vault)
    (vault / "y.md").unlink()
    (vault / "y.md").symlink_to(".amem/write.lock")
    res = run("add", "--after", "y", "second")
    assert res.exit_code != 0
    assert _lock(vault) == lock


@pytest.mark.parametrize("target", [".amem/write.lock", ".amem", ".git/config", "sub/../.amem/index.db"])
def test_no_note_path_resolves_into_a_hidden_folder(vault, target):
    (vault / ".git").mkdir()
    (vault / ".git" / "config").write_text("[core]\n")
    (vault / "sub").mkdir()
    v = Vault(vault)
    v.ensure()
    (vault / "x.md").symlink_to(target)
    with pytest.raises(VaultError, match="hidden folder"):
        v.abspath("x.md")
    assert "x.md" not in v.scan()
    assert v.stat("x.md") is None
    with pytest.raises(VaultError):
        v.write_text("x.md", "---\nid: x\n---\nowned\n")
    assert (vault / ".git" / "config").read_text() == "[core]\n"


def test_notes_may_still_be_symlinks_within_the_vault(vault):
    (vault / "real").mkdir()
    (vault / "real" / "a.md").write_text("---\nid: a\n---\nA\n")
    (vault / "a-link.md").symlink_to("real/a.md")
    v = Vault(vault)
    v.ensure()
    assert set(v.scan()) == {"real/a.md", "a-link.md"}
    assert v.abspath("a-link.md") == (vault / "real" / "a.md").resolve()
    assert v.abspath(".gitignore") == vault.resolve() / ".gitignore"  # a hidden file in the root: amem's own
    assert os.path.isdir(vault / ".amem")


@pytest.mark.parametrize("link", [".amem", ".amem/server.log"])
def test_the_warm_server_is_not_started_through_a_link(run_amem, vault, tmp_path, link):
    """With the server on, the `amem` process looks into `.amem/` before any check of the
    vault: for the log of the server it starts. Through a link that would be anyone's file."""
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o755)
    (outside / "server.log").write_text("theirs\n")
    if link != ".amem":
        (vault / ".amem").mkdir(mode=0o700)
    (vault / link).symlink_to(outside if link == ".amem" else outside / "server.log")
    before = _snapshot(outside)
    res = run_amem("--dir", vault, "add", "a note", env={"AMEM_SERVER": "auto", "AMEM_EMBEDDER": "fake"})
    assert res.returncode == VaultError.exit_code, res.stderr
    assert res.stderr.startswith("Error:") and "symlink" in res.stderr  # at once: no server was started
    assert _snapshot(outside) == before


def test_a_command_is_never_handed_to_a_socket_a_link_names(run_amem, vault, tmp_path):
    """`.amem/server.sock -> someone's socket`: the command, its environment and its stdin
    (a note's text) would go to whoever listens there."""
    heard: list[bytes] = []
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "theirs.sock"))
    listener.listen()
    listener.settimeout(30)

    def listen():
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            heard.append(conn.recv(1 << 16))

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    (vault / ".amem").mkdir(mode=0o700)
    (vault / ".amem" / "server.sock").symlink_to(tmp_path / "theirs.sock")
    try:
        res = run_amem("--dir", vault, "search", "my secret plans", env={"AMEM_SERVER": "auto", "AMEM_EMBEDDER": "fake"})
    finally:
        listener.close()
        thread.join(timeout=5)
    assert heard == []
    assert res.returncode == VaultError.exit_code and "server.sock" in res.stderr
