"""The A-MEM pipeline around `add`: construction, bidirectional links, evolution with a
revision log (history, undo), boxes; with a scripted model and with no model."""

from __future__ import annotations

import os
import time
from datetime import timedelta

import pytest
from typer.testing import CliRunner

from amem_cli import AgentMemory
from amem_cli.cli.app import app
from amem_cli.errors import UsageError
from amem_cli.llm.fake import ScriptedLLM, evolution_reply, schema_example
from amem_cli.markdown import parse_note
from conftest import index_rows, internals, queued

DEPLOY = "The deploy failed because the Postgres migration locked the users table for ten minutes."
POLICY = "We run long Postgres migrations at night so that table locks never block a deploy."


def router(construct=None, links=None, evolve=None, boxes=None):
    """A scripted model that answers each step by the schema it is asked for."""

    def reply(messages, schema):
        props = set(schema.get("properties", {}))
        if props == {"links"}:
            return links
        if props == {"boxes"}:
            return boxes
        if props == {"notes"}:  # evolution: the same answer for each linked note
            return evolution_reply(messages, schema, lambda older: evolve)
        built = construct(messages) if callable(construct) else construct
        if "boxes" in props and built is not None:  # asked with the note's other fields
            return {**built, **(boxes or {})}
        return built

    return ScriptedLLM(default=reply)


def read(mem: AgentMemory, note_id: str):
    return parse_note((mem.path / f"{note_id}.md").read_text(encoding="utf-8"))


@pytest.fixture
def scripted(vault):
    def construct(messages):  # a context true to the note it is asked about
        about_policy = "at night" in messages[-1]["content"]
        context = ("Why long Postgres migrations wait for the night: so that table locks never block a deploy." if about_policy
                   else "A deploy failed on a Postgres table lock.")
        return {"keywords": ["Postgres migration", "deploy"], "tags": ["postgres"], "context": context}

    llm = router(
        construct=construct,
        links={"links": [1]},
        evolve={"context": "The night-time migration policy for long Postgres migrations, so that table locks never block a deploy.", "tags": ["deploy", "postgres"]},
        boxes={"boxes": ["migrations"]},
    )
    with AgentMemory(vault, embedder="fake", llm=llm, link_threshold=0.0, link_choice="model") as mem:
        yield mem, llm


def test_by_default_the_nearest_notes_are_linked_without_asking_the_model(vault):
    llm = router(construct={"keywords": ["deploy"], "tags": ["deploy"], "context": "A deploy story."},
                 links={"links": [2]}, boxes={"boxes": ["ops"]})
    with AgentMemory(vault, embedder="fake", llm=llm, link_threshold=0.0, max_links=1) as mem:
        far = mem.add("Lunch is at noon on Fridays in the big room.")
        near = mem.add(POLICY)
        new = mem.add(DEPLOY)
        similar = dict(internals(mem).indexer.nearest(internals(mem).indexer.vectors_of([new.id])[new.id], 3))
        assert similar[near.id] > similar[far.id]
        assert new.links == [near.id]
        assert not [c for c in llm.calls if set(c.schema["properties"]) == {"links"}]


def test_an_unknown_link_choice_is_refused(vault):
    with pytest.raises(UsageError, match="unknown link_choice 'llm'"):
        AgentMemory(vault, embedder="fake", llm="none", link_choice="llm")


def test_construction_fills_what_the_user_did_not_give(scripted):
    mem, _ = scripted
    note = mem.add(DEPLOY, tags=["incident"])
    assert note.keywords == ["Postgres migration", "deploy"]
    assert note.tags == ["incident"]  # given: kept, not replaced
    assert note.context == "A deploy failed on a Postgres table lock."
    assert note.boxes == ["inbox"]  # alone: no topic yet
    assert "amem_fallbacks" not in note.metadata
    assert read(mem, note.id).keywords == note.keywords



def test_keyword_search_holds_what_people_wrote_not_what_the_model_guessed(vault):
    llm = router(construct={"keywords": ["deploy"], "tags": ["migration"], "context": "An outage story about a deploy."},
                 links={"links": []}, boxes={"boxes": ["deploys"]})
    with AgentMemory(vault, embedder="fake", llm=llm) as mem:
        built = mem.add(DEPLOY)  # the model wrote its tags and context
        mine = mem.add(POLICY, tags=["outage"], context="Written by hand.", keywords=["night"])
        assert [h.note.id for h in mem.search("outage", mode="keyword")] == [mine.id]
        # still the note's fields: shown, filtered on, embedded
        assert built.tags == ["migration"] and built.id in [h.note.id for h in mem.search("outage", tags=["migration"], mode="semantic")]


