"""Links as people write them, and the notes they name. Pure: no I/O.

A link is written the way Obsidian, zk and basic-memory let a person write it:
`[[id]]`, `[[File Name]]`, `[[folder/File Name.md]]`, `[[Title|shown text]]`,
`[[Note#Heading]]`, `[[Note#^block]]`, `[shown text](id)`, or a bare id. It names the
note whose id it is, else the note at that path or with that file name (without `.md`),
else the note whose frontmatter declares it as `title` or one of its `aliases`; letter
case aside. The file keeps what the person wrote; the index and doctor resolve it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

# How strongly a name belongs to a note: the lowest rank wins.
ID, PATH, FILE_NAME, TITLE = 0, 1, 2, 3
TITLE_KEYS = ("title", "aliases", "alias")

# Bounded lengths and no brackets inside: each scan stops at the next bracket, so a
# 2 MiB line of `[` is read in linear time.
_WIKI = re.compile(r"!?\[\[([^\[\]\n]{1,500})\]\]")
_MARKDOWN = re.compile(r"(?<!!)\[[^\[\]\n]{0,500}\]\(\s*(<[^<>\n]{1,500}>|[^()\s]{1,500})(?:\s+\"[^\"\n]{0,500}\")?\s*\)")
_LEADING = re.compile(r"^(?:\.{1,2}/|/)+")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # https:, mailto:, file: ... not a note
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"`[^`\n]*`")


def target(written: str) -> str:
    """The note a link names, as written: `[[Project Plan#Goals|the plan]]` -> `Project Plan`
    ('' when it names none, e.g. `[[#Heading]]` or a web address)."""
    text = written.strip()
    if m := _WIKI.fullmatch(text):
        text = m.group(1)
    elif m := _MARKDOWN.fullmatch(text):
        text = m.group(1).strip("<>")
        if _SCHEME.match(text):
            return ""
        text = unquote(text.split("#", 1)[0])  # `Project%20Plan.md`
    text = text.split("|", 1)[0].split("#", 1)[0]
    return text.rstrip("\\").strip()  # `[[a\|b]]`: the pipe escaped in a Markdown table


def key(name: str) -> str:
    """A target or a note's name as compared: `./Folder/Project  Plan.md` -> `folder/project plan`."""
    text = name if name.isascii() else unicodedata.normalize("NFC", name)
    text = text.replace("\\", "/").strip()
    if text.startswith((".", "/")):
        text = _LEADING.sub("", text)  # `../Note.md` from a subfolder: its file name still names it
    if text[-3:].lower() == ".md":
        text = text[:-3]
    return " ".join(text.split()).casefold()


def names(note_id: str, path: str, extra: Mapping[str, Any]) -> dict[str, int]:
    """{name key: rank} of every name a note answers to: its id, its path and each
    shorter ending of it (`a/b/Note.md`: `a/b/note`, `b/note`), its file name, and the
    titles and aliases its frontmatter declares."""
    out = {key(note_id): ID}
    parts = key(path).split("/")
    for i in range(len(parts)):
        out.setdefault("/".join(parts[i:]), PATH if i < len(parts) - 1 else FILE_NAME)
    for title in titles(extra):
        out.setdefault(key(title), TITLE)
    out.pop("", None)
    return out


def titles(extra: Mapping[str, Any]) -> list[str]:
    """The titles and aliases a note's frontmatter declares (`title:`, `aliases:`)."""
    out: list[str] = []
    for name in TITLE_KEYS:
        value = extra.get(name)
        for item in [value] if isinstance(value, str) else value if isinstance(value, list) else []:
            if isinstance(item, str) and item.strip():
                out.append(item)
    return out


def best(candidates: Iterable[tuple[int, str]], written_target: str) -> str | None:
    """The note a target names among (rank, note id) candidates: the strongest rank, then
    the note whose id is the target exactly (case counts), then the smallest id."""
    ranked = sorted(candidates, key=lambda c: (c[0], c[1] != written_target, c[1]))
    return ranked[0][1] if ranked else None


class NameTable:
    """Every note's names, to resolve links without the index (doctor reads the files)."""

    def __init__(self) -> None:
        self._notes: dict[str, list[tuple[int, str]]] = {}

    def add(self, note_id: str, path: str, extra: Mapping[str, Any]) -> None:
        for name, rank in names(note_id, path, extra).items():
            self._notes.setdefault(name, []).append((rank, note_id))

    def resolve(self, written: str | None) -> str | None:
        """The id of the note a written link names, or None."""
        if not written:
            return None
        aim = target(written)
        return best(self._notes.get(key(aim), ()), aim) if aim else None


def body_links(content: str) -> list[str]:
    """The links written in a note's text, as written, outside code: `[[...]]` (embeds
    `![[...]]` too) and Markdown links `[text](target)` that are not web addresses or
    images."""
    if "[" not in content:
        return []
    text = _outside_code(content) if "`" in content or "~~~" in content else content
    found = [*(m.group(0) for m in _WIKI.finditer(text)), *(m.group(0) for m in _MARKDOWN.finditer(text))]
    return [w for w in found if target(w)]


def _outside_code(text: str) -> str:
    """The text without fenced code blocks and inline code spans."""
    kept, fence = [], ""
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        kept.append(_INLINE_CODE.sub("", line) if "`" in line else line)
    return "\n".join(kept)
