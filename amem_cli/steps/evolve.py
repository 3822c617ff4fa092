"""Step 3, memory evolution: the new note may refresh its neighbours' contexts and tags,
all decided in one model call (numbered, one answer each).

Only `context` and `tags` can change, nothing else. The reply must be valid; the new
context must be one clean sentence that stays about the neighbour (faithful to its own
text, nearer it than the new note, copying no sentence of the new note: see `checks`);
tags are only ever added (a small model that drops tags would lose what a person
wrote), and each added tag must be a topic word of the neighbour itself. No change, an
invalid reply or no model: None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from amem_cli.llm import prompts
from amem_cli.llm.base import LLM
from amem_cli.llm.structured import clean_list, clean_sentence, dedupe_key, known_fields, validate
from amem_cli.steps._common import StepStats, ask
from amem_cli.steps._text import of_the_note
from amem_cli.steps.checks import evolution_problem, topic_labels

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
    """The decision on one neighbour: its `evolution` (None: unchanged) and `problems`."""

    evolution: Evolution | None = None


@dataclass(kw_only=True)
class EvolutionDecisions(StepStats):
    """The decisions on all of a new note's neighbours, in their order. The model calls,
    their validity and every problem are counted here, once."""

    decisions: list[EvolutionDecision] = field(default_factory=list)

    @property
    def evolutions(self) -> list[Evolution]:
        return [d.evolution for d in self.decisions if d.evolution is not None]


def propose_evolution(new_note: Any, neighbour: Any, *, llm: LLM | None) -> Evolution | None:
    """The change to `neighbour`, or None (no change, invalid output, or no model).
    `new_note` needs content/keywords/context and `neighbour` id/content/context/tags
    (`NewNote`/`Neighbour`, or a `Note`)."""
    return decide_evolution(new_note, neighbour, llm=llm).evolution


def decide_evolution(
    new_note: Any, neighbour: Any, *, llm: LLM | None, max_tags: int = MAX_TAGS
) -> EvolutionDecision:
    """`propose_evolution` with the step's record (calls, validity, problems)."""
    batch = decide_evolutions(new_note, [neighbour], llm=llm, max_tags=max_tags)
    decision = batch.decisions[0]
    decision.llm_calls, decision.valid_outputs, decision.raw_outputs = batch.llm_calls, batch.valid_outputs, batch.raw_outputs
    decision.problems = batch.problems
    return decision


def decide_evolutions(
    new_note: Any, neighbours: Sequence[Any], *, llm: LLM | None, max_tags: int = MAX_TAGS
) -> EvolutionDecisions:
    """The change to each of `neighbours` (in their order) in the light of `new_note`: one
    model call for up to `prompts.MAX_EVOLVE_NOTES` of them. A reply that cannot be read
    whole (no JSON, cut off, not a list of answers) changes none of them; each answer is
    then checked on its own, so a bad one leaves its note as it was and the others go on."""
    new_content = str(getattr(new_note, "content", "") or "")
    new_keywords = list(getattr(new_note, "keywords", []) or [])
    new_context = str(getattr(new_note, "context", "") or "")
    result = EvolutionDecisions()
    for start in range(0, len(neighbours), prompts.MAX_EVOLVE_NOTES):
        group = [_neighbour(n) for n in neighbours[start : start + prompts.MAX_EVOLVE_NOTES]]
        answers = _ask(llm, new_content, new_keywords, new_context, group, result)
        for number, nb in enumerate(group, start=1):
            decision = EvolutionDecision()
            answer = answers.get(number)
            if isinstance(answer, str):
                decision.problems.append(answer)
            elif answer is not None:
                decision.evolution = _checked(answer, nb, new_content, decision.problems, max_tags)
            result.problems.extend(decision.problems)
            result.decisions.append(decision)
    return result


def _neighbour(note: Any) -> Neighbour:
    return Neighbour(
        id=str(getattr(note, "id")),
        content=str(getattr(note, "content", "") or ""),
        context=str(getattr(note, "context", "") or ""),
        tags=[str(t) for t in (getattr(note, "tags", []) or [])],
    )


def _ask(
    llm: LLM | None, new_content: str, new_keywords: list[str], new_context: str, group: list[Neighbour],
    stats: StepStats,
) -> dict[int, dict[str, Any]]:
    """{note number: its answer} from one model call about `group`, or why that note has
    none (a string): the reply could not be read, or its answer breaks the schema. The
    first answer for a number counts. {} when there is no model or no answer."""
    parsed = ask(
        llm,
        prompts.evolve_messages(new_content, new_keywords, new_context, [(n.content, n.context, n.tags) for n in group]),
        prompts.evolve_schema(len(group)),
        max_tokens=20 + prompts.EVOLVE_TOKENS_PER_NOTE * len(group),
        stats=stats,
    )
    if parsed is None:
        return {}
    # A cut-off reply, or one with no list of answers, changes nobody's note.
    if parsed.data is None or parsed.repaired or not isinstance(parsed.data.get("notes"), list):
        why = "evolution reply unreadable: " + ("; ".join(parsed.problems) or "no list of answers")
        return dict.fromkeys(range(1, len(group) + 1), why)
    item_schema = prompts.evolve_item_schema(len(group))
    answers: dict[int, dict[str, Any] | str] = {}
    for item in parsed.data["notes"]:
        # Keys beyond the schema's are ignored, as a top-level reply's are: only context and tags are read.
        answer = known_fields(item, item_schema) if isinstance(item, dict) else {}
        number = answer.get("note")
        problems = validate(answer, item_schema) if isinstance(item, dict) else ["not an object"]
        if number in answers or not isinstance(number, int) or not 1 <= number <= len(group):
            stats.problems.append(f"evolution answer {prompts.clip(repr(item), 80)} dropped: "
                                  + ("a note answered already" if number in answers else "no note's number"))
            continue
        answers[number] = f"evolution answer {prompts.clip(repr(item), 80)} dropped: {'; '.join(problems)}" if problems else answer
    return answers


def _checked(answer: dict[str, Any], nb: Neighbour, new_content: str, problems: list[str], max_tags: int) -> Evolution | None:
    """The change one answer makes to `nb`, kept only as far as it passes the checks."""
    # What the neighbour itself says (not what a model wrote about it before).

    context: str | None = None
    sentence = clean_sentence(answer.get("context"), max_chars=prompts.CONTEXT_MAX_CHARS)
    if sentence and dedupe_key(sentence.rstrip(".…")) != dedupe_key(nb.context.rstrip(".…")):
        problem = evolution_problem(sentence, nb.content, new_content)
        if problem is None:
            context = sentence
        else:
            problems.append(f"evolved context {sentence!r} rejected: {problem}")

    tags: list[str] | None = None
    proposed = [t.lower() for t in clean_list(answer.get("tags"), max_items=5, max_chars=prompts.TAG_MAX_CHARS, max_words=3)]
    added = []
    for tag in topic_labels(clean_list(proposed, max_items=MAX_NEW_TAGS * 3, exclude=nb.tags), problems):
        if of_the_note(tag, nb.content) or tag in {t.casefold() for t in nb.tags}:
            added.append(tag)
        else:
            problems.append(f"evolved tag {tag!r} dropped: not a word of its own note")
    added = added[:MAX_NEW_TAGS]
    if added and len(nb.tags) < max_tags:
        tags = (nb.tags + added)[:max_tags]

    if context is None and tags is None:
        return None
    return Evolution(neighbour_id=nb.id, context=context, tags=tags)


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

