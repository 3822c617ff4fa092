"""The Python API (AgentMemory) on a real temp vault: fake embedder, real SQLite, real local Chroma."""

from __future__ import annotations

import re
import sqlite3
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from amem_cli import AgentMemory, Note, NoteBuilder
from amem_cli.errors import NotFoundError, UsageError
from amem_cli.markdown import parse_note
from conftest import index_rows, internals

LOCOMO_DATE = "1:56 pm on 8 May, 2023"


def read_file(mem: AgentMemory, note_id: str) -> Note:
    """The note as its file on disk says it is."""
    return parse_note((mem.path / f"{note_id}.md").read_text(encoding="utf-8"))


def same_fields(a: Note, b: Note) -> None:
    for f in ("id", "content", "keywords", "tags", "context", "created_at", "links", "backlinks", "boxes", "metadata"):
        assert getattr(a, f) == getattr(b, f), f


def ids(hits) -> list[str]:
    return [h.note.id for h in hits]


# -- add / get ---------------------------------------------------------------


def test_add_get_and_file_parse_back(memory):
    note = memory.add(
        "Alice prefers green tea over coffee",
        keywords=["Alice", "tea"],
        tags=["people", "#drinks"],
        context="A drink preference Alice mentioned.",
    )
    assert note.tags == ["people", "drinks"]
    got = memory.get(note.id)
    same_fields(got, note)
    same_fields(read_file(memory, note.id), note)
    assert (memory.path / f"{note.id}.md").read_text().startswith("---\nid: " + note.id)


def test_created_at_locomo_string(memory):
    note = memory.add("Caroline went to an LGBTQ support group", created_at=LOCOMO_DATE)
    expected = datetime(2023, 5, 8, 13, 56).astimezone()  # a naive time is local time
    assert note.created_at == expected
    assert memory.get(note.id).created_at == expected
    assert read_file(memory, note.id).created_at == expected
    assert note.id.startswith(expected.strftime("%Y%m%dT%H%M"))


@pytest.mark.parametrize(
    "value",
    [
        datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc),
        datetime(2023, 5, 8, 15, 56, tzinfo=timezone(timedelta(hours=2))),
    ],
    ids=["utc", "plus2"],
)
def test_created_at_aware_datetime(memory, value):
    note = memory.add("a dated note", created_at=value)
    for n in (note, memory.get(note.id), read_file(memory, note.id)):
        assert n.created_at == value  # the same instant
        assert n.created_at.utcoffset() == value.utcoffset()  # and the same offset


def test_created_at_naive_datetime_is_local(memory):
    note = memory.add("a naive note", created_at=datetime(2023, 5, 8, 13, 56))
    assert memory.get(note.id).created_at == datetime(2023, 5, 8, 13, 56).astimezone()


def test_bad_created_at(memory):
    with pytest.raises(UsageError, match="cannot read the date"):
        memory.add("x", created_at="the day after tomorrow-ish")
    assert not list(memory.path.glob("*.md"))


def test_metadata_kept_unchanged(memory):
    meta = {
        "speaker": "Caroline",
        "session": 3,
        "score": 0.5,
        "flag": True,
        "none": None,
        "looks_like_a_date": "2023-05-08",
        "looks_like_a_bool": "yes",
        "looks_like_a_number": "1e3",
        "unicode": "café ✓ 日本",
        "nested": {"turns": [1, 2, 3], "dia_id": "D1:3"},
    }
    note = memory.add("metadata survives", metadata=meta, boxes=["kept"])  # (amem records no filing of its own)
    assert note.metadata == meta
    assert memory.get(note.id).metadata == meta
    assert read_file(memory, note.id).metadata == meta
    assert memory.retrieve("metadata survives")[0].metadata == meta
    # ... and after a rebuild from the file alone.
    memory.reindex()
    assert memory.get(note.id).metadata == meta


def test_empty_content_rejected(memory):
    for bad in ("", "   \n\t"):
        with pytest.raises(UsageError, match="empty"):
            memory.add(bad)
    assert not list(memory.path.glob("*.md"))


def test_get_unknown(memory):
    with pytest.raises(NotFoundError):
        memory.get("20990101T000000000-dead")
    with pytest.raises(UsageError):
        memory.get("../etc/passwd")


