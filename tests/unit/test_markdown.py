from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amem_cli.errors import NoteFormatError
from amem_cli.markdown import parse_note, render_note
from amem_cli.models import Note

# Text a note may hold: any printable text; line ends are normalised to LF on parse.
_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\n\t"), max_size=300)
_word = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=30).map(
    lambda s: " ".join(s.split())
).filter(bool)
_when = st.datetimes(
    min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(timezone.utc)
).map(lambda d: d.replace(microsecond=0))
_scalar = st.one_of(st.integers(-10**6, 10**6), st.booleans(), _word, st.none())


@st.composite
def notes(draw) -> Note:
    return Note(
        id=draw(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,20}", fullmatch=True)),
        content=draw(_text),
        keywords=draw(st.lists(_word, max_size=5, unique=True)),
        tags=draw(st.lists(_word.filter(lambda s: not s.startswith("#")), max_size=4, unique=True)),
        context=draw(st.one_of(st.just(""), _word)),
        created_at=draw(_when),
        updated_at=draw(_when),
        links=draw(st.lists(st.from_regex(r"[a-z0-9]{1,10}", fullmatch=True), max_size=3, unique=True)),
        backlinks=draw(st.lists(st.from_regex(r"[a-z0-9]{1,10}", fullmatch=True), max_size=3, unique=True)),
        boxes=draw(st.lists(_word, max_size=3, unique=True)),
        metadata=draw(st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True), _scalar, max_size=4)),
        extra=draw(st.dictionaries(st.from_regex(r"x_[a-z]{1,8}", fullmatch=True), _scalar, max_size=2)),
    )


@settings(max_examples=300, deadline=None)
@given(notes())
def test_round_trip(note):
    note.content = note.content.replace("\r", "")
    text = render_note(note)
    parsed = parse_note(text)
    assert parsed == note
    assert render_note(parsed) == text


def test_unknown_keys_survive_and_keep_order():
    # Not in sorted order, at the top level or nested: dict equality would not see a reordering.
    text = "---\nid: a1\ntitle: My title\ncustom:\n  zeta: 1\n  alpha: 2\naliases: [x]\n---\nBody\n"
    note = parse_note(text)
    assert note.extra == {"title": "My title", "custom": {"zeta": 1, "alpha": 2}, "aliases": ["x"]}
    assert list(note.extra) == ["title", "custom", "aliases"]
    rendered = render_note(note)
    assert rendered.index("title:") < rendered.index("custom:") < rendered.index("aliases:")
    assert rendered.index("zeta:") < rendered.index("alpha:")
    again = parse_note(rendered)
    assert list(again.extra) == ["title", "custom", "aliases"]
    assert list(again.extra["custom"]) == ["zeta", "alpha"]


def test_crlf_and_bom_parse():
    text = "\ufeff---\r\nid: a1\r\ntags: [x, y]\r\n---\r\nLine one\r\nLine two\r\n"
    note = parse_note(text)
    assert note.id == "a1"
    assert note.tags == ["x", "y"]
    assert note.content == "Line one\nLine two"


def test_wiki_links_in_file():
    note = Note(id="a", content="x", links=["b"], backlinks=["c"])
    text = render_note(note)
    assert "'[[b]]'" in text and "'[[c]]'" in text
    assert parse_note(text).links == ["b"]


def test_tags_are_a_yaml_list():
    text = render_note(Note(id="a", content="x", tags=["one", "two"]))
    assert "tags:\n- one\n- two\n" in text


def test_no_frontmatter_uses_fallback_id():
    note = parse_note("just text\n", fallback_id="my-note")
    assert note.id == "my-note" and note.content == "just text"


def test_rule_in_body_is_content():
    note = parse_note("---\nid: a\n---\nabove\n---\nbelow\n")
    assert note.content == "above\n---\nbelow"


@pytest.mark.parametrize(
    "text, line",
    [
        ("---\nid: a\ntags: [x\n---\nbody\n", 4),
        ("---\nid: a\n  bad: indent\n---\n", 3),
        ("---\nid: a\n", 1),
        ("---\n- a\n- b\n---\n", 2),
    ],
)
def test_bad_frontmatter_reports_line(text, line):
    with pytest.raises(NoteFormatError) as exc:
        parse_note(text, path="n.md")
    assert exc.value.path == "n.md"
    assert exc.value.line == line


def test_python_tags_are_not_executed():
    with pytest.raises(NoteFormatError):
        parse_note("---\nid: !!python/object/apply:os.system ['echo hi']\n---\nx\n")


def test_dates_with_offsets():
    note = parse_note("---\nid: a\ncreated: 2023-05-08T13:56:00+02:00\n---\nx\n")
    assert note.created_at == datetime(2023, 5, 8, 11, 56, tzinfo=timezone.utc)
