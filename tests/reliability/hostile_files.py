"""A corpus of hostile and unusual note files, generated (nothing checked in).

`BAD`: files amem must report (with the path, and the line where there is one) and
leave byte-identical. `ODD`: files that look wrong but are valid notes, which must
index with exactly this content and survive amem rewriting them.
"""

from __future__ import annotations

from dataclasses import dataclass

# Over the 2 MiB a note file may be, as the brief's "20 MB note" (a few words, repeated).
BIG_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class Bad:
    name: str
    data: bytes
    line: int | None  # the line the report must name (None: the file has no one line at fault)
    says: str  # a fragment of the report


@dataclass(frozen=True)
class Odd:
    name: str
    data: bytes
    id: str
    content: str  # the note's text as amem must read it
    extra: dict | None = None  # keys a person added, as amem must read them
    tags: tuple[str, ...] = ()


def _fm(*lines: str, body: str = "Body text.") -> bytes:
    return ("---\n" + "".join(line + "\n" for line in lines) + "---\n" + body + "\n").encode("utf-8")


def big_note() -> bytes:
    line = b"the quick brown fox jumps over the lazy dog while the note grows\n"
    return b"---\nid: big\n---\n" + line * (BIG_BYTES // len(line) + 1)


def bad_files() -> list[Bad]:
    return [
        # An empty file is a save under way (or a note with nothing in it): never a note
        # amem writes into (round 3; an `Odd` note before, which `add --after` filled in).
        Bad("empty.md", b"", None, "empty"),
        Bad("blank.md", b"\n  \n", None, "empty"),
        Bad("unclosed-list.md", _fm("id: unclosed-list", "tags: [a, b"), 4, "bad YAML"),
        Bad("unclosed-map.md", _fm("id: unclosed-map", "metadata: {a: 1"), 4, "bad YAML"),
        Bad("tab-indent.md", _fm("id: tab-indent", "tags:", "\t- a"), 4, "bad YAML"),
        Bad("duplicate-keys.md", _fm("id: duplicate-keys", "tags: [a]", "context: one", "tags: [b]"), 5, "appears twice"),
        Bad("duplicate-id.md", _fm("id: one", "id: two"), 3, "appears twice"),
        Bad("not-utf8.md", _fm("id: not-utf8", body="line one\nline two \xff\xfe broken").replace("\xff\xfe".encode(), b"\xff\xfe"),
            5, "not UTF-8"),
        Bad("latin1.md", "---\nid: latin1\ncontext: caf\xe9\n---\nx\n".encode("latin-1"), 3, "not UTF-8"),
        Bad("binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00" + bytes(range(256)) * 8, None, "binary"),
        Bad("big.md", big_note(), None, "larger than a note may be"),
        Bad("unclosed-frontmatter.md", b"---\nid: unclosed-frontmatter\ntags: [a]\nbody with no closing fence\n", 1,
            "never closed"),
        Bad("not-a-mapping.md", _fm("- a", "- b"), 2, "must be a mapping"),
        Bad("emphasis.md", _fm("id: emphasis", "context: *emphasis* matters"), 3, "bad YAML"),
        Bad("windows-quoted.md", _fm("id: windows-quoted", 'path: "C:\\Users\\new\\notes"'), 3, "bad YAML"),
        Bad("bad-date.md", _fm("id: bad-date", "tags: [x]", "created: 2025-13-45"), 4, "month must be in 1..12"),
        Bad("not-a-date.md", _fm("id: not-a-date", "updated: next tuesday"), 3, "not a date-time"),
        Bad("huge-int.md", _fm("id: huge-int", "count: " + "9" * 5000), 3, "cannot read the value"),
        Bad("list-id.md", _fm("id: [a, b]"), 2, "the id must be text"),
        Bad("dotdot-id.md", _fm("id: ../../outside"), 2, "not a valid note id"),
        Bad("slash-id.md", _fm("tags: [x]", "id: /etc/passwd"), 3, "not a valid note id"),
        Bad("context-map.md", _fm("id: context-map", "tags: [x]", "context: {a: 1}"), 4, "context must be"),
        Bad("tags-map.md", _fm("id: tags-map", "tags: {a: 1}"), 3, "tags must be a list"),
        Bad("metadata-list.md", _fm("id: metadata-list", "metadata: [1, 2]"), 3, "metadata must be a mapping"),
        Bad("recursive-alias.md", _fm("id: recursive-alias", "loop: &a [*a]"), 3, "contains it"),
        Bad("deep.md", _fm("id: deep", "x: " + "[" * 500 + "]" * 500), 3, "bad YAML"),
        Bad("python-tag.md", _fm("id: python-tag", "x: !!python/object/apply:os.getcwd []"), 3, "constructor"),
        Bad("unknown-alias.md", _fm("id: unknown-alias", "x: *nowhere"), 3, "bad YAML"),
    ]


# Odd but valid. Content is what amem reads: line ends as LF, no BOM, no final newline.
def odd_files() -> list[Odd]:
    return [
        Odd("crlf.md", b"---\r\nid: crlf\r\ntags: [windows]\r\n---\r\nFirst line\r\nsecond line\r\n", "crlf",
            "First line\nsecond line", tags=("windows",)),
        Odd("bom.md", "\ufeff---\nid: bom\n---\nByte order mark note\n".encode("utf-8"), "bom", "Byte order mark note"),
        Odd("bom-crlf.md", "\ufeff---\r\nid: bom-crlf\r\n---\r\nBoth quirks at once\r\n".encode("utf-8"), "bom-crlf",
            "Both quirks at once"),
        Odd("old-mac.md", b"---\rid: old-mac\r---\rCarriage returns only\r", "old-mac", "Carriage returns only"),
        Odd("rules-in-body.md", _fm("id: rules-in-body", body="Above the rule\n---\nBelow the rule\n---\nid: not-an-id"),
            "rules-in-body", "Above the rule\n---\nBelow the rule\n---\nid: not-an-id"),
        Odd("no-frontmatter.md", b"Just text, no frontmatter.\n", "no-frontmatter", "Just text, no frontmatter."),
        Odd("frontmatter-only.md", b"---\nid: frontmatter-only\ntags: [index]\n---\n", "frontmatter-only", "",
            tags=("index",)),
        Odd("windows-plain.md", _fm("id: windows-plain", "path: C:\\Users\\new\\notes", "share: \\\\server\\x"),
            "windows-plain", "Body text.", extra={"path": "C:\\Users\\new\\notes", "share": "\\\\server\\x"}),
        Odd("emphasis-quoted.md", _fm("id: emphasis-quoted", "context: '*emphasis* matters'", "note: '**bold** _x_'"),
            "emphasis-quoted", "Body text.", extra={"note": "**bold** _x_"}),
        Odd("yaml-words.md", _fm("id: yaml-words", "tags: [yes, no, on, 1.10, 0x10, null-ish, ~x]"), "yaml-words",
            "Body text.", tags=("yes", "no", "on", "1.10", "0x10", "null-ish", "~x")),
        Odd("small-alias.md", _fm("id: small-alias", "base: &b {a: 1}", "copy: *b"), "small-alias", "Body text.",
            extra={"base": {"a": 1}, "copy": {"a": 1}}),
        Odd("unicode.md", _fm("id: unicode", "context: 東京 🗼 naïve", body="Ünïcödé 東京タワー 🗼\u200b zero width"),
            "unicode", "Ünïcödé 東京タワー 🗼\u200b zero width"),
        Odd("control-chars.md", _fm("id: control-chars", body="bell \x07 and escape \x1b[31m red"), "control-chars",
            "bell \x07 and escape \x1b[31m red"),
        Odd("dots-end.md", b"---\nid: dots-end\n...\nYAML document end marker\n", "dots-end", "YAML document end marker"),
        Odd("Weird Name (copy).md", b"A person's file name with spaces\n", "Weird-Name-copy", "A person's file name with spaces"),
    ]