# -- add_many ------------------------------------------------------------------


def test_add_many(memory):
    words = ["walrus", "zeppelin", "quokka", "origami", "sextant"]
    items = [
        {"content": f"session {i}: we talked about the {words[i - 1]}", "tags": ["chat"], "created_at": f"{i}:00 pm on 8 May, 2023",
         "metadata": {"turn": i}, "boxes": ["chats"]}
        for i in range(1, 6)
    ]
    notes = memory.add_many(items)
    assert [n.content for n in notes] == [i["content"] for i in items]
    assert len({n.id for n in notes}) == 5
    assert len(list(memory.path.glob("*.md"))) == 5
    for n, item in zip(notes, items):
        same_fields(memory.get(n.id), n)
        assert n.metadata == item["metadata"]
    assert ids(memory.search("quokka", mode="keyword"))[0] == notes[2].id
    assert memory.status().embedded == 5


def test_add_many_same_timestamp_gets_distinct_ids(memory):
    notes = memory.add_many([{"content": f"twin {i}", "created_at": LOCOMO_DATE} for i in range(4)])
    assert len({n.id for n in notes}) == 4
    assert len(list(memory.path.glob("*.md"))) == 4


def test_add_many_bad_item_writes_nothing(memory):
    with pytest.raises(UsageError, match="item 2"):
        memory.add_many([{"content": "fine"}, {"content": "x", "colour": "red"}])
    with pytest.raises(UsageError, match="empty"):
        memory.add_many([{"content": "fine"}, {"content": "  "}])
    with pytest.raises(UsageError, match="not a mapping"):
        memory.add_many([{"content": "fine"}, "just a string"])
    assert not list(memory.path.glob("*.md"))


# -- NoteBuilder / add_note ----------------------------------------------------------


def test_note_builder_then_add_note(memory):
    built = NoteBuilder().build(
        "Bob's favourite hiking trail is in the Alps",
        keywords=["Bob", "hiking"],
        tags=["outdoors"],
        context="Where Bob likes to hike.",
        boxes=["people"],
        created_at=LOCOMO_DATE,
        metadata={"source": "chat"},
    )
    assert isinstance(built, Note)
    assert not list(memory.path.glob("*.md"))  # building writes nothing
    saved = memory.add_note(built)
    assert saved.id == built.id
    same_fields(memory.get(built.id), built)
    same_fields(read_file(memory, built.id), built)
    assert ids(memory.search("hiking trail", boxes=["people"])) == [built.id]
    with pytest.raises(UsageError, match="exists already"):
        memory.add_note(built)


def test_note_builder_with_own_id(memory):
    note = memory.add_note(NoteBuilder().build("chosen id", id="my-note"))
    assert note.id == "my-note" and (memory.path / "my-note.md").is_file()
    assert memory.get("my-note").content == "chosen id"


def test_note_builder_rejects_empty():
    with pytest.raises(UsageError):
        NoteBuilder().build("  ")


# -- construction forms ----------------------------------------------------------------


def test_write_up_form_with_graph_and_chroma_paths(tmp_path):
    base = tmp_path / "memdir"
    with AgentMemory(chroma_path=str(base / "chroma_db"), graph_path=str(base / "graph.pkl"),
                     llm_model="some-model", embedder="fake") as mem:
        assert mem.path == base.resolve()
        assert mem.llm_model == "some-model"  # the GGUF file the pipeline would load
        note = mem.add("stored next to the graph file")
        assert (base / f"{note.id}.md").is_file()
        assert (base / ".amem" / "index.db").is_file()
        assert mem.retrieve("graph file")[0].id == note.id


def test_chroma_path_alone_is_the_vault(tmp_path):
    with AgentMemory(chroma_path=tmp_path / "db", embedder="fake") as mem:
        assert mem.path == (tmp_path / "db").resolve()
        mem.add("hello")
        assert len(list((tmp_path / "db").glob("*.md"))) == 1


