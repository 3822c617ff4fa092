"""Hostile paths: note ids, note text and import paths with `../`, absolute paths,
URL-encoded separators and NUL bytes, and symlinks out of the vault (to a file and to a
folder). Through every command that takes an id, `amem add`, `amem import` and the
scan, nothing outside the vault is read into it or written, and each refusal is one
line with a non-zero exit."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from amem_cli import AgentMemory
from amem_cli.errors import AmemError
from amem_cli.models import Note

HOSTILE_IDS = [
    "../sibling/secret",
    "../../etc/passwd",
    "..",
    ".",
    "/etc/passwd",
    "/tmp",
    "..%2Fsibling%2Fsecret",
    "%2e%2e%2fsibling",
    "..%2f..%2fetc%2fpasswd",
    "a%00b",
    "a\x00b",
    "secret\x00.md",
    "..\\..\\sibling\\secret",
    "C:\\Windows\\win.ini",
    "sub/../../sibling/secret",
    "a/b",
    "~",
    "~/x",
    "x\n../y",
    "",
    " ",
    "-rf",
    "x" * 300,
    "file:///etc/passwd",
]

# One of each kind, for the commands after `show` (each run costs ~0.2 s).
KINDS = ["../sibling/secret", "/etc/passwd", "..%2Fsibling%2Fsecret", "a\x00b", "..\\..\\sibling\\secret",
         "x\n../y", "", "x" * 300]

# Commands that take a note id, as argv after the id is put in.
ID_COMMANDS = [
    ("show", "{id}"),
    ("show", "{id}", "--json"),
    ("edit", "{id}"),
    ("rm", "{id}"),
    ("history", "{id}"),
    ("undo", "{id}"),
    ("evolve", "{id}"),
    ("graph", "--around", "{id}"),
    ("add", "text", "--after", "{id}"),
]


def _tree(root: Path) -> dict[str, str]:
    """Every path below `root` (not following symlinks) with a hash of its bytes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                out[rel] = "dir"
    return out


@pytest.fixture
def sibling(tmp_path: Path, vault: Path) -> Path:
    """A folder beside the vault that nothing may touch, and symlinks to it from inside."""
    side = tmp_path / "sibling"
    (side / "deeper").mkdir(parents=True)
    (side / "secret.md").write_text("---\nid: secret\n---\nThe launch code is 0000.\n", encoding="utf-8")
    (side / "deeper" / "also-secret.md").write_text("Hidden deeper: the safe combination.\n", encoding="utf-8")
    (vault / "link-to-secret.md").symlink_to(side / "secret.md")
    (vault / "dangling.md").symlink_to(side / "not-there.md")
    (vault / "outside-folder").symlink_to(side, target_is_directory=True)
    (vault / "note.md").write_text(
        "---\nid: note\nlinks: ['[[../sibling/secret]]', '[[/etc/passwd]]']\n---\nAn ordinary note.\n", encoding="utf-8"
    )
    return side


def _outside(tmp_path: Path, vault: Path) -> dict[str, str]:
    return {k: v for k, v in _tree(tmp_path).items() if not (tmp_path / k).is_relative_to(vault)}


def _refused(res) -> None:
    assert res.exit_code in (2, 3, 4), (res.exit_code, res.output)
    assert "Traceback" not in res.output and "internal error" not in res.output, res.output


def test_ids_from_the_command_line_touch_nothing_outside(tmp_path, vault, sibling, run, monkeypatch):
    # An editor that would write whatever path it is given, were it ever started.
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\necho written > "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    assert run("list").exit_code == 0  # index the vault first
    before = _outside(tmp_path, vault)
    for argv in ID_COMMANDS:
        for bad in HOSTILE_IDS if argv[0] == "show" else KINDS:
            _refused(run(*(a.format(id=bad) for a in argv)))
    for argv in ID_COMMANDS:  # ids of files that are symlinks out of the vault: unknown, not followed
        if argv[0] == "edit":
            continue  # `edit` of a known id would open the editor: it is the test above's job
        for name in ("link-to-secret", "dangling", "secret"):
            _refused(run(*(a.format(id=name) for a in argv)))
    assert _outside(tmp_path, vault) == before


