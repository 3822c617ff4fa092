"""LLMs for tests and for `--llm fake`. Real code, shipped in the package; no other
production module imports it (a test checks): code asks `llm is None`, never a type."""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Union

from amem_cli.llm.base import Message

Reply = Union[str, dict, list, None, Callable[[list[Message], dict[str, Any]], Any]]


@dataclass
class Call:
    """One recorded `complete_json` call."""

    messages: list[Message]
    schema: dict[str, Any]
    max_tokens: int

    @property
    def prompt(self) -> str:
        """All message contents joined, for `in` assertions."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)


class ScriptedLLM:
    """Returns queued replies in order and records every call.

    A reply may be a string (returned as is: use it for garbage and truncated JSON), a
    dict or list (JSON-dumped), None (acts as "no model" for that call), or a callable
    ``(messages, schema) -> reply`` that can look at the prompt. When the queue is empty,
    `default` is used the same way; the default default is None.
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        default: Reply = None,
        identity: str = "fake",
    ):
        self.replies: deque[Reply] = deque(replies)
        self.default = default
        self.calls: list[Call] = []
        self._identity = identity

    @property
    def identity(self) -> str:
        return self._identity

    def add(self, *replies: Reply) -> "ScriptedLLM":
        self.replies.extend(replies)
        return self

    def complete_json(
        self, messages: list[Message], schema: dict[str, Any], *, max_tokens: int
    ) -> str | None:
        self.calls.append(Call([dict(m) for m in messages], schema, max_tokens))
        reply = self.replies.popleft() if self.replies else self.default
        if callable(reply):
            reply = reply(messages, schema)
        if reply is None:
            return None
        if isinstance(reply, str):
            return reply
        return json.dumps(reply, ensure_ascii=False)


class NoLLM:
    """A model that never answers, for tests: every step takes its deterministic
    fallback, as with no model at all (`llm=None`)."""

    identity = "none"

    def complete_json(
        self, messages: list[Message], schema: dict[str, Any], *, max_tokens: int
    ) -> str | None:
        return None


def schema_example(messages: list[Message], schema: dict[str, Any]) -> Any:
    """The smallest value that satisfies `schema` (empty lists and strings, the first enum
    value): a deterministic reply that exercises the parsing path without adding content.
    `make_llm("fake")` answers with it."""
    return _example(schema)


def _example(schema: dict[str, Any]) -> Any:
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind == "object":
        props = schema.get("properties", {})
        return {k: _example(props[k]) for k in schema.get("required", list(props)) if k in props}
    if kind == "array":
        return [_example(schema.get("items", {})) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * schema.get("minLength", 0)
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return None


_OLDER = re.compile(r"^(\d+)\. (.*?)(?=^\d+\. |\Z)", re.MULTILINE | re.DOTALL)


def evolution_reply(messages: list[Message], schema: dict[str, Any], answer: Callable[[str], Any]) -> Any:
    """For a scripted model: the reply to an evolution prompt, `answer(text)` for each older
    note it shows (`text`: that note's lines as shown; an answer of None gives only its
    number: kept). None when the prompt is not an evolution's."""
    if set(schema.get("properties", {})) != {"notes"}:
        return None
    shown = str(messages[-1].get("content", "")).split("Older notes:", 1)[-1]
    items = []
    for number, text in _OLDER.findall(shown):
        item = answer(text)
        items.append({"note": int(number)} if item is None else {"note": int(number), **item})
    return {"notes": items}
