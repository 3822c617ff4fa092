"""An OpenAI-compatible chat endpoint over HTTP (stdlib urllib, no extra dependency).

Works with llama-cpp-python's server (`python -m llama_cpp.server`), llama.cpp's
`llama-server`, Ollama (`http://127.0.0.1:11434/v1`) and vLLM.

The JSON schema travels in `response_format`. Servers disagree on its shape:

* ``{"type": "json_object", "schema": {...}}`` — llama-cpp-python's server (its request
  model only allows the types "text" and "json_object" and answers 422 to anything
  else) and llama.cpp's llama-server;
* ``{"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}}`` — OpenAI,
  vLLM, Ollama, and llama-server too.

The first style is sent first; on a 400/422 answer the other style is tried once and
remembered for the following calls.
"""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from amem_cli.llm.base import LLMError, Message

STYLES = ("json_object", "json_schema")


def normalise_url(url: str) -> str:
    """``http://host:8000`` -> ``http://host:8000/v1``; a URL with a path is kept as is."""
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = "http://" + url
    parts = urllib.parse.urlsplit(url)
    if parts.path in ("", "/"):
        url = url + "/v1"
    return url


def response_format(schema: dict[str, Any], style: str) -> dict[str, Any]:
    if style == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": schema, "strict": False},
        }
    return {"type": "json_object", "schema": schema}


class OpenAIHTTPLLM:
    """Chat completions from an OpenAI-compatible server."""

    def __init__(
        self,
        url: str,
        model: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        temperature: float = 0.1,
        repeat_penalty: float | None = 1.1,
        seed: int | None = 42,
        style: str | None = None,
    ):
        if style is not None and style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}")
        self.url = normalise_url(url)
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.temperature = temperature
        self.repeat_penalty = repeat_penalty
        self.seed = seed
        self.style = style  # None: find out on the first call
        self._lock = threading.Lock()
        self._model_checked = model is not None

    @property
    def identity(self) -> str:
        return f"openai:{self.url}:{self.model or 'default'}"

    # -- HTTP ----------------------------------------------------------------------

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError:
            raise
        except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError) as exc:
            reason = getattr(exc, "reason", exc)
            raise LLMError(
                f"cannot reach the LLM endpoint {self.url}: {reason}",
                hint="start the server (e.g. `python -m llama_cpp.server --model FILE.gguf`), "
                "check --llm-url, or run with `--llm none`",
            ) from exc
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError as exc:
            raise LLMError(
                f"the LLM endpoint {self.url} did not answer with JSON",
                hint="is --llm-url an OpenAI-compatible API (it usually ends in /v1)?",
            ) from exc

    def _http_error(self, exc: urllib.error.HTTPError) -> LLMError:
        try:
            detail = exc.read().decode("utf-8", "replace")
        except Exception:  # pragma: no cover - best effort
            detail = ""
        detail = " ".join(detail.split())[:200]
        hints = {
            401: "set the API key for this endpoint",
            403: "set the API key for this endpoint",
            404: "check --llm-url (it usually ends in /v1) and the model name",
        }
        return LLMError(
            f"the LLM endpoint {self.url} answered HTTP {exc.code}: {detail or exc.reason}",
            hint=hints.get(exc.code, "check the server's log, or run with `--llm none`"),
        )

    def _resolve_model(self) -> None:
        """Without a model name, ask the server for its first model (Ollama needs one)."""
        if self._model_checked:
            return
        self._model_checked = True
        try:
            listing = self._request("GET", "/models")
        except urllib.error.HTTPError:
            return
        models = listing.get("data") if isinstance(listing, dict) else None
        if models and isinstance(models[0], dict) and models[0].get("id"):
            self.model = str(models[0]["id"])

    # -- the port --------------------------------------------------------------------

    def complete_json(
        self, messages: list[Message], schema: dict[str, Any], *, max_tokens: int
    ) -> str | None:
        with self._lock:
            self._resolve_model()
            styles = [self.style] if self.style else list(STYLES)
            last: urllib.error.HTTPError | None = None
            for style in styles:
                body: dict[str, Any] = {
                    "messages": messages,
                    "max_tokens": int(max_tokens),
                    "temperature": self.temperature,
                    "response_format": response_format(schema, style),
                    "stream": False,
                }
                if self.model:
                    body["model"] = self.model
                if self.seed is not None:
                    body["seed"] = self.seed
                if self.repeat_penalty is not None:
                    # Not OpenAI's, but llama.cpp's servers read it; others ignore it.
                    body["repeat_penalty"] = self.repeat_penalty
                try:
                    reply = self._request("POST", "/chat/completions", body)
                except urllib.error.HTTPError as exc:
                    if exc.code in (400, 422) and self.style is None:
                        last = exc
                        continue
                    raise self._http_error(exc) from exc
                self.style = style
                return _content(reply)
            assert last is not None
            raise self._http_error(last) from last


def _content(reply: Any) -> str:
    try:
        content = reply["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return ""
    return content if isinstance(content, str) else ""
