"""Boxes are the vault's topics: alike notes form one from the inbox, a new note joins the
one it is most alike, `rebuild_boxes` files amem's notes again and never moves a box a
person gave or moved a note into."""

from __future__ import annotations

import pytest

from amem_cli import AgentMemory
from amem_cli.config import load_settings
from amem_cli.errors import UsageError
from amem_cli.markdown import parse_note

BREAD = [
    "Sourdough starter: feed the sourdough starter with rye flour every morning.",
    "The sourdough starter doubled overnight after a rye flour feed.",
    "Sourdough bread: the starter needs rye flour and a warm kitchen.",
    "Sourdough starter smells of acetone: feed it rye flour twice a day.",
]
DENTIST = "The dentist moved my appointment to Thursday at 16:30."
FRIDGE = "Rye flour sourdough starter: keep the starter in the fridge between bakes."


def boxes(mem: AgentMemory, note_id: str) -> list[str]:
    return parse_note((mem.path / f"{note_id}.md").read_text(encoding="utf-8")).boxes


def test_alike_notes_form_a_box_from_the_inbox_and_the_next_joins_it(vault, small_vaults_file):
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        first, second = mem.add(BREAD[0]), mem.add(BREAD[1])
        assert boxes(mem, first.id) == boxes(mem, second.id) == ["inbox"]  # two alike notes are no topic yet
        third = mem.add(BREAD[2])
        assert boxes(mem, first.id) == boxes(mem, second.id) == boxes(mem, third.id) == ["sourdough"]
        assert boxes(mem, mem.add(BREAD[3]).id) == ["sourdough"]  # the box it is most alike
        assert boxes(mem, mem.add(DENTIST).id) == ["inbox"]  # alike none
        assert mem.get(first.id).metadata["amem_boxes"] == ["sourdough"]  # amem's, as it wrote them


def test_a_box_a_person_gave_is_kept_and_alike_notes_may_join_it(vault, small_vaults_file):
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        mine = [mem.add(text, boxes=["baking"]) for text in BREAD[:3]]
        assert [boxes(mem, n.id) for n in mine] == [["baking"]] * 3
        assert "amem_boxes" not in mem.get(mine[0].id).metadata  # the person's
        assert boxes(mem, mem.add(BREAD[3]).id) == ["baking"]


# Notes alike none of the others: three words each, no word twice.
OTHERS = [" ".join(words) for words in zip(*[iter(
    """anchor bicycle candle dolphin engine falcon guitar harbour island jacket kettle ladder
    magnet napkin orchard pencil quartz ribbon saddle tunnel umbrella violin walnut yacht zebra
    acorn bucket canyon desert ember fossil glacier hammock igloo jigsaw kayak lantern meadow
    nectar oyster pebble quiver raven scarf thimble unicorn velvet willow xylophone yogurt zipper
    almond beacon cactus domino easel feather goblet hazel ivory jungle koala lemon mitten noodle
    olive parrot quill rocket spruce tulip badger cobalt dagger eclipse fjord gazebo harpoon
    iceberg juniper""".split())] * 3)]


def test_no_topic_forms_until_the_vault_knows_what_its_notes_share_then_the_inbox_is_swept(vault):
    """Before MIN_VAULT notes the vault's mean is unknown: every note waits in the inbox.
    The add that brings the vault to MIN_VAULT sweeps the inbox: its alike notes form the
    box the rebuild would make, though the note added is like none of them."""
    from amem_cli.services.boxes import MIN_VAULT

    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        bread = [mem.add(text) for text in BREAD]
        others = [mem.add(text) for text in OTHERS[:MIN_VAULT - len(BREAD) - 1]]
        assert {b for n in [*bread, *others] for b in boxes(mem, n.id)} == {"inbox"}
        last = mem.add(OTHERS[MIN_VAULT - len(BREAD) - 1])
        assert {tuple(boxes(mem, n.id)) for n in bread} == {("sourdough",)}
        assert boxes(mem, last.id) == ["inbox"] and {b for n in others for b in boxes(mem, n.id)} == {"inbox"}


