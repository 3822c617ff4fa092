"""The issue's case at a shell: a note a model built, its text changed in an editor, then
`amem context` for an agent: no line of the block states the old facts any more."""

from __future__ import annotations

import json

from amem_cli import AgentMemory
from amem_cli.llm.fake import ScriptedLLM

OLD = "The staging cluster runs three m5.large nodes in the eu-west-1 region."
NEW = "The staging cluster now runs five c7g.xlarge Graviton nodes in us-east-2."
OLD_FACTS = ("three", "m5.large", "eu-west-1")
FIELDS = {"keywords": ["m5.large", "eu-west-1"], "tags": ["infrastructure"],
          "context": "Staging runs three m5.large nodes in the eu-west-1 region."}


def model() -> ScriptedLLM:
    """Writes the fields asked for (boxes: none)."""
    return ScriptedLLM(default=lambda messages, schema: {k: v for k, v in FIELDS.items() if k in schema.get("properties", {})} or None)


def test_context_after_an_edit_states_the_new_text_only_and_undo_restores_the_save(vault, run):
    with AgentMemory(vault, embedder="fake", llm=model()) as mem:
        note = mem.add(OLD)
    path = vault / f"{note.id}.md"
    text = path.read_text(encoding="utf-8")
    assert text.count(OLD) == 1  # the body only
    saved = text.replace(OLD, NEW).encode("utf-8")
    path.write_bytes(saved)  # as an editor saves it: only the text changed

    result = run("context", "staging cluster nodes", "--json")
    assert result.exit_code == 0, result.output
    block = json.loads(result.stdout)["context"]
    assert "c7g.xlarge" in block and not any(fact in block for fact in OLD_FACTS)

    history = run("history", note.id, "--json")
    assert history.exit_code == 0 and [r["cause"] for r in json.loads(history.stdout)] == ["edit"]
    assert "after edit" in run("history", note.id).stdout
    assert run("undo", note.id).exit_code == 0
    assert path.read_bytes() == saved
