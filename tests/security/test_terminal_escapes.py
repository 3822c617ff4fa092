"""Text from a vault reaches the terminal shown, never obeyed: terminal escapes stored in
a note (clear screen, OSC 52 clipboard write, a C1 CSI, a bidi override) are printed
escaped by every human view, a newline in a file name cannot start a forged warning
line, JSON carries them as JSON escapes, and the note's file is never changed."""

from __future__ import annotations

import json
import unicodedata

import pytest

CLEAR = "\x1b[2J\x1b[H"
CLIPBOARD = "\x1b]52;c;ZWNobyBvd25lZA==\x07"  # OSC 52: "echo owned" into the clipboard
CSI_8BIT = "\x9b31m"
BIDI = "\u202e"  # right-to-left override: what follows is shown reversed
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\r", "\x08")
NOTE = (
    # YAML's own escapes in the frontmatter (\\e is ESC, \\a BEL): YAML forbids them raw
    '---\nid: evil\ntags: ["t\\e[31mred"]\nboxes: ["box\\e]52;c;eA==\\a"]\ncontext: "calm \\e[2J"\n---\n'
    f"line one {BIDI}txt.exe reverses, {CLEAR} wipes, {CLIPBOARD} steals, {CSI_8BIT} colours\n"
    "line two\tkeeps its tab, \x08 backspace\n"
).encode()
FORGED = "bad\nWarning: all your notes were deleted.md"


@pytest.fixture
def hostile(vault):
    (vault / "evil.md").write_bytes(NOTE)
    (vault / FORGED).write_text("---\nbroken: [\n---\ntext\n")  # bad frontmatter: a sync warning names it
    return vault


def _clean(res) -> str:
    for stream in (res.stdout, res.stderr):
        for raw in RAW:
            assert raw not in stream, (raw, stream)
    return res.stdout


@pytest.mark.parametrize("args", [
    ["show", "evil"], ["list"], ["search", "wipes"], ["search", "wipes", "--explain"], ["context", "wipes"],
    ["boxes"], ["status"], ["doctor"], ["graph"], ["graph", "--format", "dot"], ["graph", "--format", "graphml"],
])
def test_no_view_lets_an_escape_through(run, hostile, args):
    run("list")  # indexed first: the bad file is a problem of the index now
    res = run(*args)
    _clean(res)
    assert not any(line.lstrip().startswith("Warning: all your notes") for line in res.output.splitlines())
    assert (hostile / "evil.md").read_bytes() == NOTE  # only what is printed changes


def test_settings_are_shown_escaped(run, vault):
    (vault / "amem.toml").write_text('fusion = "\\u001b]52;c;eA==\\u0007"\n')  # TOML escapes: ESC, BEL
    assert "fusion" in _clean(run("config", "show"))


def test_show_prints_them_visibly_and_keeps_the_lines(run, hostile):
    out = _clean(run("show", "evil"))
    assert "line one \\u202etxt.exe reverses, \\x1b[2J\\x1b[H wipes, \\x1b]52;c;ZWNobyBvd25lZA==\\x07 steals, \\x9b31m" in out
    assert "\nline two" in out and "keeps its tab, \\x08 backspace" in out  # (Rich shows the tab as spaces)
    assert "t\\x1b[31mred" in out and "calm \\x1b[2J" in out


def test_a_newline_in_a_file_name_cannot_forge_a_line(run, hostile):
    res = run("list")
    _clean(res)
    warnings = [line for line in res.stderr.splitlines() if "deleted" in line]
    assert warnings == [line for line in warnings if line.startswith("Warning: bad\\nWarning: all your notes")]
    assert len(warnings) == 1
    assert not any(line.startswith("Warning: all your notes") for line in res.stderr.splitlines())


@pytest.mark.parametrize("args", [["show", "evil", "--json"], ["list", "--json"], ["search", "wipes", "--json"],
                                  ["context", "wipes", "--json"], ["graph", "--format", "json"], ["boxes", "--json"]])
def test_json_carries_them_as_escapes(run, hostile, args):
    assert json.loads(_clean(run(*args)))  # valid JSON, with no character a terminal acts on


def test_json_is_the_same_text_once_parsed(run, hostile):
    note = json.loads(_clean(run("show", "evil", "--json")))
    assert note["content"] == NOTE.decode().split("---\n", 2)[2].rstrip("\n")
    assert note["boxes"] == ["box\x1b]52;c;eA==\x07"] and note["context"] == "calm \x1b[2J"


def test_escapes_in_an_error_message(run, vault):
    res = run("import", "no\x1b[2Jsuch\u202e.jsonl")
    assert res.exit_code != 0
    _clean(res)


# Every character a terminal acts on, from the Unicode database rather than amem's list:
# the controls (C0, DEL, C1), the line and paragraph separators, the bidi controls.
ACTIVE = [
    chr(c) for c in range(0x2070)
    if unicodedata.category(chr(c)) in ("Cc", "Zl", "Zp")
    or unicodedata.bidirectional(chr(c)) in ("LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI")
    or chr(c) in "\u200e\u200f\u061c"  # the marks LRM, RLM, ALM
]


@pytest.mark.parametrize("args", [["show", "all"], ["list"], ["search", "start"], ["context", "start"],
                                  ["show", "all", "--json"], ["list", "--json"]])
def test_every_character_a_terminal_acts_on_is_escaped(run, vault, args):
    shown = [ch for ch in ACTIVE if ch not in "\x00\n\t\r"]  # NUL: a binary file, no note; CR: read as a newline
    (vault / "all.md").write_text("---\nid: all\n---\nstart " + " ".join(f"<{ch}>" for ch in shown) + "\n")
    res = run(*args)
    assert res.exit_code == 0 and "start" in res.stdout
    assert [ch for ch in shown if ch in res.stdout or ch in res.stderr] == []
