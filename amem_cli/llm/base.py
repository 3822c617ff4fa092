"""The `LLM` port: one method that turns chat messages plus a JSON schema into raw text.

Backends (llama.cpp in process, an OpenAI-compatible HTTP endpoint, the fakes) live in
sibling modules and are imported lazily; the pipeline depends only on this file.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from amem_cli.errors import AmemError

Message = dict[str, Any]


@runtime_checkable
class LLM(Protocol):
    """A chat model that answers in JSON.

    `identity` names the backend and model (``"llama.cpp:SmolLM2-135M-Instruct.Q4_1.gguf"``,
    ``"openai:http://127.0.0.1:8080/v1:qwen"``, ``"fake"``). No model at all is ``None``
    where an LLM would be (``make_llm("none")``): callers ask ``llm is None``.

    `complete_json` returns the model's raw text (which callers must still parse and
    check: small models produce garbage), or ``None`` when the model gives no answer,
    in which case callers use their deterministic fallbacks. It raises `LLMError` only when
    the backend itself cannot be used (endpoint unreachable, model file unreadable),
    never because of what the model wrote.
    """

    @property
    def identity(self) -> str: ...

    def complete_json(
        self, messages: list[Message], schema: dict[str, Any], *, max_tokens: int
    ) -> str | None: ...


class LLMError(AmemError):
    """The configured LLM backend cannot be used (endpoint down, model file unreadable)."""

    exit_code = 8

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(
            message,
            hint=hint or "check the LLM settings, or run with `--llm none` to build notes without a model",
        )
