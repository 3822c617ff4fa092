"""The vault's atomic writes: one file, or many made durable together."""

from __future__ import annotations

import pytest

from amem_cli.errors import ConflictError
from amem_cli.store import Vault, content_hash


@pytest.fixture
def vault(tmp_path) -> Vault:
    v = Vault(tmp_path)
    v.ensure()
    for name in ("a.md", "b.md"):
        v.write_text(name, f"old {name}\n")
    return v


def files(v: Vault) -> dict[str, str]:
    return {p.name: p.read_text() for p in v.root.iterdir() if p.is_file()}


def test_many_files_are_written_together(vault):
    old_a = content_hash(b"old a.md\n")
    stats = vault.write_many([("a.md", "new a\n", old_a), ("c.md", "new c\n", None), ("d/e.md", "new e\n", None)])
    assert files(vault) == {"a.md": "new a\n", "b.md": "old b.md\n", "c.md": "new c\n"}
    assert (vault.root / "d" / "e.md").read_text() == "new e\n"
    assert [s.size for s in stats] == [6, 6, 6]


def test_a_file_changed_since_it_was_read_stops_the_whole_batch(vault):
    """A person's edit wins, and nothing of the batch is written (no temp file either)."""
    with pytest.raises(ConflictError):
        vault.write_many([("a.md", "new a\n", content_hash(b"old a.md\n")), ("b.md", "new b\n", content_hash(b"what was read"))])
    assert files(vault) == {"a.md": "old a.md\n", "b.md": "old b.md\n"}


def test_a_failed_flush_renames_nothing_and_leaves_no_temp_file(vault, monkeypatch):
    def fail(paths):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("amem_cli.store._sync_files", fail)
    with pytest.raises(Exception, match=r"cannot write 2 files \(a.md first\): No space left on device"):
        vault.write_many([("a.md", "new a\n", None), ("c.md", "new c\n", None)])
    assert files(vault) == {"a.md": "old a.md\n", "b.md": "old b.md\n"}
