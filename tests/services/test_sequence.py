"""Sequence links (Folgezettel) and the retrieval that uses them, through the Python API:
fake embedder, real SQLite, real local Chroma."""

from __future__ import annotations

import re
import shutil
from datetime import datetime

import pytest

from amem_cli import AgentMemory, Note, NoteBuilder
from amem_cli.errors import AmemError, NotFoundError, UsageError
from amem_cli.markdown import parse_note, render_note
from amem_cli.services.block import PREAMBLE, estimate_tokens, note_block
from amem_cli.services.search import MODES, SearchService
from conftest import index_rows, isolate

# Unrelated notes, so BM25 has a corpus to weigh words against (FTS5 gives a word in
# more than half of the notes an IDF of ~0).
FILLER = [
    "The weather in Oslo was rainy all week",
    "Bob repaired the bicycle chain before the race",
    "A recipe for lentil soup with cumin and lemon",
    "The quarterly report is due on Friday afternoon",
    "Dana adopted a grey cat named Pixel",
    "Train tickets to Lyon were cheap in the spring",
    "The garden needs more tomatoes this year",
    "Eli practises the violin every evening",
]


def add_filler(mem: AgentMemory) -> list[str]:
    """Unlinked notes dropped into the vault as files (the next call indexes them)."""
    build = NoteBuilder().build
    out = []
    for n, text in enumerate(FILLER, 1):
        note = build(text, created_at=datetime(2022, 1, n, 9, 0))
        (mem.path / f"{note.id}.md").write_text(render_note(note), encoding="utf-8")
        out.append(note.id)
    return out


def read_file(mem: AgentMemory, note_id: str) -> Note:
    return parse_note((mem.path / f"{note_id}.md").read_text(encoding="utf-8"))


def raw(mem: AgentMemory, note_id: str) -> str:
    return (mem.path / f"{note_id}.md").read_text(encoding="utf-8")


def ids(hits) -> list[str]:
    return [h.note.id for h in hits]


def chain_of(mem: AgentMemory, note_id: str) -> list[str]:
    """The ids from note_id following `next` to the end (stops on a loop)."""
    out = [note_id]
    while (nxt := mem.get(out[-1]).next) is not None and nxt not in out:
        out.append(nxt)
    return out


def assert_links(mem: AgentMemory, note_id: str, previous: str | None, next: str | None) -> None:
    """previous/next agree in the index, in the parsed file, and in the file's text."""
    for n in (mem.get(note_id), read_file(mem, note_id)):
        assert (n.previous, n.next) == (previous, next), n.id
    text = raw(mem, note_id)
    for key, value in (("previous", previous), ("next", next)):
        lines = [ln for ln in text.split("\n---\n")[0].splitlines() if ln.startswith(f"{key}:")]
        assert lines == ([f"{key}: '[[{value}]]'"] if value else []), (note_id, key, lines)


TURNS = [
    {"content": "Caroline: I went to the LGBTQ support group yesterday", "created_at": "2023-05-08T13:56"},
    {"content": "Melanie: How did it feel to be there?", "created_at": "2023-05-08T13:57"},
    {"content": "Caroline: Powerful. The stories moved me", "created_at": "2023-05-08T13:58"},
]


# -- chaining ------------------------------------------------------------------


def test_add_many_chains_in_order(memory):
    a, b, c = memory.add_many(TURNS)
    assert [n.content for n in (a, b, c)] == [t["content"] for t in TURNS]
    assert (a.previous, a.next) == (None, b.id)
    assert (b.previous, b.next) == (a.id, c.id)
    assert (c.previous, c.next) == (b.id, None)
    assert_links(memory, a.id, None, b.id)
    assert_links(memory, b.id, a.id, c.id)
    assert_links(memory, c.id, b.id, None)
    assert chain_of(memory, a.id) == [a.id, b.id, c.id]


def test_chain_survives_reopening_and_a_rebuilt_index(memory, vault):
    a, b, c = memory.add_many(TURNS)
    memory.close()
    with AgentMemory(vault, embedder="fake") as again:
        assert chain_of(again, a.id) == [a.id, b.id, c.id]
        assert again.get(c.id).previous == b.id
    # The files are the truth: with the index gone, the chain comes back from them.
    shutil.rmtree(vault / ".amem")
    with AgentMemory(vault, embedder="fake") as rebuilt:
        assert chain_of(rebuilt, a.id) == [a.id, b.id, c.id]
        assert [rebuilt.get(i).previous for i in (a.id, b.id, c.id)] == [None, a.id, b.id]