def test_the_fields_the_model_wrote_are_recorded_and_evolution_adds_to_them(scripted):
    mem, _ = scripted
    old = mem.add(POLICY, tags=["ops"], keywords=["migrations"])  # the model writes the context
    assert read(mem, old.id).metadata["amem_generated"] == ["context"]
    new = mem.add(DEPLOY, tags=["incident"])
    assert read(mem, new.id).metadata["amem_generated"] == ["keywords", "context"]
    assert read(mem, old.id).metadata["amem_generated"] == ["context", "tags"]  # evolved
    mine = mem.add("Typed by hand.", keywords=["hand"], tags=["mine"], context="A person wrote all of it.")
    assert "amem_generated" not in read(mem, mine.id).metadata

def test_unusable_model_output_falls_back_and_is_recorded(vault):
    llm = router(construct="{not json at all", links="???", boxes=None)
    with AgentMemory(vault, embedder="fake", llm=llm) as mem:
        note = mem.add(DEPLOY)
    assert note.content == DEPLOY  # always stored
    assert note.keywords and note.tags
    assert note.context == ""  # the deterministic one: "The deploy failed ..." names no kind, so none
    assert set(note.metadata["amem_fallbacks"]) == {"keywords", "tags", "context"}


def test_links_run_both_ways_in_files_and_index(scripted):
    mem, llm = scripted
    old = mem.add(POLICY, context="Migration policy.", tags=["ops"], keywords=["migrations"])
    new = mem.add(DEPLOY)
    assert new.links == [old.id]
    assert read(mem, new.id).links == [old.id]
    assert read(mem, old.id).backlinks == [new.id]
    assert mem.get(old.id).backlinks == [new.id]
    rows = index_rows(mem.path, "SELECT src, dst FROM links WHERE kind = 'link'")
    assert (new.id, old.id) in rows
    link_call = next(c for c in llm.calls if set(c.schema["properties"]) == {"links"})
    assert "Postgres migrations at night" in link_call.prompt  # the candidate was shown


def test_evolution_changes_context_and_tags_only_and_can_be_undone(scripted):
    mem, _ = scripted
    old = mem.add(POLICY, context="Migration policy.", tags=["ops"], keywords=["migrations"])
    new = mem.add(DEPLOY)
    evolved = read(mem, old.id)
    assert evolved.content == POLICY
    assert evolved.context.startswith("The night-time migration policy")
    assert evolved.tags[0] == "ops" and "deploy" in evolved.tags
    # re-embedded at once: the new context is what the vector store holds
    assert index_rows(mem.path, "SELECT count(*) FROM notes WHERE embedded_hash IS NOT text_hash") == [(0,)]
    history = mem.history(old.id)
    assert len(history) == 1 and history[0].old_context == "Migration policy." and history[0].model == "fake"
    mem.undo(old.id)
    restored = mem.get(old.id)
    assert (restored.context, restored.tags, restored.backlinks) == ("Migration policy.", ["ops"], [new.id])
    with pytest.raises(UsageError):
        mem.undo(old.id)  # nothing left to undo


def test_undo_restores_the_file_byte_for_byte_and_refuses_after_a_later_edit(memory):
    note = memory.add(POLICY, context="Migration policy.", tags=["ops"], keywords=["migrations"])
    path = memory.path / f"{note.id}.md"
    before = path.read_bytes()
    internals(memory).notes.revise(note.id, {"context": "Changed.", "tags": ["ops", "night"]}, cause=None, model="m")
    assert path.read_bytes() != before
    memory.undo(note.id)
    assert path.read_bytes() == before
    internals(memory).notes.revise(note.id, {"context": "Changed again."}, cause=None, model="m")
    # (An edit of the frontmatter: one of the text is followed by amem's own revision, see test_rederive.)
    path.write_text(path.read_text(encoding="utf-8").replace("- migrations\n", "- migrations\n- a person's keyword\n", 1),
                    encoding="utf-8")
    with pytest.raises(UsageError, match="changed after its last revision"):
        memory.undo(note.id)
    assert "a person's keyword" in memory.get(note.id).keywords
    with pytest.raises(UsageError):
        internals(memory).notes.revise(note.id, {"content": "rewritten"}, cause=None, model="m")


