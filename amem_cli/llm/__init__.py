"""LLM backends behind the small `LLM` port (see `base`).

Heavy libraries are imported only when a model is first used: importing this package,
or calling `make_llm`, never imports llama_cpp.
"""

from __future__ import annotations

import os

from amem_cli.errors import UsageError
from amem_cli.llm.base import LLM, LLMError

KINDS = ("llama", "openai", "none", "fake")
_ALIASES = {
    "llama": "llama",
    "llama.cpp": "llama",
    "llamacpp": "llama",
    "llama-cpp": "llama",
    "local": "llama",
    "openai": "openai",
    "http": "openai",
    "server": "openai",
    "none": "none",
    "off": "none",
    "no": "none",
    "fake": "fake",
}

# The values of the `llm` setting that ask for no model at all.
NO_MODEL = frozenset(name for name, kind in _ALIASES.items() if kind == "none")

__all__ = ["KINDS", "LLM", "LLMError", "NO_MODEL", "make_llm", "no_model"]


def no_model(kind: str | None) -> bool:
    """Whether the `llm` setting asks for no model at all (`NO_MODEL`: none, off, no)."""
    return kind is not None and str(kind).strip().lower() in NO_MODEL


def make_llm(
    kind: str | None,
    *,
    model_path: str | os.PathLike[str] | None = None,
    url: str | None = None,
    model_name: str | None = None,
    n_ctx: int = 2048,
    threads: int | None = None,
    api_key: str | None = None,
    timeout: float = 120.0,
) -> LLM | None:
    """Build an LLM backend. `kind`: "llama" (default: llama.cpp in process, the bundled
    SmolLM2 unless `model_path`), "openai" (an OpenAI-compatible `url`; chosen when a
    url is given and kind is None), "none" (returns None: no model, the deterministic
    methods only) or "fake" (answers the smallest schema-valid JSON). Nothing is loaded
    until the first call."""
    if kind is None or not str(kind).strip():
        kind = "openai" if url else "llama"
    resolved = _ALIASES.get(str(kind).strip().lower())
    if resolved is None:
        raise UsageError(f"unknown LLM kind {kind!r}", hint=f"use one of: {', '.join(KINDS)}")
    if resolved == "none":
        return None
    if resolved == "fake":  # chosen by name, as `--embedder fake` is: the fakes ship in the package
        from amem_cli.llm.fake import ScriptedLLM, schema_example

        return ScriptedLLM(default=schema_example)
    if resolved == "openai":
        if not url:
            raise UsageError("the openai LLM needs a URL", hint="pass --llm-url http://HOST:PORT/v1")
        from amem_cli.llm.openai_http import OpenAIHTTPLLM

        return OpenAIHTTPLLM(url, model_name, api_key=api_key, timeout=timeout)
    from amem_cli.llm.llamacpp import LlamaCppLLM

    return LlamaCppLLM(model_path, n_ctx=n_ctx, threads=threads)