def test_add_many_one_item_has_no_links(memory):
    (only,) = memory.add_many([{"content": "alone"}])
    assert_links(memory, only.id, None, None)


def test_add_after_inserts_into_an_existing_chain(memory):
    a, b = memory.add_many(TURNS[:2])
    new = memory.add("Caroline: (a message sent in between)", after=a.id)
    assert (new.previous, new.next) == (a.id, b.id)
    assert_links(memory, a.id, None, new.id)
    assert_links(memory, new.id, a.id, b.id)
    assert_links(memory, b.id, new.id, None)
    assert chain_of(memory, a.id) == [a.id, new.id, b.id]


def test_add_after_the_tail_extends_the_chain(memory):
    a, b = memory.add_many(TURNS[:2])
    new = memory.add("Caroline: one more thing", after=b.id)
    assert_links(memory, b.id, a.id, new.id)
    assert_links(memory, new.id, b.id, None)


def test_add_after_a_lone_note(memory):
    a = memory.add("first thought")
    b = memory.add("second thought", after=a.id)
    assert_links(memory, a.id, None, b.id)
    assert_links(memory, b.id, a.id, None)


def test_add_many_after_continues_a_chain(memory):
    a, b = memory.add_many(TURNS[:2])
    c, d = memory.add_many([{"content": "third turn"}, {"content": "fourth turn"}], after=b.id)
    assert chain_of(memory, a.id) == [a.id, b.id, c.id, d.id]
    assert_links(memory, b.id, a.id, c.id)
    assert_links(memory, c.id, b.id, d.id)
    assert_links(memory, d.id, c.id, None)


def test_add_many_after_splices_into_the_middle(memory):
    a, b = memory.add_many(TURNS[:2])
    x, y = memory.add_many([{"content": "inserted x"}, {"content": "inserted y"}], after=a.id)
    assert chain_of(memory, a.id) == [a.id, x.id, y.id, b.id]
    assert_links(memory, a.id, None, x.id)
    assert_links(memory, y.id, x.id, b.id)
    assert_links(memory, b.id, y.id, None)


def test_unknown_after_writes_nothing(memory):
    a, b = memory.add_many(TURNS[:2])
    before = sorted(p.name for p in memory.path.glob("*.md"))
    texts = {i: raw(memory, i) for i in (a.id, b.id)}
    with pytest.raises(AmemError, match="20990101T000000000-dead"):
        memory.add("orphan", after="20990101T000000000-dead")
    with pytest.raises(AmemError):
        memory.add_many([{"content": "orphan 1"}, {"content": "orphan 2"}], after="20990101T000000000-dead")
    assert sorted(p.name for p in memory.path.glob("*.md")) == before
    assert {i: raw(memory, i) for i in (a.id, b.id)} == texts
    assert [n.content for n in memory.notes()] == [TURNS[1]["content"], TURNS[0]["content"]]


def test_unknown_after_is_not_found(memory):
    memory.add("an anchor")
    with pytest.raises(NotFoundError):
        memory.add("orphan", after="20990101T000000000-dead")


def test_malformed_after_is_a_usage_error(memory):
    with pytest.raises(UsageError, match="not a valid note id"):
        memory.add("orphan", after="../escape")
    assert list(memory.path.glob("*.md")) == []


# -- delete closes the gap ----------------------------------------------------------


def test_delete_middle_closes_the_gap(memory):
    a, b, c = memory.add_many(TURNS)
    memory.delete(b.id)
    assert not (memory.path / f"{b.id}.md").exists()
    assert_links(memory, a.id, None, c.id)
    assert_links(memory, c.id, a.id, None)
    assert chain_of(memory, a.id) == [a.id, c.id]
    assert index_rows(memory.path, "SELECT count(*) FROM links WHERE src = ? OR dst = ?", b.id, b.id) == [(0,)]
    assert sorted(index_rows(memory.path, "SELECT src, dst, kind FROM links")) == sorted(
        [(a.id, c.id, "next"), (c.id, a.id, "previous")]
    )