def test_reopen_sees_same_notes(vault):
    with AgentMemory(vault, embedder="fake") as mem:
        a = mem.add("persisted across sessions: the blue notebook")
        before = [(h.note.id, round(h.score, 9)) for h in mem.search("blue notebook", top_k=3)]
    with AgentMemory(vault, embedder="fake") as mem:
        same_fields(mem.get(a.id), a)
        assert [(h.note.id, round(h.score, 9)) for h in mem.search("blue notebook", top_k=3)] == before


# -- retrieve / search -------------------------------------------------------------


@pytest.fixture
def topics(memory):
    """Five notes on different topics, with tags, boxes and dates to filter on."""
    data = [
        ("Alice prefers green tea over coffee in the morning", ["people", "drinks"], ["friends"], "2023-01-10"),
        ("The build server listens on port 8080 behind nginx", ["work"], ["infra"], "2023-03-05"),
        ("Bob keeps bees and sells honey at the market", ["people", "hobby"], ["friends"], "2023-06-20"),
        ("Quarterly report deadline is the last Friday of June", ["work"], [], "2023-06-01"),
        ("Carol is learning the violin and practises daily", ["people", "hobby"], ["friends", "music"], "2024-02-14"),
    ]
    notes = memory.add_many(
        {"content": c, "tags": t, "boxes": b, "created_at": d} for c, t, b, d in data
    )
    return {n.content.split()[0]: n for n in notes}  # Alice, The, Bob, Quarterly, Carol


def test_retrieve_returns_notes_best_first(memory, topics):
    got = memory.retrieve("green tea coffee", top_k=3)
    assert all(isinstance(n, Note) for n in got)
    assert len(got) == 3
    assert got[0].id == topics["Alice"].id
    assert len(memory.retrieve("anything at all", top_k=2)) <= 2


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_search_modes_find_the_note(memory, topics, mode):
    hits = memory.search("honey bees market", mode=mode)
    assert hits[0].note.id == topics["Bob"].id
    # Hybrid may add more evidence (graph); the single-list modes use only their list.
    if mode == "hybrid":
        assert {"keyword", "semantic"} <= set(hits[0].sources)
    else:
        assert set(hits[0].sources) == {mode}
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))


def test_search_filters(memory, topics):
    q = "people work hobby friends music"  # matches little; filters decide
    all_ids = {n.id for n in topics.values()}
    assert set(ids(memory.search(q, top_k=10, mode="semantic"))) == all_ids
    assert set(ids(memory.search(q, top_k=10, tags=["work"]))) == {topics["The"].id, topics["Quarterly"].id}
    assert set(ids(memory.search(q, top_k=10, tags=["people", "hobby"]))) == {topics["Bob"].id, topics["Carol"].id}
    assert set(ids(memory.search(q, top_k=10, tags=["#hobby"]))) == {topics["Bob"].id, topics["Carol"].id}
    assert set(ids(memory.search(q, top_k=10, boxes=["music"]))) == {topics["Carol"].id}
    assert set(ids(memory.search(q, top_k=10, boxes=["friends"], tags=["drinks"]))) == {topics["Alice"].id}
    since = datetime(2023, 6, 1).astimezone()
    until = datetime(2023, 12, 31).astimezone()
    assert set(ids(memory.search(q, top_k=10, since=since))) == {
        topics["Bob"].id, topics["Quarterly"].id, topics["Carol"].id}
    assert set(ids(memory.search(q, top_k=10, since=since, until=until))) == {topics["Bob"].id, topics["Quarterly"].id}
    assert ids(memory.search(q, top_k=10, tags=["nope"])) == []
    # Keyword mode honours the filters too.
    assert ids(memory.search("people", mode="keyword", tags=["work"])) == []
    assert ids(memory.search("green tea", mode="keyword", tags=["people"]))[0] == topics["Alice"].id
    assert set(ids(memory.search("green tea", mode="keyword", tags=["people"], top_k=10))) <= {
        topics["Alice"].id, topics["Bob"].id, topics["Carol"].id}


def test_search_limit_and_bad_input(memory, topics):
    assert len(memory.search("the", top_k=2, mode="semantic")) == 2
    with pytest.raises(UsageError, match="empty"):
        memory.search("   ")
    with pytest.raises(UsageError, match="unknown search mode"):
        memory.search("tea", mode="fuzzy")
    with pytest.raises(UsageError):
        memory.search("tea", top_k=0)


