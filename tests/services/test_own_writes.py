"""amem's own files never look edited by a person, however long a batch of them takes to
write. A note's file saved after its `updated` time (+ HAND_EDIT_SLACK) is taken for a
person's save (`Pipeline.hand_edited`: never evolved, `superseded_by` in the index only);
a batch stamps each note, then renders them all, then writes them, so on a loaded machine
the first notes of a batch reached the disk seconds after their stamp."""

from __future__ import annotations

import json
import time

import pytest

from amem_cli import markdown
from amem_cli.config import load_settings
from amem_cli.operations import Facade
from amem_cli.services import notes as notes_service, writer as writer_service
from amem_cli.wire.intake import Import

from conftest import internals

PAUSE = 0.1  # seconds a render takes here: a loaded machine, a large batch
NOTES = 30  # 3 s of rendering per batch


@pytest.fixture
def facade(tmp_path):
    # No links: a note linked later is written again (stamped afresh), which would hide the first write's stamp.
    facade = Facade(load_settings(dir=str(tmp_path / "vault"), embedder="fake", llm="none", max_links=0), create=True)
    yield facade
    facade.close()


def slow_render(note):
    time.sleep(PAUSE)
    return markdown.render_note(note)


def looking_hand_edited(facade) -> list[str]:
    services = internals(facade)
    stored = services.index.notes.get_many(services.index.notes.ids())
    return [i for i, note in stored.items() if services.pipeline.hand_edited(i, note)]


def test_a_slow_batch_of_new_notes_is_amem_s_own(facade, monkeypatch):
    """The store's own write (not embedded, so not linked: written once)."""
    monkeypatch.setattr(notes_service, "render_note", slow_render)
    service = internals(facade).notes
    notes = [service.new_note(f"Note {i} about the orchard's row {i}.") for i in range(NOTES)]
    service.prepare(notes, embed=False)
    assert len(service.store(notes, embed=False)) == NOTES
    assert looking_hand_edited(facade) == []


def test_a_slow_batch_of_rewrites_is_amem_s_own(facade, tmp_path, monkeypatch):
    data = tmp_path / "notes.jsonl"
    data.write_text("".join(json.dumps({"content": f"Note {i} about the orchard's row {i}."}) + "\n" for i in range(NOTES)))
    ids = facade.run(Import(str(data))).ids
    monkeypatch.setattr(writer_service, "render_note", slow_render)
    internals(facade).writer.update_many({i: _tagged for i in ids})
    assert looking_hand_edited(facade) == []


def _tagged(note):
    note.tags = [*note.tags, "orchard-rows"]
    return note