def test_delete_ends_of_a_chain(memory):
    a, b, c = memory.add_many(TURNS)
    memory.delete(a.id)
    assert_links(memory, b.id, None, c.id)
    memory.delete(c.id)
    assert_links(memory, b.id, None, None)


def test_deleted_note_leaves_its_neighbours_full_text(memory):
    add_filler(memory)
    a, b, c = memory.add_many(
        [{"content": "We met at noon"}, {"content": "The zeppelin flew over us"}, {"content": "Then we went home"}]
    )
    assert set(ids(memory.search("zeppelin", top_k=10, mode="keyword"))) == {a.id, b.id, c.id}
    memory.delete(b.id)
    assert ids(memory.search("zeppelin", top_k=10, mode="keyword")) == []


# -- retrieval that uses the sequence ------------------------------------------------


def test_reply_is_found_by_its_neighbours_words(memory):
    add_filler(memory)
    question, reply = memory.add_many(
        [
            {"content": "Melanie: Did you go to the pottery workshop?", "created_at": "2023-05-08T10:00"},
            {"content": "Caroline: Yes, last Tuesday!", "created_at": "2023-05-08T10:01"},
        ]
    )
    hits = memory.search("pottery workshop", top_k=10, mode="keyword")
    assert ids(hits) == [question.id, reply.id]  # its own words weigh more than its neighbour's
    assert index_rows(memory.path, "SELECT neighbours FROM notes_fts WHERE id = ?", reply.id) == [(question.content,)]
    # The same search without the neighbour's words would not find the reply at all.
    assert "pottery" not in reply.content.lower() and "workshop" not in reply.content.lower()


def test_neighbours_column_follows_an_insert(memory):
    add_filler(memory)
    a, b = memory.add_many([{"content": "first line"}, {"content": "last line"}])
    mid = memory.add("an albatross landed", after=a.id)
    hits = ids(memory.search("albatross", top_k=10, mode="keyword"))
    assert hits[0] == mid.id and set(hits) == {a.id, mid.id, b.id}


DUP = "We talked about the pottery workshop and the pottery glaze"
STANDALONE = "Notes on a pottery workshop downtown with glaze and kiln and wheel"


@pytest.fixture
def run_and_standalone(memory, vault):
    """Four near-identical adjacent notes and one separate note that matches a bit less."""
    add_filler(memory)
    # No similarity links (the pipeline would link the near-identical notes to each
    # other): this is about the sequence alone.
    with AgentMemory(vault, embedder="fake", max_links=0) as unlinked:
        run = unlinked.add_many([{"content": DUP, "created_at": f"2023-06-01T10:0{i}"} for i in range(4)])
        alone = unlinked.add(STANDALONE, created_at="2023-06-02T10:00")
    return [n.id for n in run], alone.id


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_diversity_keeps_a_run_of_adjacent_notes_from_filling_the_top(run_and_standalone, vault, memory, mode):
    run, alone = run_and_standalone
    query = "pottery workshop glaze"
    # Diversity alone: the neighbour share (which lifts a run, each note by its neighbours) off.
    with AgentMemory(vault, embedder="fake", neighbour_share=0.0) as diverse:
        default = ids(diverse.search(query, top_k=3, mode=mode))
        top5 = set(ids(diverse.search(query, top_k=5, mode=mode)))
    with AgentMemory(vault, embedder="fake", diversity=0.0, neighbour_share=0.0) as flat:
        undiversified = ids(flat.search(query, top_k=3, mode=mode))
        # With the top large enough, both see the same notes: only the order differs.
        assert set(ids(flat.search(query, top_k=5, mode=mode))) == set(run) | {alone}
    assert set(undiversified) <= set(run)  # without diversity the run fills the whole top 3
    assert alone in default  # by default the separate note gets a place
    assert len(set(default) & set(run)) == 2
    # and no two of the chosen run notes are neighbours
    chosen = sorted(run.index(i) for i in default if i in run)
    assert chosen[1] - chosen[0] >= 2
    assert top5 == set(run) | {alone}


