"""What every pipeline step records, and the one guarded way to ask the model."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from amem_cli.llm.base import LLM, LLMError, Message
from amem_cli.llm.structured import Parsed, parse_reply

log = logging.getLogger("amem.pipeline")

# More characters than `max_tokens` tokens can spell: what is beyond was not written
# by a model within its budget (a hostile endpoint, a backend bug), and reading JSON
# out of a long text is quadratic in the worst case (200 kB of "{" took 90 s).
CHARS_PER_TOKEN = 16


@dataclass(kw_only=True)
class StepStats:
    """How a step went: LLM calls made, whether each raw output was valid (one bool per
    call, for the share of valid outputs), and what was wrong with them."""

    llm_calls: int = 0
    valid_outputs: list[bool] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    raw_outputs: list[str] = field(default_factory=list, repr=False)


def ask(
    llm: LLM | None,
    messages: list[Message],
    schema: dict[str, Any],
    *,
    max_tokens: int,
    stats: StepStats,
) -> Parsed | None:
    """One model call, parsed. None when there is no model (llm=None) or it gives no answer.

    `LLMError` (endpoint down, model file unreadable) propagates: that is a setting to
    fix, not bad output. Any other exception from a backend counts as an invalid output.
    """
    if llm is None:
        return None
    try:
        raw = llm.complete_json(messages, schema, max_tokens=max_tokens)
    except LLMError:
        raise
    except Exception as exc:  # a backend bug or a bad input must not lose the note
        log.warning("LLM call failed: %s", exc)
        stats.llm_calls += 1
        stats.valid_outputs.append(False)
        stats.problems.append(f"LLM call failed: {type(exc).__name__}: {exc}")
        stats.raw_outputs.append("")
        return Parsed(None, False, [str(exc)])
    if raw is None:
        return None
    stats.llm_calls += 1
    raw, problems = _within_budget(raw, max_tokens)
    parsed = parse_reply(raw, schema)
    if problems:
        parsed = Parsed(parsed.data, False, problems + parsed.problems, parsed.repaired)
    stats.valid_outputs.append(parsed.valid)
    stats.problems.extend(parsed.problems)
    stats.raw_outputs.append(raw)
    return parsed


def _within_budget(raw: str, max_tokens: int) -> tuple[str, list[str]]:
    limit = max_tokens * CHARS_PER_TOKEN
    if len(raw) <= limit:
        return raw, []
    return raw[:limit], [f"output of {len(raw):,} characters, more than {max_tokens} tokens can hold; cut"]
