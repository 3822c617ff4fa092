"""The global options of `amem` (`amem --dir V --llm none search ...`), in one table:
the Typer app declares them from it (`cli/app.py`), the quick reader reads them by it
(`cli/quick.py`), and the warm server's protocol carries those that are settings."""

from __future__ import annotations

from typing import NamedTuple


class GlobalOption(NamedTuple):
    name: str  # the parameter's name; the setting's (`config.Settings`), when it is one
    flags: tuple[str, ...]  # as typed
    help: str
    setting: bool = True  # else a flag (true when given) that is no setting
    chooses_model: bool = False  # a server a command starts runs the vault's model, not the command's


GLOBAL_OPTIONS = (
    GlobalOption("dir", ("--dir", "-d"), "The vault folder (else $AMEM_DIR, else the platform's data folder)."),
    GlobalOption("embedder", ("--embedder",),
                 "'onnx' (default), 'sentence-transformers' (same vectors, slow start) or 'fake' (hashing, for tests)."),
    GlobalOption("llm", ("--llm",), "The model that builds, links and evolves notes: llama (default), openai, none.",
                 chooses_model=True),
    GlobalOption("model", ("--model",), "A GGUF file for llama.cpp (default: the bundled SmolLM2-135M-Instruct).",
                 chooses_model=True),
    GlobalOption("llm_url", ("--llm-url",),
                 "An OpenAI-compatible endpoint (llama-server, Ollama, vLLM), e.g. http://host:8080/v1.", chooses_model=True),
    GlobalOption("no_server", ("--no-server",), "Do the work in this process, not in the vault's warm server.",
                 setting=False),
)

# The options that are settings: what a request to the warm server carries of a command's options.
SETTINGS = tuple(o.name for o in GLOBAL_OPTIONS if o.setting)
# Those that choose the model: a command's own (see `server.client.start`).
MODEL_OPTIONS = tuple(o.name for o in GLOBAL_OPTIONS if o.chooses_model)