def test_a_sweep_moves_only_inbox_notes_and_alike_ones_may_join_a_persons_box(vault):
    from amem_cli.services.boxes import MIN_VAULT

    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        mine = [mem.add(text, boxes=["baking"]) for text in BREAD[:3]]
        alike = mem.add(BREAD[3])
        for text in OTHERS[:MIN_VAULT - 4]:
            mem.add(text)
        assert [boxes(mem, n.id) for n in mine] == [["baking"]] * 3  # never renamed nor emptied
        assert boxes(mem, alike.id) == ["baking"]  # an inbox note the person's box fits joins it


def test_rebuild_files_amems_notes_again_and_leaves_a_persons_boxes(vault):
    with AgentMemory(vault, embedder="fake", llm="none", box_similarity=0.9) as mem:  # too strict: all in the inbox
        notes = [mem.add(text) for text in [*BREAD[:3], FRIDGE]]
        given = mem.add(BREAD[3], boxes=["kitchen"])
        dentist = mem.add(DENTIST)
        assert {b for n in notes for b in boxes(mem, n.id)} == {"inbox"}
        moved = notes[3]  # a person moves one note into a box of their own, by hand
        path = mem.path / f"{moved.id}.md"
        path.write_text(path.read_text(encoding="utf-8").replace("boxes:\n- inbox\n", "boxes:\n- starter\n"), encoding="utf-8")
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        done = mem.rebuild_boxes()
        assert boxes(mem, moved.id) == ["starter"] and boxes(mem, given.id) == ["kitchen"]  # as the person left them
        filed = {tuple(boxes(mem, n.id)) for n in notes[:3]}
        assert len(filed) == 1 and filed != {("inbox",)}  # one box, a person's or a new one
        assert boxes(mem, dentist.id) == ["inbox"]
        assert done.moved == 3 and done.kept == 2
        assert [r.cause for r in mem.history(notes[0].id)] == ["boxes rebuild"]  # one revision for each note moved
        assert mem.rebuild_boxes().moved == 0  # the same boxes found again
        mem.undo(notes[0].id)
        assert boxes(mem, notes[0].id) == ["inbox"]


def test_boxes_are_no_model_field_and_their_similarity_is_a_share(tmp_path):
    with pytest.raises(UsageError, match="boxes are no model field"):
        load_settings(dir=str(tmp_path), model_fields="keywords,boxes")
    with pytest.raises(UsageError, match="box_similarity.* must be between 0 and 1"):
        load_settings(dir=str(tmp_path), box_similarity=1.5)



# One chat: every turn opens with the same people and words; two topics run through it.
CHAT = "Caroline told Melanie on the phone:"
PAINTING = "watercolour painting lake sunset brushes canvas gallery colours".split()
HIKING = "hiking boots mountain trail rain poles summit map".split()


def test_what_every_note_of_a_vault_shares_makes_no_box(vault):
    """Compared as they are, the chat's turns are all alike (their shared opening: 0.66 on
    average across the two topics) and made one box; less what the vault's notes share,
    the two topics are two boxes."""
    import itertools

    def turns(words):
        return [f"{CHAT} {' '.join(c)}" for c in itertools.islice(itertools.combinations(words, 3), 15)]

    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        notes = [mem.add(text) for pair in zip(turns(PAINTING), turns(HIKING)) for text in pair]
        mem.rebuild_boxes()
        painting = {tuple(boxes(mem, n.id)) for n in notes[0::2]}
        hiking = {tuple(boxes(mem, n.id)) for n in notes[1::2]}
        assert len(painting) == len(hiking) == 1 and painting != hiking and ("inbox",) not in painting | hiking


def test_rebuild_of_an_empty_vault_files_nothing(vault):
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        done = mem.rebuild_boxes()
        assert (done.filed, done.moved, done.kept, done.boxes) == (0, 0, 0, [])
