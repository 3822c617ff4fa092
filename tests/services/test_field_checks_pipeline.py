"""The field checks inside `add`: a scripted model gives the bad outputs of issue 21; the
note keeps the deterministic field, says so in `amem_fallbacks`, and the pipeline's
record holds the reason; boxes are not filled with unrelated notes."""

from __future__ import annotations

import re
from collections import Counter

from amem_cli import AgentMemory
from amem_cli.llm.fake import ScriptedLLM
from amem_cli.steps import note_context
from conftest import internals

BOB = "Bob is allergic to peanuts; do not order Thai food for the team lunch."


def _schema_is(schema, *names) -> bool:
    return set(schema.get("properties", {})) == set(names)


def test_an_unfaithful_context_and_junk_tags_fall_back_and_are_recorded(vault):
    def reply(messages, schema):
        if _schema_is(schema, "keywords", "tags", "context", "boxes"):  # one call: the boxes with the rest
            return {"keywords": ["peanuts", "Thai food"], "tags": ["bob-s-lunch", "lunch.txt"],
                    "context": "Bob is allergic to peanuts and does not order Thai food for the team lunch.",
                    "boxes": ["assistant"]}
        return None

    with AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=reply)) as mem:
        note = mem.add(BOB)
        problems = internals(mem).notes.pipeline.stats.problems
    assert note.context == note_context(BOB, note.created_at)
    assert note.keywords == ["peanuts", "Thai food"]  # the model's, checked and kept
    assert "assistant" not in note.boxes and "bob-s-lunch" not in note.tags
    assert set(note.metadata["amem_fallbacks"]) == {"context", "tags", "boxes"}
    assert note.metadata["amem_generated"] == ["keywords"]
    assert any("prohibition" in p for p in problems)
    assert any("'lunch.txt' dropped" in p for p in problems)
    assert any("'assistant' dropped" in p for p in problems)


UNRELATED = [
    "Postgres ad-hoc joins on the orders table need an index on customer_id.",
    "Marco's daughter starts kindergarten in September.",
    "The billing-invoices S3 bucket must have versioning on.",
    "Bob is allergic to peanuts; do not order Thai food for the team lunch.",
    "The checkout service timed out; a bigger connection pool fixed it.",
    "VAT rounding is half-even, not half-up.",
    "Maria and Tom approved the cut-over to the new payment gateway.",
    "Renew the TLS certificate of the staging proxy before March.",
    "Kubernetes nodes in the batch pool run out of disk during image pulls.",
    "Quarterly planning moved the mobile app redesign to the next quarter.",
    "Grafana alerts for queue latency page the on-call engineer twice.",
    "The reporting job only works with the driver version 4.2, not 5.0.",
]


def greedy_boxes(messages, schema):
    """A model that files every note into the first existing box it is shown, else opens
    one named after the note's first tag (its first word, asked with its other fields):
    the habit that put 8 of 12 notes in one box."""
    if "boxes" not in schema.get("properties", {}):
        return None
    prompt = messages[-1]["content"]
    shown = re.search(r"Existing boxes: <data>([^<]+)</data>", prompt)
    if shown:
        return {"boxes": [shown.group(1).split(" (")[0]]}
    tag = re.search(r"Tags: ([^,\n]+)", prompt) or re.search(r"Note: <data>(\w+)", prompt)
    return {"boxes": [tag.group(1)]}


def test_a_greedy_model_does_not_fill_one_box_with_unrelated_notes(vault):
    with AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=greedy_boxes)) as mem:
        notes = [mem.add(text) for text in UNRELATED]
        related = mem.add("Postgres joins on the orders table are slow without an index.")
    sizes = Counter(b for n in notes for b in n.boxes)
    assert max(sizes.values()) <= 2, sizes
    assert set(notes[0].boxes) & set(related.boxes)  # a note that fits a box still goes there