def test_diversity_scores_drop_by_the_share_for_each_neighbour_above(run_and_standalone, memory):
    run, alone = run_and_standalone
    hits = memory.search("pottery workshop glaze", top_k=5, mode="keyword")
    with AgentMemory(memory.path, embedder="fake", diversity=0.0) as flat:
        base = {h.note.id: h.score for h in flat.search("pottery workshop glaze", top_k=5, mode="keyword")}
    got = {h.note.id: h.score for h in hits}
    assert got[alone] == pytest.approx(base[alone])  # no neighbours: untouched
    taken: set[str] = set()
    for h in hits:  # each score is its base score times 0.6 per neighbour ranked above it
        n = h.note
        near = len({n.previous, n.next} & taken)
        assert h.score == pytest.approx(base[n.id] * 0.6**near)
        taken.add(n.id)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def chain(vault, texts, day="2023-06-01"):
    """Notes added together (one sequence), without similarity links."""
    with AgentMemory(vault, embedder="fake", max_links=0) as unlinked:
        return [n.id for n in unlinked.add_many([{"content": t, "created_at": f"{day}T10:0{i}"} for i, t in enumerate(texts)])]


def test_neighbour_share_lifts_a_turn_whose_neighbour_matches(memory, vault):
    add_filler(memory)
    # Only the first note has the words; the second holds them in its neighbours column;
    # the third has neither and is found through its neighbour alone.
    asked, reply, later = chain(vault, ["Did you finish the pottery workshop?", "Yes, last Tuesday!", "Then we had tea."])
    query = "pottery workshop"
    with AgentMemory(vault, embedder="fake", neighbour_share=0.0) as plain:
        unspread = {h.note.id: h.score for h in plain.search(query, top_k=10)}
    hits = memory.search(query, top_k=10)
    assert ids(hits)[:3] == [asked, reply, later]
    lifted = hits[2]
    assert "keyword" not in lifted.sources and lifted.sources["neighbour"]["of"] == reply
    assert lifted.score > unspread[later]
    # the single-list modes show their list's own evidence
    for mode in ("keyword", "semantic", "graph"):
        assert all("neighbour" not in h.sources for h in memory.search(query, top_k=10, mode=mode)), mode


def test_neighbour_share_adds_the_share_of_the_best_neighbour(memory, vault):
    add_filler(memory)
    notes = chain(vault, ["pottery workshop glaze", "the glaze cracked", "a kiln for the workshop", "Then we had tea."])
    query = "pottery workshop glaze kiln"
    with AgentMemory(vault, embedder="fake", neighbour_share=0.0, diversity=0.0) as plain:
        base = {h.note.id: h.score for h in plain.search(query, top_k=20)}
    with AgentMemory(vault, embedder="fake", neighbour_share=0.25, diversity=0.0) as spread:
        hits = spread.search(query, top_k=20)
    got = {h.note.id: h.score for h in hits}
    assert set(got) == set(base)
    for k, note_id in enumerate(notes):
        around = {n: base[n] for n in notes[max(k - 1, 0) : k + 2] if n != note_id}
        best = max(around, key=around.get)
        assert got[note_id] == pytest.approx(base[note_id] + 0.25 * base[best])
        source = next(h.sources for h in hits if h.note.id == note_id)["neighbour"]
        assert source["of"] == best and source["gain"] == pytest.approx(0.25 * base[best])
    assert {i: s for i, s in got.items() if i not in notes} == pytest.approx({i: s for i, s in base.items() if i not in notes})
    assert [h.score for h in hits] == sorted(got.values(), reverse=True)


def test_neighbour_share_keeps_to_the_filters(memory, vault):
    add_filler(memory)
    asked = chain(vault, ["Did you finish the pottery workshop?"], day="2023-05-01")[0]
    with AgentMemory(vault, embedder="fake", max_links=0) as unlinked:
        reply = unlinked.add("Yes, last Tuesday!", created_at="2023-06-01T10:00", after=asked).id
        later = unlinked.add("Then we had tea.", created_at="2023-06-01T10:01", after=reply).id
    hits = memory.search("pottery workshop", top_k=3, since=datetime(2023, 5, 15))
    assert asked not in ids(hits)
    assert all(h.sources.get("neighbour", {}).get("of") != asked for h in hits)  # gives nothing from outside
    assert ids(hits)[:2] == [reply, later]