def test_search_on_empty_vault(memory):
    assert memory.search("anything") == []
    assert memory.retrieve("anything") == []


def test_query_text_cannot_break_full_text_search(memory, topics):
    for q in ['"unbalanced', "tea AND NOT coffee", "port:8080", "NEAR(a b)", "*", "(", "tea OR", "-honey"]:
        memory.search(q, mode="keyword")  # no exception
    assert ids(memory.search("port:8080", mode="keyword"))[0] == topics["The"].id


def test_search_since_accepts_a_string_like_created_at(memory, topics):
    got = set(ids(memory.search("people", top_k=10, since="2023-06-01")))
    assert got == {topics["Bob"].id, topics["Quarterly"].id, topics["Carol"].id}


def test_a_single_string_tag_is_one_tag(memory):
    note = memory.add("one tag given as a string", tags="work", keywords="tea")
    assert note.tags == ["work"] and note.keywords == ["tea"]


# -- build_context -----------------------------------------------------------------


def test_build_context(memory):
    a = memory.add("Caroline went to an LGBTQ support group", created_at=LOCOMO_DATE,
                   keywords=["Caroline", "support group"], tags=["event"], context="Caroline's week.")
    b = memory.add("Melanie painted a sunrise", created_at=datetime(2023, 5, 9, 9, 5))
    text = memory.build_context("Caroline support group Melanie sunrise", top_k=2)
    assert f"[{a.id}] 2023-05-08 13:56" in text
    assert f"[{b.id}] 2023-05-09 09:05" in text
    assert "Caroline went to an LGBTQ support group" in text and "Melanie painted a sunrise" in text
    assert "Context: Caroline's week." in text
    assert "Keywords: Caroline, support group" in text and "Tags: event" in text
    assert memory.build_context([]) == ""


# -- delete ------------------------------------------------------------------------


def _linked_pair(memory) -> tuple[Note, Note, Note]:
    """a and c link b (b holds both backlinks); c links a too. Built with known ids, so
    no file has to be edited by hand."""
    build = NoteBuilder().build
    a = build("a note that links the target", id="note-a")
    b = build("the target note about lighthouses", id="note-b")
    c = build("another referrer", id="note-c")
    a.links, b.backlinks, c.links, a.backlinks = [b.id], [a.id, c.id], [b.id, a.id], [c.id]
    for n in (b, a, c, build("unrelated", id="note-d")):
        memory.add_note(n)
    assert memory.get(b.id).backlinks == [a.id, c.id]
    return a, b, c


def test_delete_removes_file_index_vector_and_links(memory):
    a, b, c = _linked_pair(memory)
    assert b.id in ids(memory.search("lighthouses", mode="semantic"))
    removed = memory.delete(b.id)
    assert removed.id == b.id
    assert not (memory.path / f"{b.id}.md").exists()
    with pytest.raises(NotFoundError):
        memory.get(b.id)
    assert b.id not in ids(memory.search("lighthouses", top_k=10))
    assert b.id not in ids(memory.search("lighthouses", top_k=10, mode="semantic"))
    # Referrers lose the link, in the index and in their files; other links stay.
    assert memory.get(a.id).links == [] and read_file(memory, a.id).links == []
    assert memory.get(c.id).links == [a.id] and read_file(memory, c.id).links == [a.id]
    assert index_rows(memory.path, f"SELECT count(*) FROM links WHERE dst = '{b.id}'") == [(0,)]
    # The vector itself is gone from Chroma (after the flush a search triggers).
    assert b.id not in {i for i, _ in internals(memory).vectors.query([[1.0] + [0.0] * 255], 50)[0]}


def test_delete_removes_backlinks_of_the_deleted_note(memory):
    a, b, c = _linked_pair(memory)
    memory.delete(a.id)
    assert memory.get(b.id).backlinks == [c.id]
    assert read_file(memory, b.id).backlinks == [c.id]
    assert memory.get(c.id).links == [b.id] and read_file(memory, c.id).links == [b.id]


def test_delete_unknown(memory):
    with pytest.raises(NotFoundError):
        memory.delete("20990101T000000000-dead")


