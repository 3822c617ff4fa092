"""The A-MEM steps as pure-ish functions: plain inputs in, a decision dataclass out.

Each step records its LLM calls, whether each raw output was valid and what fell back;
bad model output never raises (the note is always produced). Only `LLMError` (the
backend itself is unusable) propagates.
"""

from __future__ import annotations

from amem_cli.steps._common import StepStats
from amem_cli.steps.construct import Construction, construct, extract_keywords, note_context
from amem_cli.steps.evolve import (
    Evolution,
    EvolutionDecision,
    EvolutionDecisions,
    Neighbour,
    NewNote,
    decide_evolution,
    decide_evolutions,
    propose_evolution,
)
from amem_cli.steps.link import Candidate, LinkDecision, choose_links

__all__ = [
    "Candidate",
    "Construction",
    "Evolution",
    "EvolutionDecision",
    "EvolutionDecisions",
    "LinkDecision",
    "Neighbour",
    "NewNote",
    "StepStats",
    "choose_links",
    "construct",
    "decide_evolution",
    "decide_evolutions",
    "extract_keywords",
    "propose_evolution",
    "note_context",
]