def test_name_boost_ranks_the_named_speaker_first(memory, vault):
    add_filler(memory)
    # The same words (so the same BM25 and the same fake vector); Melanie's id sorts first.
    mel = memory.add("Melanie: Caroline, I love painting sunsets by the lake", created_at="2023-05-08T10:00")
    car = memory.add("Caroline: Melanie, I love painting sunsets by the lake", created_at="2023-05-08T11:00")
    assert mel.id < car.id
    query = "What does Caroline love painting?"
    with AgentMemory(vault, embedder="fake", name_boost=0.0) as plain:
        unboosted = plain.search(query, top_k=2)
    assert ids(unboosted) == [mel.id, car.id]  # a tie, broken by id
    assert unboosted[0].score == pytest.approx(unboosted[1].score)
    hits = memory.search(query, top_k=2)
    assert ids(hits) == [car.id, mel.id]
    assert hits[0].score == pytest.approx(unboosted[0].score * 1.6)
    assert hits[0].sources["name"] == {"boost": 0.6}
    assert "name" not in hits[1].sources
    # in every mode
    for mode in MODES:
        assert ids(memory.search(query, top_k=2, mode=mode))[0] == car.id, mode
    # and the other way round
    assert ids(memory.search("What does Melanie love painting?", top_k=2))[0] == mel.id


def test_the_vector_leaves_out_the_names_the_boost_stands_for(memory, vault):
    """The name boost says whose notes; the query's vector is made without the name, so
    a note that only names the person (a reply to them) is not drawn up by it."""
    add_filler(memory)
    swim = memory.add("Melanie: I took the kids swimming at the lake", created_at="2023-05-08T10:00")
    reply = memory.add("Caroline: Melanie, Melanie, you are so kind, Melanie", created_at="2023-05-08T11:00")
    memory.add("Melanie: Hello there", created_at="2023-05-08T12:00")  # Melanie is a speaker

    def semantic(mem, query):
        hits = mem.search(query, top_k=20, mode="semantic")
        return {h.note.id: h.sources["semantic"] for h in hits}

    named, unnamed = semantic(memory, "Where did Melanie's kids go swimming?"), semantic(memory, "Where did kids go swimming?")
    assert named == unnamed
    assert named[swim.id]["rank"] == 1
    with AgentMemory(vault, embedder="fake", name_boost=0.0) as plain:  # no boost: the name stays in
        kept = semantic(plain, "Where did Melanie's kids go swimming?")
    assert kept != unnamed
    assert kept[reply.id]["score"] > unnamed[reply.id]["score"]


@pytest.mark.parametrize(
    ("query", "named", "topic"),
    [
        ("What are Melanie's kids like?", ["Melanie"], "What are kids like?"),
        ("did caroline and MELANIE paint", ["Caroline", "Melanie"], "did and paint"),
        ("Melanie", ["Melanie"], "Melanie"),  # nothing else left: the query as it is
        ("Melanie's", ["Melanie"], "Melanie's"),
        ("What did Melanies paint?", ["Melanie"], "What did Melanies paint?"),  # another word
        ("What did she paint?", [], "What did she paint?"),
    ],
)
def test_topic_is_the_query_without_the_named(query, named, topic):
    assert SearchService._topic(query, named) == topic


def test_name_boost_from_speaker_metadata(memory):
    add_filler(memory)
    mel = memory.add("I love painting sunsets by the lake", created_at="2023-05-08T10:00", metadata={"speaker": "Melanie"})
    car = memory.add("I love painting sunsets by the lake", created_at="2023-05-08T11:00", metadata={"speaker": "Caroline"})
    assert ids(memory.search("did caroline love painting", top_k=2, mode="keyword")) == [car.id, mel.id]


def test_a_chat_question_asks_about_one_side(memory):
    """A chat turn's role is its speaker ("user: ...", or `role` in its metadata): "what
    did you recommend" lifts the assistant's turns, "what did I say" the user's."""
    add_filler(memory)
    user = memory.add("user: I need a quiet hotel in Lisbon near the river", created_at="2023-05-08T10:00")
    bot = memory.add("assistant: A quiet hotel in Lisbon near the river: the Memmo Alfama", created_at="2023-05-08T10:01")
    said = memory.add("a quiet hotel in Lisbon near the river", created_at="2023-05-08T10:02", metadata={"role": "user"})
    assert index_rows(memory.path, "SELECT speaker FROM notes WHERE id = ?", bot.id) == [("assistant",)]
    hits = memory.search("Which quiet hotel in Lisbon near the river did you recommend?", top_k=3, mode="keyword")
    assert ids(hits)[0] == bot.id and hits[0].sources["side"] == {"boost": 0.6}
    mine = memory.search("What did I say about a quiet hotel in Lisbon near the river?", top_k=3, mode="keyword")
    assert set(ids(mine)[:2]) == {user.id, said.id} and all("side" in h.sources for h in mine[:2])
    with AgentMemory(memory.path, embedder="fake", name_boost=0.0) as plain:
        assert all("side" not in h.sources for h in plain.search("What did you recommend?", top_k=3))


