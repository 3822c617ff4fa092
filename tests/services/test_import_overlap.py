"""An import overlaps its work: each batch is built and sent to the embedder before the
batch ahead of it is written and linked, and a rewrite skips parsing bytes this process
wrote itself. None of that may change what ends up in the vault."""

from __future__ import annotations

import json
import threading

import pytest

from amem_cli import AgentMemory
from amem_cli.embed.fake import HashEmbedder
from amem_cli.markdown import parse_note
from amem_cli.models import Note
from amem_cli.retrieve.fields import embedding_text
from conftest import internals

TOPICS = ["gardening", "astronomy", "cooking", "sailing", "chess"]


EMBED = HashEmbedder.embed  # as it is, before `counted` counts its calls


def vector_of(text: str) -> list[float]:
    return EMBED(HashEmbedder(), [text])[0]


@pytest.fixture
def counted(monkeypatch):
    """What the fake embedder embeds from now on: {"texts": [...], "threads": {...}}."""
    seen: dict = {"texts": [], "threads": set()}

    def embed(self, texts):
        seen["texts"].extend(texts)
        seen["threads"].add(threading.current_thread().name)
        return EMBED(self, texts)

    monkeypatch.setattr(HashEmbedder, "embed", embed)
    return seen


def write_jsonl(path, n: int):
    """Pairs of notes on a topic: the first opens the topic's box (its tag), the second
    (tagged otherwise) goes into that box only if the first one's box is known by then."""
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            topic = TOPICS[i // 2 % len(TOPICS)]
            fh.write(json.dumps({
                "content": f"Note {i} on {topic}: item {i * 7 % 11} of the {topic} list",
                "keywords": [topic, f"item{i * 7 % 11}"],
                "tags": [topic] if i % 2 == 0 else [f"misc{i}"],
            }) + "\n")
    return path


def by_source(memory: AgentMemory) -> dict[str, Note]:
    notes = [parse_note(p.read_text(encoding="utf-8")) for p in memory.path.glob("*.md")]
    return {n.metadata["source"]: n for n in notes}


def test_small_batches_store_what_one_batch_does(tmp_path, small_vaults_file):
    """Boxes, fields and the sequence do not depend on the batch size, so a batch built
    before the one ahead of it is stored must get the same ones: a batch's note is filed
    by the vault as it was when the note came, the notes after it aside."""
    data = write_jsonl(tmp_path / "notes.jsonl", 23)
    results = {}
    for batch in (1, 1000):
        with AgentMemory(tmp_path / f"vault-{batch}", embedder="fake") as memory:
            report = memory.import_file(data, batch=batch)
            assert len(report.ids) == 23
            notes = by_source(memory)
            source_of = {n.id: s for s, n in notes.items()}
            results[batch] = {
                s: (n.boxes, n.keywords, n.tags, n.context, source_of.get(n.previous), source_of.get(n.next))
                for s, n in notes.items()
            }
            assert memory.status().embedded == 23
    assert results[1] == results[1000]
    assert {b for r in results[1].values() for b in r[0]} - {"inbox"}  # filed


def test_each_note_is_embedded_once(memory, tmp_path, counted):
    """The vectors prefetched while the files are written (on the embedding thread) are
    the ones stored: the model sees each note's text once."""
    report = memory.import_file(write_jsonl(tmp_path / "notes.jsonl", 12), batch=5)
    assert len(counted["texts"]) == 12 == len(set(counted["texts"]))
    assert {name.split("_")[0] for name in counted["threads"]} == {"amem-embed"}
    stored = internals(memory).indexer.vectors_of(report.ids)
    for note_id in report.ids:
        assert stored[note_id] == pytest.approx(vector_of(embedding_text(memory.get(note_id))), abs=1e-6)


def test_a_text_changed_after_prefetch_is_embedded_as_stored(memory, counted):
    """Prefetched vectors are keyed by text: one for another text is never used."""
    internals(memory).indexer.prefetch([Note(id="x1", content="a text that is never stored")])
    note = memory.add("the text that is stored", keywords=["stored"], tags=["t"])
    text = embedding_text(memory.get(note.id))
    assert internals(memory).indexer.vectors_of([note.id])[note.id] == pytest.approx(vector_of(text), abs=1e-6)
    assert text in counted["texts"]


def test_a_hand_edit_between_two_writes_is_read_from_the_file(memory):
    """A rewrite uses the note it wrote only while the file still holds those bytes."""
    first = memory.add("Lena repaired the blue bicycle chain on Sunday", keywords=["bicycle"], tags=["repairs"])
    path = memory.path / f"{first.id}.md"
    path.write_text(path.read_text(encoding="utf-8").replace("- repairs", "- by-hand"), encoding="utf-8")
    second = memory.add("Lena repaired the blue bicycle chain again", keywords=["bicycle"], tags=["repairs"])
    on_disk = parse_note(path.read_text(encoding="utf-8"))
    assert second.id in on_disk.backlinks  # it was rewritten...
    assert on_disk.tags == ["by-hand"]  # ...from the file as the person left it