def test_pinned_and_hand_edited_notes_do_not_evolve(scripted):
    mem, _ = scripted
    pinned = mem.add(POLICY, context="Migration policy.", tags=["ops"], keywords=["migrations"])
    path = mem.path / f"{pinned.id}.md"
    path.write_text(path.read_text(encoding="utf-8").replace("---\n", "---\npinned: true\n", 1), encoding="utf-8")
    later = time.time() - 60  # not a hand edit by its time: only `pinned` keeps it
    os.utime(path, (later, later))
    mem.add(DEPLOY)
    assert read(mem, pinned.id).context == "Migration policy."

    edited = mem.add("Postgres table locks during migrations block every deploy.", context="Locks.", tags=["ops"], keywords=["locks"])
    path = mem.path / f"{edited.id}.md"
    later = time.time() + 60  # saved by a person a minute after amem wrote it
    os.utime(path, (later, later))
    before = mem.history(edited.id)  # (its supersession of the policy, when it was added)
    mem.add(DEPLOY + " Again.")
    assert read(mem, edited.id).context == "Locks."
    assert mem.history(edited.id) == before


def test_without_a_model_notes_are_built_and_linked_by_fallbacks(vault):
    with AgentMemory(vault, embedder="fake", llm="none", link_threshold=0.0) as mem:
        a = mem.add(POLICY)
        b = mem.add(DEPLOY)
        assert a.keywords and a.tags and a.boxes
        assert "amem_fallbacks" not in a.metadata  # with no model the fallbacks are the method
        assert b.links == [a.id] and mem.get(a.id).backlinks == [b.id]
        assert mem.history(a.id) == []  # no model: nothing evolves


def test_cli_boxes_history_and_undo(vault, scripted):
    mem, _ = scripted
    old = mem.add(POLICY, context="Migration policy.", tags=["ops"], keywords=["migrations"])
    mem.add(DEPLOY)
    runner = CliRunner()
    base = ["--dir", str(vault), "--embedder", "fake"]
    res = runner.invoke(app, [*base, "boxes"])
    assert res.exit_code == 0 and "    2  inbox" in res.output
    res = runner.invoke(app, [*base, "history", old.id])
    assert res.exit_code == 0
    assert "-context: Migration policy." in res.output and "+context: The night-time migration policy" in res.output
    res = runner.invoke(app, [*base, "undo", old.id])
    assert res.exit_code == 0 and f"restored {old.id}" in res.output
    res = runner.invoke(app, [*base, "undo", old.id])
    assert res.exit_code != 0 and "no revision to undo" in res.output and "Traceback" not in res.output


def test_evolve_on_demand_dry_run_writes_nothing(vault):
    with AgentMemory(vault, embedder="fake", llm="none", link_threshold=0.0, max_links=0) as mem:
        old = mem.add(POLICY, context="Migration policy.", tags=["ops"], keywords=["migrations"])
        new = mem.add(DEPLOY)
        assert new.links == []  # max_links 0: nothing linked on add
    files = {p.name: p.read_bytes() for p in vault.glob("*.md")}
    llm = router(links={"links": [1]}, evolve={"context": "The night-time migration policy for long Postgres migrations, against table locks.", "tags": ["deploy"]})
    with AgentMemory(vault, embedder="fake", llm=llm, link_threshold=0.0) as mem:
        plan = mem.evolve(new.id, dry_run=True)
        assert plan.links == [old.id] and old.id in plan.evolutions
        assert {p.name: p.read_bytes() for p in vault.glob("*.md")} == files
        runner = CliRunner()
        res = runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "evolve", new.id, "--dry-run", "--json"])
        assert res.exit_code == 0, res.output
        assert '"dry_run": true' in res.output
        done = mem.evolve(new.id)
        assert done.links == [old.id]
        assert mem.get(new.id).links == [old.id] and mem.get(old.id).backlinks == [new.id]
        assert mem.get(old.id).context == "The night-time migration policy for long Postgres migrations, against table locks."