# -- files are the truth ---------------------------------------------------------------


def test_hand_edit_is_picked_up_by_next_search(memory):
    # Keywords, context and tags given, so that only the content holds "room alpha".
    note = memory.add("The meeting is on Tuesday in room alpha", keywords=["meeting"], tags=["work"], context="When we meet.")
    other = memory.add("Lunch is at noon in the cafeteria")
    path = memory.path / f"{note.id}.md"
    path.write_text(path.read_text().replace("Tuesday in room alpha", "Thursday in the zeppelin hangar"))
    memory.sync()  # a long-lived process hears of edits within ~0.05 s; sync() is at once
    assert ids(memory.search("zeppelin hangar", mode="keyword")) == [note.id]
    assert memory.search("zeppelin hangar", mode="semantic")[0].note.id == note.id  # re-embedded
    assert memory.search("room alpha", mode="keyword") == []
    assert memory.get(note.id).content == "The meeting is on Thursday in the zeppelin hangar"
    assert memory.get(other.id).content == "Lunch is at noon in the cafeteria"


def test_edits_by_others_are_seen_without_sync(memory):
    """The API watches the folder: an edit, a new file in a new folder and a deletion
    reach the index within moments, with no scan of the whole vault per call."""
    note = memory.add("The meeting is on Tuesday in room alpha", keywords=["meeting"], tags=["work"], context="When we meet.")
    gone = memory.add("a note about otters")
    memory.search("warm up")  # the first call looks at every file; later ones at what changed
    path = memory.path / f"{note.id}.md"
    path.write_text(path.read_text().replace("Tuesday in room alpha", "Thursday in the zeppelin hangar"))
    (memory.path / gone.id).with_suffix(".md").unlink()
    (memory.path / "new" / "deeper").mkdir(parents=True)
    (memory.path / "new" / "deeper" / "walrus.md").write_text("A walrus on the ice floe\n")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        found = (ids(memory.search("zeppelin hangar", mode="keyword")), ids(memory.search("walrus ice", mode="keyword")),
                 ids(memory.search("otters", mode="keyword")))
        if found == ([note.id], ["walrus"], []):
            break
        time.sleep(0.05)
    assert found == ([note.id], ["walrus"], [])


def test_hand_edit_of_frontmatter_is_picked_up(memory):
    note = memory.add("a note to retag", tags=["old"], boxes=["mine"])
    path = memory.path / f"{note.id}.md"
    path.write_text(path.read_text().replace("tags:\n- old", "tags:\n- new\n- shiny").replace(
        "metadata: {}", "metadata:\n  owner: me"))
    memory.sync()
    assert ids(memory.search("retag", tags=["shiny"])) == [note.id]
    assert memory.search("retag", tags=["old"]) == []
    assert memory.get(note.id).metadata == {"owner": "me"}


def test_files_added_and_removed_by_hand(memory):
    kept = memory.add("kept note")
    gone = memory.add("soon gone")
    (memory.path / gone.id).with_suffix(".md").unlink()
    (memory.path / "sub").mkdir()
    (memory.path / "sub" / "plain.md").write_text("A plain Markdown file without frontmatter about walruses\n")
    memory.sync()
    assert ids(memory.search("walruses", mode="keyword")) == ["plain"]
    assert memory.search("walruses", mode="semantic")[0].note.id == "plain"
    with pytest.raises(NotFoundError):
        memory.get(gone.id)
    assert memory.get(kept.id).content == "kept note"
    assert memory.get("plain").content.startswith("A plain Markdown file")


def test_bad_yaml_is_reported_and_others_still_index(memory):
    good = memory.add("a good note about kayaks")
    bad = memory.path / "bad.md"
    bad.write_text("---\nid: bad\ntags: [unclosed\n---\nbody about kayaks\n")
    before = bad.read_bytes()
    (memory.path / "later.md").write_text("---\ntags: [fine]\n---\nanother good note about kayaks\n")
    problems = memory.sync().errors
    assert any(p.startswith("bad.md:") and "YAML" in p for p in problems), problems
    hits = ids(memory.search("kayaks", top_k=10))
    assert set(hits) == {good.id, "later"}
    assert bad.read_bytes() == before  # never rewritten
    status = memory.status()
    assert status.indexed == 2 and any("bad.md" in e for e in status.errors)
    # Fixing the file by hand gets it indexed.
    bad.write_text("---\nid: bad\ntags: [closed]\n---\nbody about kayaks\n")
    memory.sync()
    assert set(ids(memory.search("kayaks", top_k=10))) == {good.id, "later", "bad"}
    assert memory.status().errors == []