def test_the_side_asked_does_not_push_down_the_turn_its_turns_inherit_from(memory, vault):
    """ "my" in a question asks for the user's side, but the answer can be the assistant's
    turn (here a plan the assistant wrote). The user's turns around it inherit a share of
    its score (`neighbour_share`) and the side's lift takes them above it; the answer is
    not then pushed down (`diversity`) for the turns it lifted."""
    add_filler(memory)
    asked, plan, thanks = chain(vault, [
        "user: Could you help me plan a garden?",
        "assistant: Herb garden plan: basil in the south bed beside the tomatoes, mint in a pot by the shed",
        "user: Thanks, the herb plan looks good",
    ])
    query = "Where does the basil go in my herb garden plan?"
    hits = memory.search(query, top_k=4)
    assert ids(hits)[:3] == [thanks, asked, plan]
    assert all(hits[2].sources[name]["rank"] == 1 for name in ("keyword", "semantic", "graph"))
    assert all(h.sources["side"] == {"boost": 0.6} and h.sources["neighbour"]["of"] == plan for h in hits[:2])
    with AgentMemory(vault, embedder="fake", diversity=0.0) as undiverse:
        kept = {h.note.id: h.score for h in undiverse.search(query, top_k=4)}
    assert hits[2].score == pytest.approx(kept[plan])  # 0.36 of it before
    assert hits[3].score == pytest.approx(kept[hits[3].note.id])  # the filler: nothing near it



def test_a_turn_of_the_side_asked_above_on_its_own_words_still_pushes_its_neighbour_down(memory, vault):
    """The exception above is for a turn that is above its neighbour only by the share it
    inherited from it; the user's own answer, above the reply on its own words, is the
    moment, and the reply next to it says it again."""
    add_filler(memory)
    said, reply = chain(vault, ["user: I put the basil in the south bed of my herb garden, beside the tomatoes",
                                "assistant: Good choice: basil likes the sun there"])
    query = "Where did I put the basil in my herb garden?"
    hits = memory.search(query, top_k=2)
    assert ids(hits) == [said, reply] and hits[0].sources["neighbour"]["of"] == reply
    with AgentMemory(vault, embedder="fake", diversity=0.0) as undiverse:
        kept = {h.note.id: h.score for h in undiverse.search(query, top_k=2)}
    assert hits[0].score - hits[0].sources["neighbour"]["gain"] * 1.6 > kept[reply]  # above on its own words
    assert hits[1].score == pytest.approx(kept[reply] * 0.6)


def test_a_speaker_after_a_blank_line_is_found(memory):
    """python-frontmatter, and many people, leave a blank line after the frontmatter."""
    path = memory.path / "by-hand.md"
    path.write_text("---\ncreated: 2023-05-08T10:00:00+00:00\n---\n\nCaroline: I love painting sunsets\n")
    memory.sync()
    rows = index_rows(memory.path, "SELECT content, speaker FROM notes")
    assert rows == [("\nCaroline: I love painting sunsets", "Caroline")]  # the text as written; its speaker found
    assert path.read_text().endswith("---\n\nCaroline: I love painting sunsets\n")


