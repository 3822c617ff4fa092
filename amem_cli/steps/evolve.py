"""Step 3, memory evolution: the new note may refresh a neighbour's context and tags.

Only `context` and `tags` can change, nothing else. The reply must be valid; the new
context must be one clean sentence that stays about the neighbour (faithful to its own
text, nearer it than the new note, copying no sentence of the new note: see `checks`);
tags are only ever added (a small model that drops tags would lose what a person
wrote), and each added tag must be a topic word of the neighbour itself. No change, an
invalid reply or no model: None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from amem_cli.llm import prompts
from amem_cli.llm.base import LLM
from amem_cli.llm.structured import clean_list, clean_sentence, dedupe_key, validate
from amem_cli.steps._common import StepStats, ask
from amem_cli.text import words
from amem_cli.steps.checks import evolution_problem, grounded_in, topic_labels

MAX_TAGS = 8
MAX_NEW_TAGS = 2


@dataclass
class NewNote:
    content: str
    keywords: list[str] = field(default_factory=list)
    context: str = ""


@dataclass
class Neighbour:
    id: str
    content: str
    context: str = ""
    tags: list[str] = field(default_factory=list)


@dataclass
class Evolution:
    """What changes on the neighbour. None in a field means "unchanged"."""

    neighbour_id: str
    context: str | None = None
    tags: list[str] | None = None

    def changes(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.context is not None:
            out["context"] = self.context
        if self.tags is not None:
            out["tags"] = list(self.tags)
        return out


@dataclass(kw_only=True)
class EvolutionDecision(StepStats):
    evolution: Evolution | None = None


def propose_evolution(new_note: Any, neighbour: Any, *, llm: LLM | None) -> Evolution | None:
    """The change to `neighbour`, or None (no change, invalid output, or no model).
    `new_note` needs content/keywords/context and `neighbour` id/content/context/tags
    (`NewNote`/`Neighbour`, or a `Note`)."""
    return decide_evolution(new_note, neighbour, llm=llm).evolution


def decide_evolution(
    new_note: Any, neighbour: Any, *, llm: LLM | None, max_tags: int = MAX_TAGS
) -> EvolutionDecision:
    """`propose_evolution` with the step's record (calls, validity, problems)."""
    new_content = str(getattr(new_note, "content", "") or "")
    new_keywords = list(getattr(new_note, "keywords", []) or [])
    new_context = str(getattr(new_note, "context", "") or "")
    nb_id = str(getattr(neighbour, "id"))
    nb_content = str(getattr(neighbour, "content", "") or "")
    nb_context = str(getattr(neighbour, "context", "") or "")
    nb_tags = [str(t) for t in (getattr(neighbour, "tags", []) or [])]

    decision = EvolutionDecision()
    parsed = ask(
        llm,
        prompts.evolve_messages(new_content, new_keywords, new_context, nb_content, nb_context, nb_tags),
        prompts.EVOLVE_SCHEMA,
        max_tokens=140,
        stats=decision,
    )
    # Extra keys are ignored (only context and tags are read); a cut-off or otherwise
    # invalid reply changes nobody's note.
    if parsed is None or parsed.data is None or parsed.repaired or validate(parsed.data, prompts.EVOLVE_SCHEMA):
        return decision

    # What the neighbour itself says (not what a model wrote about it before).
    own_words = set(words(" ".join([nb_content, " ".join(nb_tags)])))

    context: str | None = None
    sentence = clean_sentence(parsed.data.get("context"), max_chars=prompts.CONTEXT_MAX_CHARS)
    if sentence and dedupe_key(sentence.rstrip(".…")) != dedupe_key(nb_context.rstrip(".…")):
        problem = evolution_problem(sentence, nb_content, new_content)
        if problem is None:
            context = sentence
        else:
            decision.problems.append(f"evolved context {sentence!r} rejected: {problem}")

    tags: list[str] | None = None
    proposed = [t.lower() for t in clean_list(parsed.data.get("tags"), max_items=5, max_chars=prompts.TAG_MAX_CHARS, max_words=3)]
    added = []
    for tag in topic_labels(clean_list(proposed, max_items=MAX_NEW_TAGS * 3, exclude=nb_tags), decision.problems):
        if grounded_in(tag, own_words):
            added.append(tag)
        else:
            decision.problems.append(f"evolved tag {tag!r} dropped: not a word of its own note")
    added = added[:MAX_NEW_TAGS]
    if added and len(nb_tags) < max_tags:
        tags = (nb_tags + added)[:max_tags]

    if context is None and tags is None:
        return decision
    decision.evolution = Evolution(neighbour_id=nb_id, context=context, tags=tags)
    return decision


def broken_rule(changes: dict[str, Any], old_tags: list[str]) -> str | None:
    """What in `changes` breaks the rules of evolution, or None. Checked again where a
    revision is written, whatever produced it: a model told by a poisoned note to do
    more, or a bug here, still cannot touch anything but a bounded context and tags."""
    if not changes or set(changes) - {"context", "tags"}:
        return "only a note's context and tags may evolve"
    context = changes.get("context")
    if context is not None and (
        not isinstance(context, str) or len(context) > prompts.CONTEXT_MAX_CHARS or "\n" in context
    ):
        return f"a context is one line of at most {prompts.CONTEXT_MAX_CHARS} characters"
    tags = changes.get("tags")
    if tags is not None:
        if not isinstance(tags, list) or len(tags) > max(MAX_TAGS, len(old_tags)):
            return f"a note has at most {MAX_TAGS} tags"
        if not all(isinstance(t, str) and t and len(t) <= prompts.TAG_MAX_CHARS and "\n" not in t for t in tags):
            return f"a tag is one line of at most {prompts.TAG_MAX_CHARS} characters"
        if not set(old_tags) <= set(tags):
            return "evolution only adds tags"
    return None