def test_rebuild_from_files_loses_nothing(vault):
    with AgentMemory(vault, embedder="fake") as mem:
        notes = mem.add_many({"content": f"note number {i} about {w}", "tags": [w], "metadata": {"i": i}}
                             for i, w in enumerate(["apples", "boats", "clouds", "dunes"]))
        before = [(h.note.id, h.score) for h in mem.search("boats clouds", top_k=4)]
    import shutil

    shutil.rmtree(vault / ".amem")
    with AgentMemory(vault, embedder="fake") as mem:
        report = mem.reindex()
        assert report.notes == report.embedded == 4 and not report.errors
        for n in notes:
            same_fields(mem.get(n.id), n)
        assert [(h.note.id, h.score) for h in mem.search("boats clouds", top_k=4)] == before
    con = sqlite3.connect(vault / ".amem" / "index.db")
    try:
        assert con.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone() == ("hash:256",)
    finally:
        con.close()


def test_context_manager_closes(vault):
    with AgentMemory(vault, embedder="fake") as mem:
        mem.add("x")
    with pytest.raises(sqlite3.ProgrammingError):  # its index is closed
        mem.notes()


def test_unknown_embedder(vault):
    with pytest.raises(UsageError, match="unknown embedder"):
        AgentMemory(vault, embedder="word2vec")