def test_date_words_find_a_note_by_month_and_year(memory):
    add_filler(memory)
    target = memory.add("Went to the support group", created_at="2023-05-08T13:56")
    # (the same text again would be that note said again: `AgentMemory.add` records the date)
    memory.add("Went to the support group again", created_at="2024-05-20T13:56")  # May, other year
    memory.add("Went to the support group once more", created_at="2023-07-20T13:56")  # 2023, other month
    hits = memory.search("May 2023", top_k=10, mode="keyword")
    assert hits[0].note.id == target.id
    assert hits[0].score > hits[1].score
    assert len(hits) == 3  # the filler (January 2022) does not match
    for query in ("8 May 2023", "2023-05-08"):
        assert ids(memory.search(query, top_k=10, mode="keyword"))[0] == target.id, query
    assert target.id in ids(memory.search("Monday", top_k=10, mode="keyword"))  # 2023-05-08 was a Monday
    assert index_rows(memory.path, "SELECT dates FROM notes_fts WHERE id = ?", target.id) == [("2023-05-08 8 May 2023 Monday",)]


# -- filters apply in every mode ---------------------------------------------------------


@pytest.fixture(scope="module")
def dated_template(tmp_path_factory):
    """Four pottery notes a month apart, chained (so the graph walk can reach out of range),
    tagged art / work alternately, plus the filler: built once, copied for each test."""
    folder = tmp_path_factory.mktemp("dated") / "vault"
    folder.mkdir()
    with pytest.MonkeyPatch.context() as mp:  # module scope: isolate the config here too
        isolate(mp, folder.parent / "config.toml")
        with AgentMemory(folder, embedder="fake") as mem:
            add_filler(mem)
            notes = mem.add_many(
                [
                    {"content": f"Pottery session number {i}", "created_at": datetime(2023, i, 1, 12, 0), "tags": [tag]}
                    for i, tag in zip(range(1, 5), ["art", "work", "art", "work"])
                ]
            )
    return folder, [n.id for n in notes]


@pytest.fixture
def dated(dated_template, vault):
    """(AgentMemory on a copy of the dated vault, the four chained ids)."""
    template, chain = dated_template
    shutil.rmtree(vault)
    shutil.copytree(template, vault)
    with AgentMemory(vault, embedder="fake") as mem:
        yield mem, chain


@pytest.mark.parametrize("mode", MODES)
def test_date_filters_in_every_mode(dated, mode):
    memory, (n1, n2, n3, n4) = dated
    hits = memory.search("pottery session", top_k=20, mode=mode, since=datetime(2023, 2, 1), until=datetime(2023, 3, 15))
    assert set(ids(hits)) == {n2, n3}
    assert set(ids(memory.search("pottery session", top_k=20, mode=mode, since=datetime(2023, 3, 1)))) == {n3, n4}
    window = dict(since=datetime(2022, 12, 31), until=datetime(2023, 1, 31))  # the filler is from 2022
    assert set(ids(memory.search("pottery session", top_k=20, mode=mode, **window))) == {n1}
    # the bounds are inclusive
    assert set(ids(memory.search("pottery session", top_k=20, mode=mode, since=datetime(2023, 4, 1, 12, 0)))) == {n4}
    # and without filters the out-of-range notes are there
    assert {n1, n2, n3, n4} <= set(ids(memory.search("pottery session", top_k=20, mode=mode)))


@pytest.mark.parametrize("mode", MODES)
def test_tag_filters_in_every_mode(dated, mode):
    memory, (n1, n2, n3, n4) = dated
    assert set(ids(memory.search("pottery session", top_k=20, mode=mode, tags=["art"]))) == {n1, n3}
    assert set(ids(memory.search("pottery session", top_k=20, mode=mode, tags=["#work"]))) == {n2, n4}
    assert set(ids(memory.search("pottery session", top_k=20, mode=mode, tags=["art"], since=datetime(2023, 2, 1)))) == {n3}
    assert ids(memory.search("pottery session", top_k=20, mode=mode, tags=["art", "work"])) == []
    assert ids(memory.search("pottery session", top_k=20, mode=mode, tags=["nope"])) == []


def test_graph_mode_reaches_sequence_neighbours(dated):
    memory, chain = dated
    hits = memory.search("pottery session", top_k=20, mode="graph")
    assert set(chain) <= set(ids(hits))
    assert all(set(h.sources) <= {"graph", "name"} and "graph" in h.sources for h in hits)


# -- build_context ------------------------------------------------------------------------