def test_evolve_on_demand_leaves_a_pinned_note_alone(vault):
    with AgentMemory(vault, embedder="fake", llm="none", link_threshold=0.0) as mem:
        old = mem.add(POLICY, context="Migration policy.", tags=["ops"], keywords=["migrations"])
        new = mem.add(DEPLOY)
        assert new.links == [old.id]
    path = vault / f"{old.id}.md"
    path.write_text(path.read_text(encoding="utf-8").replace("---\n", "---\npinned: true\n", 1), encoding="utf-8")
    later = time.time() - 60  # not a hand edit by its time: only `pinned` keeps it
    os.utime(path, (later, later))
    llm = router(evolve={"context": "The night-time migration policy for long Postgres migrations, against table locks.", "tags": ["deploy"]})
    with AgentMemory(vault, embedder="fake", llm=llm, link_threshold=0.0) as mem:
        assert mem.evolve(new.id).evolutions == {}
        assert mem.get(old.id).context == "Migration policy."


def test_stats_profiles_and_config(tmp_path):
    runner = CliRunner()
    vault = tmp_path / "v"
    res = runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "init", "--profile", "research"])
    assert res.exit_code == 0, res.output
    assert "link_threshold = 0.35" in (vault / "amem.toml").read_text()
    res = runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "config", "show", "--json"])
    import json

    shown = json.loads(res.output)
    assert shown["link_threshold"] == 0.35 and shown["max_links"] == 5 and shown["llm"] == "none"  # env wins
    res = runner.invoke(app, ["--dir", str(tmp_path / "w"), "init", "--profile", "bogus"])
    assert res.exit_code != 0 and "unknown profile" in res.output and not (tmp_path / "w").exists()
    with AgentMemory(vault, embedder="fake") as mem:
        mem.add(POLICY)
        mem.add_many([{"content": DEPLOY}, {"content": DEPLOY + " Twice."}])
    res = runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "stats", "--json"])
    st = json.loads(res.output)
    assert st["notes"] == 3 and st["sequence_links"] == 1 and st["components"] >= 1
    with AgentMemory(vault, embedder="fake") as mem:
        links = {frozenset((n.id, t)) for n in mem.notes() for t in n.links}
    assert st["links"] == len(links) and st["links_per_note"] == round(2 * len(links) / 3, 3)


def test_deferred_notes_are_stored_at_once_and_processed_later(vault):
    # (With a model: with none there is no model work to queue, and the deterministic methods work at once.)
    with AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=schema_example), link_threshold=0.0) as mem:
        a = mem.add(POLICY, defer=True)
        b, c = mem.add_many([{"content": DEPLOY}, {"content": "Tea is served at four."}], defer=True)
        assert a.keywords and a.tags and a.boxes  # complete when stored: the deterministic method's at once
        assert (vault / f"{a.id}.md").is_file() and b.next == c.id  # stored and chained at once
        assert queued(mem) == [a.id, b.id, c.id]
        assert mem.process(limit=2) == [a.id, b.id]
        assert queued(mem) == [c.id]
        a, b = mem.get(a.id), mem.get(b.id)
        assert a.keywords and a.tags and a.boxes
        assert a.id in b.links and b.id in a.backlinks  # linked when b was stored, not when processed
    runner = CliRunner()
    res = runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "process", "--json"])
    assert res.exit_code == 0 and f'"{c.id}"' in res.output and '"queued": 0' in res.output
    res = runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "add", "--defer", "queued from the shell"],
                        env={"AMEM_LLM": "fake"})  # the vault's own model (work for another is done at once)
    assert res.exit_code == 0
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        assert queued(mem) == [res.stdout.strip()]


def test_a_note_built_slowly_still_evolves(scripted):
    """`updated` is when amem writes the file, not when it built the note: a model that
    takes seconds to build a note must not make the note look edited by a person."""
    mem, _ = scripted
    from amem_cli import NoteBuilder

    slow = NoteBuilder().build(POLICY, context="Migration policy.", tags=["ops"], keywords=["migrations"])
    slow.updated_at -= timedelta(minutes=5)  # built, by a slow model, minutes before it is written
    mem.add_note(slow)
    mem.add(DEPLOY)
    assert read(mem, slow.id).context != "Migration policy."
    assert len(mem.history(slow.id)) == 1


def test_a_note_written_by_a_person_is_linked_but_never_evolved(vault, scripted):
    mem, _ = scripted
    from amem_cli import NoteBuilder
    from amem_cli.markdown import render_note

    hand = NoteBuilder().build(POLICY, context="Migration policy.", tags=["ops"], keywords=["migrations"],
                               created_at="2025-01-01T09:00")
    hand.updated_at = hand.created_at  # written in an editor long after its `updated`
    (vault / f"{hand.id}.md").write_text(render_note(hand), encoding="utf-8")
    new = mem.add(DEPLOY)
    assert new.links == [hand.id] and read(mem, hand.id).backlinks == [new.id]  # linked both ways
    assert read(mem, hand.id).context == "Migration policy."  # but not evolved
    assert mem.history(hand.id) == []