def test_vault_path_is_resolved(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with AgentMemory("relative-vault", embedder="fake") as mem:
        assert mem.path == (tmp_path / "relative-vault").resolve()
        assert isinstance(mem.path, Path)


def test_repeated_searches_are_cached_until_anything_is_written(vault):
    with AgentMemory(vault, embedder="fake") as first, AgentMemory(vault, embedder="fake") as second:
        first.add("a note about kestrels hovering")
        hits = first.search("kestrels")
        hits[0].note.tags.append("scribbled")  # a caller's change to a result stays its own
        assert first.search("kestrels")[0].note.tags == hits[0].note.tags[:-1]
        assert len(internals(first).search._results) == 1  # the second search was answered from memory
        first.add("another kestrel note")  # a write by this process
        assert len(first.search("kestrels")) == 2
        second.add("a third kestrel, written by another connection")
        assert len(first.search("kestrels")) == 3


def test_build_context_and_search_floor_leave_unrelated_notes_out(memory):
    """`build_context` (and `search(..., floor=True)`) give only the notes the query
    matched; `retrieve` still fills top_k, as the A-MEM write-up's API does."""
    bees, tea, port = (memory.add(text).id for text in (
        "Bob keeps bees and sells honey at the market", "Alice prefers green tea over coffee",
        "The build server listens on port 8080"))
    block = memory.build_context("bees honey")
    assert re.findall(r"^\[(\S+)\] ", block, re.M) == [bees]
    assert memory.build_context("zeppelin airship") == ""
    assert [h.note.id for h in memory.search("bees honey", top_k=5, floor=True)] == [bees]
    assert memory.search("a", top_k=5, floor=True) == []
    assert {n.id for n in memory.retrieve("zeppelin airship", top_k=3)} == {bees, tea, port}


def test_the_current_fact_comes_first_in_python(memory):
    """Issue 38's two cases through `AgentMemory`: the newer note first and the older one
    marked in `search`; `build_context` gives the current note with what it replaces,
    the chain with `history=True`, and as things stood with `as_of`."""
    old = memory.add("Events gateway cut-over scheduled for April 15, 22:00 UTC.", created_at="2024-03-04T10:00")
    memory.add("The CDN purges run every night at 02:00.", created_at="2024-03-11T10:00")
    cache = memory.add("Decided to cache API responses with a 10-minute TTL.", created_at="2024-03-01T10:00")
    new = memory.add("Events gateway cut-over is April 10, not April 15.", created_at="2024-03-28T10:00")
    changed = memory.add("Caching decision changed (Mar 19): we now cache API responses for 60 minutes, not 10.",
                         created_at="2024-03-19T10:00")
    assert new.supersedes == [old.id] and changed.supersedes == [cache.id]
    for query, (before, after) in (("when is the events gateway cut-over?", (old, new)),
                                   ("what did we decide about caching?", (cache, changed))):
        hits = memory.search(query, 5, floor=True)
        ids = [h.note.id for h in hits]
        assert ids.index(after.id) < ids.index(before.id)
        assert hits[ids.index(before.id)].replaced_by[0]["id"] == after.id
        block = memory.build_context(query)
        assert f"\n[{after.id}] " in block and f"(replaces {before.id} of " in block and f"\n[{before.id}] " not in block
        assert "(superseded " in memory.build_context(query, history=True)
    assert f"\n[{old.id}] " in memory.build_context("when is the events gateway cut-over?", as_of="2024-03-20")
    assert memory.get(old.id).superseded_by == [new.id]
    memory.supersede(old.id, new.id, undo=True)
    assert memory.get(old.id).superseded_by == [] and memory.supersede_suggestions() == []


def test_a_person_s_restated_value_supersedes_past_a_model_s_long_answers(vault):
    """The notes a new one is compared with are those that may change: a model's long
    answers, which repeat the person's words more than the person did, take no place
    among them, so the person's own earlier statement is found (no links: the full text
    alone finds the candidates)."""
    with AgentMemory(vault, embedder="fake", max_links=0) as memory:
        old = memory.add("user: By the way, I've had my sourdough starter going for 3 weeks now, and it's been "
                         "rising nicely every morning - do you have any tips for getting a more sour flavour into "
                         "the bread?", created_at="2024-03-20T10:00")
        for n in range(9):
            memory.add(f"assistant: Time flies! A sourdough starter going for weeks is a great sign ({n}). A starter "
                       "that has been going for several weeks has a stable culture: feed the sourdough starter less "
                       "often, keep the starter going in a cooler spot, and the weeks of going will give the bread a "
                       "more sour taste.", created_at=f"2024-03-{n + 21}T10:00")
        new = memory.add("user: I just realized I've had my sourdough starter going for 7 weeks now - time flies!",
                         created_at="2024-04-10T10:00")
        assert new.supersedes == [old.id]


def test_the_older_notes_compared_are_those_sharing_most_words_not_the_oldest(vault):
    """Of the older notes the full text finds, the best matches are compared, whatever
    their dates: six older notes sharing one word do not crowd out the one that states
    what changed."""
    with AgentMemory(vault, embedder="fake", max_links=0) as memory:
        for n, text in enumerate(["Lunch with people from design.", "Met people at the meetup.",
                                  "Booked the room for people on Friday.", "Two people asked about the lodge.",
                                  "The lake was frozen this morning.", "Team photo with everyone."]):
            memory.add(text, created_at=f"2024-03-0{n + 1}T10:00")
        old = memory.add("The team offsite is booked for 12 people at the lake lodge.", created_at="2024-03-10T10:00")
        new = memory.add("Offsite headcount changed: now 15 people at the lake lodge.", created_at="2024-03-20T10:00")
        assert new.supersedes == [old.id]


# -- now: the moment a query is asked ---------------------------------------------------


def test_now_reads_relative_times_in_retrieve_search_and_build_context(memory):
    march = memory.add("Booked a table at the Italian place", created_at="2024-03-04T12:00")
    april = memory.add("Booked a table at the Thai place", created_at="2024-04-01T12:00")
    query = "the table I booked four weeks ago"
    assert ids(memory.search(query, 2, now="2024-04-29")) == [april.id, march.id]
    assert [n.id for n in memory.retrieve(query, 2, now=datetime(2024, 4, 1, 18, 0))] == [march.id, april.id]
    block = memory.build_context(query, top_k=1, now="2024-04-01")
    assert block.count(f"[{march.id}] ") == 1 and f"[{april.id}] " not in block
    with pytest.raises(UsageError, match="cannot read the date"):
        memory.retrieve(query, now="someday")