@pytest.fixture
def context_notes(memory):
    add_filler(memory)
    a = memory.add(
        "Caroline joined a pottery class on Saturdays",
        created_at="2023-05-08T13:56",
        keywords=["pottery", "class"],
        tags=["hobby"],
        context="Caroline's new hobby.",
    )
    b = NoteBuilder().build(
        "Melanie fired her first pottery bowl in the kiln",
        created_at="2023-05-09T09:05",
        keywords=["kiln"],
        tags=["hobby"],
        context="Melanie's pottery progress.",
    )
    b.links = [a.id]
    memory.add_note(b)
    c = memory.add("A long note about pottery glazes: " + "celadon, tenmoku, shino and ash glazes; " * 6,
                   created_at="2023-05-10T18:30")
    return memory.get(a.id), memory.get(b.id), memory.get(c.id)


def blocks(text: str) -> list[str]:
    """The note blocks of a context, after the preamble that says they are untrusted."""
    if not text:
        return []
    preamble, *notes = text.split("\n\n")
    assert preamble == PREAMBLE
    return notes


def with_preamble(*blocks: str) -> str:
    return "\n\n".join([PREAMBLE, *blocks])


def test_build_context_blocks_dates_and_lines(memory, context_notes):
    a, b, c = context_notes
    text = memory.build_context("pottery", max_tokens=None, top_k=3)
    assert f"[{a.id}] 2023-05-08 13:56\n> Caroline joined a pottery class on Saturdays\n" in text
    assert f"[{b.id}] 2023-05-09 09:05\n" in text and f"[{c.id}] 2023-05-10 18:30\n" in text
    assert "> Context: Caroline's new hobby.\n> Keywords: pottery, class\n> Tags: hobby" in text
    assert "> Context: Melanie's pottery progress.\n> Keywords: kiln\n> Tags: hobby\n> Links: [[" + a.id + "]]" in text
    assert sorted(blocks(text)) == sorted(note_block(n) for n in (a, b, c))


def test_build_context_respects_the_budget_and_never_cuts_a_note(memory, context_notes):
    whole = {note_block(n) for n in context_notes}
    full = memory.build_context("pottery", max_tokens=None, top_k=3)
    assert set(blocks(full)) == whole
    # What fit() charges: the preamble and each block rounded up, plus a token for each
    # blank line between them; never less than the joined text's own estimate.
    needed = estimate_tokens(PREAMBLE) + sum(estimate_tokens(b) + 1 for b in blocks(full))
    assert estimate_tokens(full) <= needed
    seen_sizes = set()
    for budget in [1, 5, 15, 25, 40, 60, 80, 100, 140, needed - 1, needed, needed + 50]:
        text = memory.build_context("pottery", max_tokens=budget, top_k=3)
        assert estimate_tokens(text) <= budget, budget
        assert len(text) <= 4 * budget, budget
        assert set(blocks(text)) <= whole, budget  # whole blocks only
        seen_sizes.add(len(blocks(text)))
        if budget >= needed:
            assert text == full
    assert memory.build_context("pottery", max_tokens=needed - 1, top_k=3) != full
    assert {0, 3} <= seen_sizes and len(seen_sizes) >= 3  # the budget really cut notes out


def test_build_context_smaller_note_takes_the_place_of_one_that_does_not_fit(memory, context_notes):
    a, b, c = context_notes
    base = estimate_tokens(PREAMBLE)
    long_cost = estimate_tokens(note_block(c)) + 1  # the blank line before it
    short_cost = estimate_tokens(note_block(a)) + 1
    assert short_cost < long_cost
    text = memory.build_context([c, a], max_tokens=base + long_cost - 1)
    assert text == with_preamble(note_block(a))
    assert memory.build_context([c, a], max_tokens=base + long_cost) == with_preamble(note_block(c))
    assert memory.build_context([c, a], max_tokens=base + long_cost + short_cost) == with_preamble(note_block(c), note_block(a))
    assert memory.build_context([c, a], max_tokens=base + long_cost + short_cost - 1) == with_preamble(note_block(c))
    assert memory.build_context([c, a], max_tokens=base) == ""  # no note fits: no preamble either


def test_build_context_sequence_line(memory):
    a, b, c = memory.add_many(TURNS)
    block = note_block(memory.get(b.id))
    assert block.splitlines()[-1] == f"> Sequence: after [[{a.id}]], before [[{c.id}]]"
    assert re.fullmatch(r"\[\S+\] 2023-05-08 13:57", block.splitlines()[0])
