"""Step 2, link generation: which of the nearest notes the new note links to.

Candidates under the similarity threshold are dropped first. The model sees the rest as
a numbered list ("1.", "2.", ...) and answers with numbers; number i is mapped back to
the i-th candidate *as shown* (the A-MEM reference code mapped positions to the wrong
notes). Unknown numbers and ids are dropped. Without a model, or when its answer is
unusable, the candidates above the threshold are linked, best first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from amem_cli.llm import prompts
from amem_cli.llm.base import LLM
from amem_cli.steps._common import StepStats, ask

# At most this many candidates are shown to the model (prompt size for small models).
MAX_SHOWN = 8


@dataclass
class Candidate:
    id: str
    content: str
    context: str = ""
    keywords: list[str] = field(default_factory=list)
    similarity: float = 0.0


@dataclass(kw_only=True)
class LinkDecision(StepStats):
    ids: list[str]
    # True when the ids are the similarity fallback rather than the model's choice.
    fallback: bool = False
    # The candidates that passed the threshold, best first (what the model was shown).
    considered: list[str] = field(default_factory=list)


def choose_links(
    note_content: str,
    note_keywords: Sequence[str],
    candidates: Sequence[Candidate],
    *,
    llm: LLM | None,
    threshold: float,
    max_links: int,
) -> LinkDecision:
    # Best first; ties keep the caller's order. One entry per id.
    ranked: list[Candidate] = []
    seen: set[str] = set()
    for cand in sorted(candidates, key=lambda c: -c.similarity):
        if cand.similarity >= threshold and cand.id not in seen:
            seen.add(cand.id)
            ranked.append(cand)
    decision = LinkDecision(ids=[], considered=[c.id for c in ranked])
    if not ranked or max_links <= 0:
        return decision

    shown = ranked[:MAX_SHOWN]
    by_number = {i: c.id for i, c in enumerate(shown, start=1)}
    labels = [prompts.candidate_label(c.content, c.context, c.keywords) for c in shown]
    parsed = ask(
        llm,
        prompts.link_messages(note_content, list(note_keywords), labels),
        prompts.link_schema(len(shown), max_links),
        max_tokens=8 + 4 * max_links,
        stats=decision,
    )
    chosen: list[str] | None = None
    if parsed is not None and parsed.data is not None and isinstance(parsed.data.get("links"), list):
        known_ids = {c.id for c in shown}
        picked: set[str] = set()
        for item in parsed.data["links"]:
            cid = _resolve(item, by_number, known_ids)
            if cid is None:
                decision.problems.append(f"unknown link {item!r} dropped")
            else:
                picked.add(cid)
        if picked or not parsed.data["links"]:
            # In similarity order, not the model's, so the result is stable.
            chosen = [c.id for c in shown if c.id in picked][:max_links]
    if chosen is None:
        decision.fallback = True
        chosen = [c.id for c in ranked[:max_links]]
    decision.ids = chosen
    return decision


def _resolve(item: object, by_number: dict[int, str], known_ids: set[str]) -> str | None:
    """A model's answer item -> a candidate id: a shown number, or (from backends that
    ignore the schema) a candidate's own id."""
    if isinstance(item, bool):
        return None
    if isinstance(item, int):
        return by_number.get(item)
    if isinstance(item, str):
        text = item.strip()
        if text in known_ids:
            return text
        digits = text.strip("[]#. ")
        if digits.isascii() and digits.isdigit():  # "²" is a digit to isdigit(), not to int()
            return by_number.get(int(digits))
    return None
