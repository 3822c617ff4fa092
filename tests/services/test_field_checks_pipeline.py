"""The field checks inside `add`: a scripted model gives the bad outputs of issue 21; the
note keeps the deterministic field, says so in `amem_fallbacks`, and the pipeline's
record holds the reason; boxes are not filled with unrelated notes."""

from __future__ import annotations

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
        if _schema_is(schema, "keywords", "tags", "context"):
            return {"keywords": ["peanuts", "Thai food"], "tags": ["bob-s-lunch", "lunch.txt"],
                    "context": "Bob is allergic to peanuts and does not order Thai food for the team lunch."}
        return None

    with AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=reply)) as mem:
        note = mem.add(BOB)
        problems = internals(mem).notes.pipeline.stats.problems
    assert note.context == note_context(BOB, note.created_at)
    assert note.keywords == ["peanuts", "Thai food"]  # the model's, checked and kept
    assert "bob-s-lunch" not in note.tags
    assert set(note.metadata["amem_fallbacks"]) == {"context", "tags"}
    assert note.metadata["amem_generated"] == ["keywords"]
    assert any("prohibition" in p for p in problems)
    assert any("'lunch.txt' dropped" in p for p in problems)


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


def test_unrelated_notes_are_not_filed_together_and_alike_ones_are(vault, small_vaults_file):
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        notes = [mem.add(text) for text in UNRELATED]
        sizes = Counter(b for n in notes for b in mem.get(n.id).boxes if b != "inbox")
        assert not sizes or max(sizes.values()) <= 2, sizes  # none fits another: they wait in the inbox
        related = [mem.add(text) for text in ["Postgres joins on the orders table are slow without an index.",
                                               "Index the orders table on customer_id before Postgres joins on it."]]
        boxes = [mem.get(n.id).boxes for n in [notes[0], *related]]
    assert boxes[0] == boxes[1] == boxes[2] != ["inbox"]  # three alike notes: a box of their own
