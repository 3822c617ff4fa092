"""An import's batches (`services.importer._Batches`): the progress it reports, the
turns it gives waiting commands between batches, and a JSONL file's sequence, kept
across batches and across lines imported before."""

from __future__ import annotations

import json

from amem_cli.config import load_settings
from amem_cli.models import Note
from amem_cli.operations import Facade
from amem_cli.wire.intake import Import
from amem_cli.wire.editing import Remove
from amem_cli.wire.notes import ListNotes

FIRST = ["Apples ripen in autumn.", "Bees visit the blossom.", "Cider is pressed in October.", "Dogs guard the orchard."]
MORE = ["Eggs come from the hens.", "Fences keep the deer out.", "Geese patrol the pond.", "Hay is cut in June."]


def write_lines(path, texts):
    path.write_text("".join((json.dumps({"content": t}) if t is not None else "not json") + "\n" for t in texts))


def sequence(stored: list[Note]) -> list[str]:
    """Each note's first word, in the order the notes' previous/next pointers give."""
    notes = {n.id: n for n in stored}
    (note,) = [n for n in notes.values() if not n.previous]
    words = []
    while note is not None:
        words.append(note.content.split()[0])
        note = notes.get(note.next)
    return words


def test_batches_report_progress_give_turns_and_keep_the_sequence(tmp_path):
    progress, turns = [], []
    facade = Facade(load_settings(dir=str(tmp_path / "vault"), embedder="fake", llm="none"), create=True,
                    between_batches=lambda: turns.append(len(progress)))  # (a server lets waiting commands in)
    try:
        chat = tmp_path / "chat.jsonl"
        write_lines(chat, FIRST)
        bees = facade.run(Import(str(chat))).ids[1]
        facade.run(Remove([bees]))  # imported again below, between two lines imported before
        write_lines(chat, [*FIRST, None, *MORE])  # a bad line, then new ones
        progress.clear(), turns.clear()
        report = facade.run(Import(str(chat), batch=2), progress=lambda done, total: progress.append((done, total)))

        assert (len(report.ids), report.duplicates, report.skipped) == (5, 3, 1)
        # Lines read less those prepared and not yet stored; the first two new notes are
        # stored when the next line imported before is read, each later pair with the next.
        assert progress == [(0, 9), (1, 9), (3, 9), (4, 9), (5, 9), (7, 9), (9, 9)]
        assert turns == [5, 6]  # after each full batch, not after the last
        assert sequence(facade.run(ListNotes(limit=100))) == ["Apples", "Bees", "Cider", "Dogs", "Eggs", "Fences", "Geese", "Hay"]
    finally:
        facade.close()