def test_a_batch_is_linked_with_each_file_written_once(vault, monkeypatch):
    """add_many chooses the links of the whole batch, then writes every file once: a note
    many new notes link to gets all its backlinks in one write, and links between notes
    of the batch run both ways too. The full-text row stands (links are not searched)."""
    with AgentMemory(vault, embedder="fake", llm="none", link_threshold=0.0) as mem:
        hub = mem.add(POLICY, keywords=["Postgres migrations"])
        writes = []
        write_many = internals(mem).vault.write_many
        monkeypatch.setattr(internals(mem).vault, "write_many", lambda items, *stamped: writes.extend(i[0] for i in items) or write_many(items, *stamped))
        batch = mem.add_many([{"content": f"{DEPLOY} Attempt {n}.", "keywords": ["Postgres migrations"]} for n in range(4)])
        paths = [internals(mem).index.notes.path_of(i) for i in [hub.id, *(n.id for n in batch)]]
        assert sorted(writes) == sorted(paths + paths[1:])  # new notes: stored, then linked; the hub once
        notes = {i: mem.get(i) for i in [hub.id, *(n.id for n in batch)]}
        assert len(notes[hub.id].backlinks) >= 2  # from several new notes, in its one write
        for note in notes.values():
            assert note.links or note.backlinks
            for target in note.links:
                assert note.id in notes[target].backlinks and note.id in read(mem, target).backlinks
        in_batch = [(n.id, t) for n in batch for t in notes[n.id].links if t != hub.id]
        assert in_batch  # the later notes of the batch link the earlier ones as well
        assert hub.id in [h.note.id for h in mem.search("night migrations", top_k=3, mode="keyword")]


CHAT = [
    "Ann: Hey Bob! I finally bought the telescope I told you about.",
    "Bob: Nice, Ann! Did you spot the comet yet?",
    "Ann: Not yet, Bob, the sky was cloudy all week.",
    "Bob: Try the dark-sky park this weekend, the comet should be bright there.",
]


def test_people_who_speak_in_a_chat_name_no_box_and_a_heading_label_still_can(vault):
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        chat = mem.add_many({"content": c} for c in CHAT)
        assert {"Ann", "Bob"} <= {k for n in chat for k in n.keywords}  # their names are words of the turns
        later = mem.add("Ann: Bob, the telescope mount arrived today.")  # its speakers known from the vault
        boxes = {b for n in [*chat, later] for b in mem.get(n.id).boxes}
        assert boxes - {"inbox"} and not {"ann", "bob"} & boxes  # filed, under no speaker's name
        # A label that only heads notes is no speaker of a conversation: a box may be named so.
        labelled = [mem.add(c) for c in ["Postgres: vacuum the users table weekly.", "Postgres: index the orders table.",
                                         "Postgres: vacuum the orders table after bulk deletes."]]
        assert [mem.get(n.id).boxes for n in labelled] == [["postgres"]] * 3


def test_conversation_speakers_are_those_who_answer_and_are_answered(vault):
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        mem.add_many({"content": c} for c in ["Redis: keys expire lazily.", "Postgres: vacuum weekly.", "Kafka: keep seven days."])
        assert internals(mem).index.notes.conversation_speakers() == set()
        mem.add_many({"content": c} for c in CHAT[:3])
        assert internals(mem).index.notes.conversation_speakers() == {"Ann", "Bob"}


def test_an_add_with_queued_model_work_leaves_a_complete_file_at_once(vault):
    """A note whose model work is queued is stored with the deterministic keywords, tags,
    boxes and links at once (not empty until the queue runs), its fields owed to the model."""
    with AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=lambda m, s: None), link_threshold=0.0) as mem:
        first = mem.add(POLICY, defer=True)
        note = mem.add(DEPLOY, defer=True)
        assert queued(mem) == [first.id, note.id]
        stored = read(mem, note.id)  # the file, as an editor or `cat` sees it now
        assert stored.keywords and stored.tags and stored.boxes and stored.filed and first.id in stored.links
        assert stored.context == ""  # "The deploy failed ...": no kind its lead names, so none, never its first sentence
        assert set(stored.metadata["amem_fallbacks"]) == {"keywords", "tags", "context"}  # owed to the model
