"""The warm server's files are the owner's only: `.amem/` (the index, the socket, the
log) is made private even when it was not, and a socket never goes into a shared
folder someone else could have made (the CLI then works alone)."""

from __future__ import annotations

import os
import stat

import pytest

from amem_cli.server.client import ask, socket_path
from amem_cli.wire.notes import Add


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_world_readable_index_folder_is_made_private(run, vault):
    (vault / ".amem").mkdir(mode=0o755)
    (vault / ".amem").chmod(0o755)
    assert run("add", "The index holds every note's text").exit_code == 0
    assert _mode(vault / ".amem") == 0o700


@pytest.fixture
def deep_vault(tmp_path):
    """A vault whose `.amem/server.sock` would be too long a socket path."""
    vault = tmp_path / ("v" * 60) / ("w" * 60)
    (vault / ".amem").mkdir(parents=True, mode=0o700)
    return vault


@pytest.mark.parametrize("unsafe", ["open to all", "someone else's"])
def test_no_socket_in_a_runtime_folder_that_is_not_private(deep_vault, tmp_path, monkeypatch, unsafe):
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert socket_path(deep_vault / ".amem").parent == runtime  # private: used
    if unsafe == "open to all":
        runtime.chmod(0o777)
    else:
        if os.getuid() != 0:
            pytest.skip("only root can give a folder to another user")
        os.chown(runtime, 65534, 65534)
    with pytest.raises(PermissionError):
        socket_path(deep_vault / ".amem")
    monkeypatch.setenv("AMEM_SERVER", "auto")
    # The CLI works alone rather than start a server whose socket someone else controls.
    assert ask(Add("x"), {"dir": str(deep_vault), "embedder": "fake"}) is None
    assert list(runtime.iterdir()) == [] and not (deep_vault / ".amem" / "server.json").exists()
