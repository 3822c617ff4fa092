"""The vault's atomic writes: one file, or many made durable together."""

from __future__ import annotations

import os

import pytest

import amem_cli.vault as vault_module
from amem_cli.errors import ConflictError
from amem_cli.vault import Vault, content_hash


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

    monkeypatch.setattr("amem_cli.vault._sync_files", fail)
    with pytest.raises(Exception, match=r"cannot write 2 files \(a.md first\): No space left on device"):
        vault.write_many([("a.md", "new a\n", content_hash(b"old a.md\n")), ("c.md", "new c\n", None)])
    assert files(vault) == {"a.md": "old a.md\n", "b.md": "old b.md\n"}


# -- a person saving at the worst moments (where Linux's renameat2 swaps files) ----------

needs_swap = pytest.mark.skipif(vault_module._renameat2_call() is None, reason="no renameat2 here")


def save(path, text: str) -> None:
    """A person's save, as `sed -i` and vim make it: a new file renamed over the old."""
    tmp = path.with_name("person.tmp-save")
    tmp.write_text(text)
    os.replace(tmp, path)


def before_swaps(monkeypatch, *saves):
    """Run `saves[n]()` (None: nothing) just before amem's n-th swap of files."""
    swap, count = vault_module._renameat2, [0]

    def hooked(src, dst, flags):
        if flags == vault_module.RENAME_EXCHANGE:
            count[0] += 1
            if count[0] <= len(saves) and saves[count[0] - 1]:
                saves[count[0] - 1]()
        return swap(src, dst, flags)

    monkeypatch.setattr(vault_module, "_renameat2", hooked)
    return count


@needs_swap
def test_a_save_between_the_last_check_and_the_swap_goes_back(vault, monkeypatch):
    a = vault.root / "a.md"
    swaps = before_swaps(monkeypatch, lambda: save(a, "the person's a\n"))
    version, seen = vault_module._version, []
    monkeypatch.setattr(vault_module, "_version", lambda path: seen.append(a.read_text()) or version(path))
    with pytest.raises(ConflictError):
        vault.write_text("a.md", "amem's a\n", content_hash(b"old a.md\n"))
    assert files(vault) == {"a.md": "the person's a\n", "b.md": "old b.md\n"}  # no temp file either
    assert swaps[0] == 2  # swapped in, found the person's file, swapped back
    # Back before amem read a file: the note held amem's version (made from older bytes) for no longer than that.
    assert "amem's a\n" not in seen


@needs_swap
def test_a_save_while_amems_version_is_made_durable_is_seen_before_any_swap(vault, monkeypatch):
    a = vault.root / "a.md"
    swaps = before_swaps(monkeypatch)
    fsync, saved = os.fsync, []

    def fsync_after_a_save(fd):
        if not saved:
            saved.append(save(a, "the person's a\n"))
        fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_after_a_save)
    with pytest.raises(ConflictError):
        vault.write_text("a.md", "amem's a\n", content_hash(b"old a.md\n"))
    assert files(vault) == {"a.md": "the person's a\n", "b.md": "old b.md\n"}
    assert swaps[0] == 0  # amem's version was never in place, not even for a moment


@needs_swap
def test_a_batch_stopped_by_a_save_puts_back_the_files_it_had_replaced(vault, monkeypatch):
    b = vault.root / "b.md"
    before_swaps(monkeypatch, None, lambda: save(b, "the person's b\n"))
    with pytest.raises(ConflictError):
        vault.write_many([("a.md", "amem's a\n", content_hash(b"old a.md\n")), ("c.md", "amem's c\n", None),
                          ("b.md", "amem's b\n", content_hash(b"old b.md\n"))])
    assert files(vault) == {"a.md": "old a.md\n", "b.md": "the person's b\n"}


