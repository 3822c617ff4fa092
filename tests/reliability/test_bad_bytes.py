"""Bytes that are not UTF-8, on argv and stdin, through the warm server and without it.

Text a person hands amem to keep or to look for (a query, a note, a transcript) has each
bad byte replaced by U+FFFD with one warning line saying how many: one byte must not cost
a whole transcript. A path is refused in one line when amem would have to store it (the
vault's own), kept as it is when amem only opens it. Never an internal error (exit 70).
The processes run with a strict stdin/stdout, as under a desktop's UTF-8 locale."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

BAD = b"\xff"
STRICT = {"PYTHONIOENCODING": "utf-8:strict", "AMEM_EMBEDDER": "fake"}


@pytest.fixture(params=["off", "auto"], ids=["no-server", "server"])
def amem(request, amem_cmd, vault):
    """`amem --dir VAULT ARGS` (bytes allowed) in a new process, with stdin bytes."""
    env = {**os.environ, **STRICT, "AMEM_SERVER": request.param}

    def run(*args: str | bytes | Path, stdin: bytes = b"", dir: bytes | Path = vault):
        argv = [os.fsencode(a) for a in (*amem_cmd, "--dir", dir, *args)]
        return subprocess.run(argv, input=stdin, capture_output=True, env=env, timeout=120)

    assert run("init").returncode == 0
    yield run
    run("server", "stop")
    info = vault / ".amem" / "server.json"
    if info.exists():
        os.kill(json.loads(info.read_text())["pid"], signal.SIGKILL)


def clean(res, code: int = 0, replaced: int | None = None) -> str:
    """The run ended with `code`, no traceback, and (if given) one warning about `replaced` bytes."""
    err = res.stderr.decode("utf-8", "replace")
    assert res.returncode == code, (res.returncode, err, res.stdout)
    assert "Traceback" not in err and "internal error" not in err, err
    if replaced is not None:
        warnings = [line for line in err.splitlines() if "not UTF-8" in line]
        assert len(warnings) == 1 and f"{replaced} byte" in warnings[0], err
    return res.stdout.decode("utf-8")


def notes(vault: Path) -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in vault.glob("*.md")}


def test_a_query_with_a_bad_byte_is_searched(amem, vault):
    clean(amem("add", "the lighthouse keeper logs the weather"))
    out = clean(amem("search", b"lighthouse " + BAD, "--json"), replaced=1)
    assert [hit["id"] for hit in json.loads(out)] == list(notes(vault))
    clean(amem("context", BAD + b"weather"), replaced=1)
    clean(amem("list", "--tag", BAD), replaced=1)


def test_a_transcript_with_a_bad_byte_is_ingested_whole(amem, vault):
    transcript = b"user: the boiler pressure dropped to 0.8 bar\n\nassistant: caf" + BAD + BAD + (
        b" opens at nine\n\nuser: and the walrus sleeps at noon\n"
    )
    clean(amem("ingest", "-", stdin=transcript), replaced=2)
    text = "\n".join(notes(vault).values())
    for words in ("boiler pressure", "caf\ufffd\ufffd opens at nine", "walrus sleeps"):
        assert words in text


def test_a_transcript_file_with_a_bad_byte_is_ingested_whole(amem, vault, tmp_path):
    path = tmp_path / os.fsdecode(b"session-" + BAD + b".txt")
    path.write_bytes(b"user: the tide turns at " + BAD + b"six\n\nassistant: noted, six\n")
    clean(amem("ingest", path), replaced=1)
    assert "the tide turns at \ufffdsix" in "\n".join(notes(vault).values())


def test_a_binary_file_is_not_ingested(amem, vault, tmp_path):
    path = tmp_path / "image.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    res = amem("ingest", path)
    clean(res, code=2)
    assert b"not text" in res.stderr
    assert notes(vault) == {}


def test_a_note_with_a_bad_byte_is_added(amem, vault):
    from_stdin = clean(amem("add", stdin=b"piped " + BAD + b" note"), replaced=1).strip()
    from_argv = clean(amem("add", b"typed " + BAD + b" note", "--tag", b"t" + BAD), replaced=2).strip()
    kept = notes(vault)
    assert "piped \ufffd note" in kept[from_stdin]
    assert "typed \ufffd note" in kept[from_argv] and "t\ufffd" in kept[from_argv]


def test_an_import_with_bad_bytes_imports_the_rest(amem, vault, tmp_path):
    """A bad line is reported by its number and skipped (it can be mended and imported
    again: the lines imported before are skipped); a file's name is any bytes."""
    lines = b'{"content": "first line"}\n{"content": "bad ' + BAD + b' line"}\n{"content": "third line"}\n'
    path = tmp_path / os.fsdecode(BAD + b".jsonl")
    path.write_bytes(lines)
    for source in (path, "-"):
        res = amem("import", source, "--json", stdin=lines if source == "-" else b"")
        report = json.loads(clean(res, code=1))
        assert report["skipped"] == 1 and ":2: not UTF-8" in report["problems"][0], report
    bodies = sorted(text.rsplit("---\n", 1)[1].strip() for text in notes(vault).values())
    assert bodies == ["first line", "first line", "third line", "third line"]


def test_a_vault_path_that_is_not_utf8_is_refused_in_one_line(amem, tmp_path):
    folder = tmp_path / os.fsdecode(b"vault-" + BAD)
    folder.mkdir()
    res = amem("add", "a note", dir=folder)
    clean(res, code=2)
    assert b"not UTF-8" in res.stderr
    assert list(folder.iterdir()) == []


def test_a_note_file_whose_name_is_not_utf8_is_reported_not_fatal(amem, vault):
    clean(amem("add", "the lighthouse keeper logs the weather"))
    (vault / os.fsdecode(b"caf" + BAD + b".md")).write_text("a note from an old system\n")
    res = amem("search", "lighthouse", "--json")
    assert len(json.loads(clean(res))) == 1
    assert b"its name is not UTF-8" in res.stderr
    clean(amem("doctor"))