def test_the_scan_does_not_follow_symlinks_out(tmp_path, vault, sibling, run):
    before = _outside(tmp_path, vault)
    res = run("reindex", "--json")
    assert res.exit_code == 0, res.output
    listed = json.loads(run("list", "--json").stdout)
    assert [n["id"] for n in listed] == ["note"]
    for word in ("launch", "combination"):
        assert json.loads(run("search", word, "--mode", "keyword", "--json").stdout) == []
    # Removing the note that "links" out rewrites only files in the vault.
    assert run("rm", "note").exit_code == 0
    assert _outside(tmp_path, vault) == before
    assert (vault / "link-to-secret.md").is_symlink() and (vault / "outside-folder").is_symlink()


def test_api_ids_and_symlinked_names_are_refused(tmp_path, vault, sibling):
    before = _outside(tmp_path, vault)
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        for bad in HOSTILE_IDS:
            if bad:  # an empty id means "make one"
                with pytest.raises(AmemError):
                    mem.add_many([{"content": "A note with a hostile id.", "id": bad}])
            with pytest.raises(AmemError):
                mem.add_note(Note(id=bad, content="A note with a hostile id."))
            with pytest.raises(AmemError):
                mem.get(bad)
            with pytest.raises(AmemError):
                mem.delete(bad)
        # Valid ids whose file name is a symlink out of the vault (to a file, or to nothing).
        for name in ("link-to-secret", "dangling"):
            with pytest.raises(AmemError, match="outside the vault"):
                mem.add_note(Note(id=name, content="Would write through the symlink."))
        # Text that looks like a path is only text: the note lands in the vault root.
        note = mem.add("../../sibling/secret.md /etc/passwd ..%2Fx \\..\\x")
        assert (vault / f"{note.id}.md").is_file()
    assert _outside(tmp_path, vault) == before


def test_import_never_reads_or_writes_through_hostile_paths(tmp_path, vault, sibling, run):
    source = tmp_path / "to-import"
    source.mkdir()
    (source / "plain.md").write_text("An imported note.\n", encoding="utf-8")
    (source / "%2e%2e%2F..%2Fsibling%2Fx.md").write_text("Encoded separators in a file name.\n", encoding="utf-8")
    (source / "link.md").symlink_to(sibling / "secret.md")
    (source / "outside").symlink_to(sibling, target_is_directory=True)
    (source / "frontmatter-id.md").write_text("---\nid: ../../sibling/owned\n---\nAn id that is a path.\n")
    lines = [
        {"content": "JSON with a path id", "id": "../../sibling/owned"},
        {"content": "JSON with path metadata", "metadata": {"source": "../../sibling/secret.md", "path": "/etc/passwd"}},
        {"content": "JSON with a path box", "boxes": ["../sibling"], "tags": ["/etc", "..%2F"]},
    ]
    jsonl = source.parent / "lines.jsonl"
    jsonl.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    before = _outside(tmp_path, vault)

    res = run("import", str(source), "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert (report["imported"], report["problems"]) == (3, []), report  # the frontmatter's id is not used
    res = run("import", str(jsonl), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["imported"] == 3

    for path in ("a\x00b", str(sibling / ".." / "sibling" / "nothing.jsonl"), str(vault), str(vault / "..%2Fsibling")):
        _refused(run("import", path))
    assert _outside(tmp_path, vault) == before
    texts = [n["content"] for n in json.loads(run("list", "--json").stdout)]
    assert not any("launch code" in t or "combination" in t for t in texts)
    # Every file written is a plain file right in the vault.
    written = [p for p in vault.rglob("*.md") if not p.is_symlink() and not p.is_relative_to(vault / ".amem")]
    assert all(p.parent == vault for p in written)
