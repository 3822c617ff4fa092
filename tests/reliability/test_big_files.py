"""One large note file must not stall the vault. 95,000 keywords in one file took 79 s
to parse (each was looked for in the list so far: quadratic), and every command and
every rewrite of the file paid it again. A file of the most a note may be (2 MiB), of
each list a frontmatter can grow, parses, indexes and is rewritten in bounded time.

The bounds are on CPU time, so a loaded machine (or pytest-xdist's workers sharing two
cores) does not fail them; `benchmarks/big_files.py` prints the figures (about 0.5 s to
parse each shape here). A step still running after six times its bound of wall-clock
time is stopped, so a quadratic step fails the test in minutes, not in an hour."""

from __future__ import annotations

import json
import signal
import time
from contextlib import contextmanager

import pytest

from amem_cli.markdown import parse_note
from amem_cli.vault import MAX_NOTE_BYTES

PARSE_BOUND = 5.0  # seconds
# A command: sync, index, embed (the fake embedder hashes every word) and write; ~3-8 s
# here on a loaded machine, where one parse took minutes before.
COMMAND_BOUND = 30.0
STOP = 6  # wall-clock multiple of a bound after which a step is stopped


class _Overrun(Exception):
    pass


@contextmanager
def bounded(seconds: float, what: str):
    """Fail if the block spends more than `seconds` of CPU; stop it after six times that
    of wall-clock time."""
    def stop(*_):
        raise _Overrun

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, STOP * seconds)
    start = time.process_time()
    try:
        yield
    except _Overrun:  # raised wherever the step was (in C, even): its traceback says nothing
        pytest.fail(f"{what} ran past {STOP * seconds:.0f} s and was stopped", pytrace=False)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    took = time.process_time() - start
    assert took < seconds, f"{what} took {took:.1f} s of CPU"


def _listed(key: str, items: list[str]) -> str:
    return f"---\nid: big\n{key}:\n" + "".join(f"- {x}\n" for x in items) + "---\nA note that grew large.\n"


def _words(prefix: str, width: int, line: int | None = None) -> list[str]:
    """Distinct items of `width` characters, as many lines of `line` bytes (default: the
    item in a YAML list) as fill a note file."""
    return [f"{prefix}{n:0{width - len(prefix)}d}" for n in range((MAX_NOTE_BYTES - 4096) // (line or width + 3))]


SHAPES = {
    "keywords": lambda: _listed("keywords", _words("kw", 18)),
    "tags": lambda: _listed("tags", _words("tag", 18)),
    "boxes": lambda: _listed("boxes", _words("box", 18)),
    "links": lambda: _listed("links", [f"'[[{w}]]'" for w in _words("n", 16, 25)]),
    "backlinks": lambda: _listed("backlinks", [f"'[[{w}]]'" for w in _words("n", 16, 25)]),
}  # (a big `metadata` map or body was never quadratic: the benchmark measures those)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_2_mib_frontmatter_of_each_shape_parses_in_bounded_time(shape):
    text = SHAPES[shape]()
    assert MAX_NOTE_BYTES - 100_000 < len(text.encode()) <= MAX_NOTE_BYTES
    with bounded(PARSE_BOUND, f"parsing {shape}"):
        note = parse_note(text, path="big.md")
    assert note.id == "big"
    assert len(getattr(note, shape)) > 80_000


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")
def test_95000_keywords_index_search_and_rewrite_in_bounded_time(vault, run):
    keywords = _words("kw", 18)
    assert len(keywords) >= 95_000
    big = vault / "big.md"
    big.write_text(_listed("keywords", keywords), encoding="utf-8")
    with bounded(COMMAND_BOUND, "indexing the file"):
        listed = run("list", "--json")
    assert listed.exit_code == 0, listed.output
    assert [n["id"] for n in json.loads(listed.stdout)] == ["big"]

    with bounded(COMMAND_BOUND, "a search"):  # the first to embed the note
        found = run("search", keywords[-1], "--json")
    assert [h["id"] for h in json.loads(found.stdout)] == ["big"]

    with bounded(COMMAND_BOUND, "a rewrite of the file"):  # its `next` is set: amem reads, changes and writes it
        added = run("add", "A small note after the big one.", "--after", "big")
    assert added.exit_code == 0, added.output
    rewritten = parse_note(big.read_text(encoding="utf-8"))
    assert rewritten.next == added.stdout.strip()
    assert rewritten.keywords == keywords  # every keyword kept, in order
