"""Settings: defaults < user TOML < vault TOML < AMEM_* environment < flags.

Only the container reads settings; nothing else looks at the environment.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from .errors import UsageError

VAULT_CONFIG = "amem.toml"


@dataclass(frozen=True)
class Settings:
    dir: Path
    embedder: str = "onnx"  # the model on onnxruntime; "sentence-transformers" (same vectors, slow start); "fake"
    embedding_model: str = "all-MiniLM-L6-v2"  # a name or a local folder
    cache_dir: str | None = None  # the ONNX export of the model (default: the platform's user cache folder)
    chroma_url: str | None = None  # a Chroma server instead of the local store
    chroma_collection: str | None = None
    search_limit: int = 10
    # The A-MEM pipeline: which model builds, links and evolves notes.
    llm: str | None = None  # "llama" (llama.cpp in process; default), "openai" (llm_url), "none"
    model: str | None = None  # a GGUF file for llama.cpp (default: the bundled SmolLM2-135M-Instruct)
    llm_url: str | None = None  # an OpenAI-compatible endpoint (llama-server, Ollama, vLLM)
    llm_model: str | None = None  # the model name to ask that endpoint for
    link_k: int = 5  # nearest notes by embedding considered for links
    link_threshold: float = 0.5  # cosine similarity a link candidate needs
    max_links: int = 3  # links a new note makes at most
    link_choice: str = "similarity"  # which candidates are linked: "similarity" (the nearest) or "model" (it picks)
    max_boxes: int = 2  # boxes a new note is filed in at most
    sync_interval: float = 0.0  # seconds between looks for files edited by others (0: every command)
    server: str = "auto"  # "auto": commands go through a warm background server, started on demand; "off"
    server_idle: float = 900.0  # seconds without a request after which the server stops
    # Retrieval: how the keyword, semantic and graph lists are fused.
    fusion: str = "score"  # "score" (normalised scores) or "rrf" (reciprocal ranks)
    keyword_weight: float = 1.0
    semantic_weight: float = 0.5
    graph_weight: float = 1.0
    pagerank_damping: float = 0.85
    pagerank_iterations: int = 20
    name_boost: float = 0.6  # extra score share for notes by a person the query names
    neighbour_share: float = 0.5  # share of a hit's score its sequence neighbours inherit
    diversity: float = 0.4  # score share a note loses for each sequence neighbour ranked above it


# Settings for the common uses, chosen at `amem init --profile` (written to the vault's
# amem.toml, where they can be changed). Each is only a set of the settings above.
PROFILES: dict[str, dict[str, Any]] = {
    # few boxes, only close links, fast
    "personal": {"link_threshold": 0.6, "max_links": 2, "max_boxes": 1},
    # many boxes, a team's topics cross
    "team": {"link_threshold": 0.5, "max_links": 3, "max_boxes": 3},
    # a low threshold and more candidates: more linking, more evolution
    "research": {"link_threshold": 0.35, "link_k": 10, "max_links": 5, "max_boxes": 2},
    # speed first: no model, deterministic building and linking
    "agent": {"llm": "none", "link_k": 3, "max_links": 2, "max_boxes": 1},
}


def profile_toml(name: str) -> str:
    if name not in PROFILES:
        raise UsageError(f"unknown profile {name!r}", hint=f"use one of: {', '.join(PROFILES)}")
    lines = [f"# amem settings for this vault (profile: {name}); see the README for all settings."]
    for key, value in PROFILES[name].items():
        lines.append(f"{key} = {value!r}" if not isinstance(value, str) else f'{key} = "{value}"')
    return "\n".join(lines) + "\n"


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    from platformdirs import user_config_dir

    environ = os.environ if environ is None else environ
    return Path(environ.get("AMEM_CONFIG") or Path(user_config_dir("amem")) / "config.toml")


def default_vault_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("amem")) / "vault"


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise UsageError(f"cannot read the config file {path}: {exc}", hint="fix or remove the file") from None


def _from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    out = {}
    for f in fields(Settings):
        value = environ.get(f"AMEM_{f.name.upper()}")
        if value not in (None, ""):
            out[f.name] = value
    return out


def _coerce(values: dict[str, Any], source: str) -> dict[str, Any]:
    known = {f.name: f for f in fields(Settings)}
    out = {}
    for key, value in values.items():
        key = key.replace("-", "_")
        if key not in known:
            raise UsageError(f"unknown setting {key!r} in {source}", hint="see `amem --help` for the settings")
        if key == "dir":
            value = Path(str(value)).expanduser()
        elif known[key].type in ("int", int):
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise UsageError(f"setting {key!r} in {source} must be a whole number") from None
        elif known[key].type in ("float", float):
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise UsageError(f"setting {key!r} in {source} must be a number") from None
        out[key] = value
    return out


def load_settings(environ: Mapping[str, str] | None = None, **flags: Any) -> Settings:
    """Settings for one run. `flags` are the command-line values (None = not given);
    `environ` the environment to read (default: this process's; the server passes the
    client's)."""
    environ = os.environ if environ is None else environ
    flags = {k: v for k, v in flags.items() if v is not None}
    env = _from_env(environ)
    config_path = user_config_path(environ)
    user = _coerce(_read_toml(config_path), str(config_path))
    if "dir" in flags:
        vault_dir = Path(flags["dir"]).expanduser()
    elif "dir" in env:
        vault_dir = Path(env["dir"]).expanduser()
    else:
        vault_dir = user.get("dir") or default_vault_dir()
    vault_file = vault_dir / VAULT_CONFIG
    vault = _coerce(_read_toml(vault_file), str(vault_file))
    vault.pop("dir", None)
    merged: dict[str, Any] = {}
    for layer, source in ((user, "user config"), (vault, "vault config"), (env, "environment"), (flags, "flags")):
        merged.update(_coerce(layer, source) if layer is env or layer is flags else layer)
    merged["dir"] = vault_dir
    settings = Settings(**merged)
    if settings.embedder not in ("onnx", "sentence-transformers", "fake"):
        raise UsageError(
            f"unknown embedder {settings.embedder!r}", hint="use 'onnx' (default), 'sentence-transformers' or 'fake'"
        )
    if settings.link_choice not in ("similarity", "model"):
        raise UsageError(f"unknown link_choice {settings.link_choice!r}", hint="use 'similarity' (default) or 'model'")
    if settings.server not in ("auto", "off"):
        raise UsageError(f"unknown server setting {settings.server!r}", hint="use 'auto' (default) or 'off'")
    return settings


def with_overrides(settings: Settings, **changes: Any) -> Settings:
    return replace(settings, **{k: v for k, v in changes.items() if v is not None})