@needs_swap
def test_a_save_over_amems_file_before_it_is_swapped_back_stays(vault, monkeypatch):
    """The person saves twice: once before amem's swap, once right after it (over amem's
    file). Their second save is the newest: it stays, and nothing is swapped back over it."""
    a = vault.root / "a.md"
    swap, calls = vault_module._renameat2, []

    def twice(src, dst, flags):
        calls.append(flags)
        if len(calls) > 1:
            return swap(src, dst, flags)
        save(a, "the person's first a\n")
        done = swap(src, dst, flags)
        save(a, "the person's second a\n")
        return done

    monkeypatch.setattr(vault_module, "_renameat2", twice)
    with pytest.raises(ConflictError):
        vault.write_text("a.md", "amem's a\n", content_hash(b"old a.md\n"))
    assert files(vault) == {"a.md": "the person's second a\n", "b.md": "old b.md\n"}
    assert calls == [vault_module.RENAME_EXCHANGE]


@needs_swap
def test_a_save_in_the_moment_between_two_swaps_is_swapped_back_in(vault, monkeypatch):
    """A save lands after amem saw its own file still in place, before it swapped the
    person's first save back: the swap takes out that newer save, which goes back in."""
    a = vault.root / "a.md"
    before_swaps(monkeypatch, lambda: save(a, "the person's first a\n"), lambda: save(a, "the person's second a\n"))
    with pytest.raises(ConflictError):
        vault.write_text("a.md", "amem's a\n", content_hash(b"old a.md\n"))
    assert files(vault) == {"a.md": "the person's second a\n", "b.md": "old b.md\n"}


@needs_swap
def test_a_new_file_never_replaces_one_that_came_meanwhile(vault, monkeypatch):
    c = vault.root / "c.md"
    rename = vault_module._renameat2

    def a_file_comes_first(src, dst, flags):
        if flags == vault_module.RENAME_NOREPLACE:
            c.write_text("the person's c\n")
        return rename(src, dst, flags)

    monkeypatch.setattr(vault_module, "_renameat2", a_file_comes_first)
    with pytest.raises(ConflictError):
        vault.write_many([("a.md", "amem's a\n", content_hash(b"old a.md\n")), ("c.md", "amem's c\n", None)])
    assert files(vault) == {"a.md": "old a.md\n", "b.md": "old b.md\n", "c.md": "the person's c\n"}


def test_without_renameat2_the_file_is_checked_right_before_the_rename(vault, monkeypatch):
    a = vault.root / "a.md"
    saves = [lambda: save(a, "the person's a\n")]

    def no_renameat2(src, dst, flags):  # as where the system has none: a save came just before
        while saves:
            saves.pop()()
        return False

    monkeypatch.setattr(vault_module, "_renameat2", no_renameat2)
    with pytest.raises(ConflictError):
        vault.write_text("a.md", "amem's a\n", content_hash(b"old a.md\n"))
    assert files(vault) == {"a.md": "the person's a\n", "b.md": "old b.md\n"}
    vault.write_text("a.md", "amem's a\n", content_hash(b"the person's a\n"))
    vault.write_text("d.md", "amem's d\n")
    assert files(vault) == {"a.md": "amem's a\n", "b.md": "old b.md\n", "d.md": "amem's d\n"}


def test_a_note_files_bytes_parse_to_its_note_or_one_line_saying_why_not():
    parse = vault_module.parse_note_file
    note, error, named = parse("sub/My Note.md", b"---\ntags: [a]\n---\nText.\n")
    assert (note.id, note.tags, note.content, error, named) == ("My-Note", ["a"], "Text.", None, False)  # id from the name
    note, _, named = parse("x.md", b"---\nid: mine\n---\nText.\n")
    assert (note.id, named) == ("mine", True)
    note, _, named = parse("x.md", b"---\nid: mine\n---\nText.\n", own_id=False)  # a file from elsewhere: its id unused
    assert (note.id, named) == ("x", False)
    assert parse("x.md", b"line\n\xff\n") == (None, "x.md:2: not UTF-8 text; the file was skipped", False)
    assert parse("x.md", b"a\x00b") == (None, "x.md: a binary file, not a Markdown note; it was skipped", False)
    assert parse("x.md", b"x" * (vault_module.MAX_NOTE_BYTES + 1))[1].startswith("x.md: larger than a note may be (2 MiB)")
    assert parse("x.md", b"---\ntags: [a\n---\nText.\n")[1].startswith("x.md:3: bad YAML frontmatter")
