"""Settings: defaults < user TOML < vault TOML < AMEM_* environment < flags.

Only the container reads settings, and the AMEM_* settings are read from the environment
here. Other modules look at the environment only for what is not a setting or is needed
before settings can be loaded (tests/unit/test_docs.py holds this list to the code):
- amem_cli/server/client.py: AMEM_DIR and AMEM_SERVER, to find the vault's warm server or
  skip it, and the AMEM_* variables it forwards to that server; XDG_RUNTIME_DIR, COLUMNS;
- amem_cli/cli/entry.py, amem_cli/cli/app.py: the shell-completion variable (Typer answers it);
- amem_cli/cli/session.py: AMEM_DEBUG (show tracebacks);
- amem_cli/cli/commands/notes.py: $VISUAL / $EDITOR for `amem edit`;
- amem_cli/cli/output.py: FORCE_COLOR and TTY_COMPATIBLE, as Rich reads them, to
  print plain text where Rich would print no styles;
- amem_cli/embed/onnx.py, amem_cli/embed/sentence.py: set HF_HUB_OFFLINE (no network).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .errors import UsageError
from .llm import NO_MODEL
from .models import MODEL_FIELDS
from .timeutil import DATE_ORDERS

VAULT_CONFIG = "amem.toml"


@dataclass(frozen=True)
class Settings:
    dir: Path
    embedder: str = "onnx"  # the model on onnxruntime; "sentence-transformers" (same vectors, slow start); "fake"
    embedding_model: str = "all-MiniLM-L6-v2"  # a name or a local folder
    cache_dir: str | None = None  # the ONNX export of the model (default: the platform's user cache folder)
    chroma_url: str | None = None  # a Chroma server instead of the local store
    chroma_collection: str | None = None
    # The A-MEM pipeline: which model builds, links and evolves notes.
    llm: str | None = None  # "llama" (llama.cpp in process; default), "openai" (llm_url), "none"
    model: str | None = None  # a GGUF file for llama.cpp (default: the bundled SmolLM2-135M-Instruct)
    llm_url: str | None = None  # an OpenAI-compatible endpoint (llama-server, Ollama, vLLM)
    llm_model: str | None = None  # the model name to ask that endpoint for
    threads: int = 0  # llama.cpp threads; 0: for each call, what the cores other work leaves idle allow
    link_k: int = 5  # nearest notes by embedding considered for links
    link_threshold: float = 0.5  # cosine similarity a link candidate needs
    max_links: int = 3  # links a new note makes at most
    link_choice: str = "similarity"  # which candidates are linked: "similarity" (the nearest) or "model" (it picks)
    # How alike a box's notes are: the mean cosine similarity of their vectors, above what
    # all the vault's notes share, a group of notes needs to be a box (higher: more,
    # smaller boxes; see docs/how-it-works.md).
    box_similarity: float = 0.2
    # The fields the model writes ("keywords,tags,context,boxes,evolution", "all"); the others
    # are the deterministic method's. "auto": MEASURED_MODEL_FIELDS.
    model_fields: str = "auto"
    # How an ambiguous slashed date (05/08/2024) is read: "auto" (refused, with a hint),
    # "day-first" or "month-first". A dotted one (29.12.2023) is always day-first.
    date_order: str = "auto"
    sync_interval: float = 0.0  # seconds between looks for files edited by others (0: every command)
    server: str = "auto"  # "auto": commands go through a warm background server, started on demand; "off"
    server_idle: float = 900.0  # seconds without a request after which the server stops
    trash_days: float = 30.0  # days a removed note is kept in .amem/trash for `amem undo` (0: not kept)
    # Retrieval: how the keyword, semantic and graph lists are fused.
    fusion: str = "score"  # "score" (normalised scores) or "rrf" (reciprocal ranks)
    keyword_weight: float = 1.0
    semantic_weight: float = 1.0  # as much as the others: see RetrievalSettings
    graph_weight: float = 1.0
    pagerank_damping: float = 0.85
    pagerank_iterations: int = 20
    name_boost: float = 0.6  # extra score share for notes by a person the query names
    time_boost: float = 0.5  # extra score share, for a question about time, for notes that state a time
    neighbour_share: float = 0.5  # share of a hit's score its sequence neighbours inherit
    diversity: float = 0.4  # score share a note loses for each sequence neighbour ranked above it
    min_similarity: float = 0.2  # cosine at which a note shares meaning with a query (search's floor)
    min_share: float = 0.1  # of the best hit's score, under which search shows no hit


    def __post_init__(self) -> None:
        for name in RANGES:  # also where a Settings is made in Python, not loaded
            check_range(name, getattr(self, name), "Settings")


# The range of each numeric setting (the README's Settings table says the same; a test
# holds the two together). Wide enough for any use measured, narrow enough that no value
# makes a command hang or a file grow without end: a vault's own amem.toml sets these
# without the user's trust, and one that set pagerank_iterations = 2000000000 hung every
# search. A value outside is refused where it is read, naming where it came from: it is a
# typo or an attack, and a value clamped silently would mean other than what is written.
RANGES: dict[str, tuple[float, float]] = {
    "threads": (0, 256),
    "link_k": (0, 100),
    "link_threshold": (-1.0, 1.0),
    "max_links": (0, 50),
    "box_similarity": (0.0, 1.0),
    "sync_interval": (0.0, 86400.0),
    "server_idle": (0.0, 604800.0),
    "trash_days": (0.0, 3650.0),
    "keyword_weight": (0.0, 100.0),
    "semantic_weight": (0.0, 100.0),
    "graph_weight": (0.0, 100.0),
    "pagerank_damping": (0.0, 1.0),
    "pagerank_iterations": (1, 1000),
    "name_boost": (0.0, 10.0),
    "time_boost": (0.0, 10.0),
    "neighbour_share": (0.0, 1.0),
    "diversity": (0.0, 1.0),
    "min_similarity": (-1.0, 1.0),
    "min_share": (0.0, 1.0),
}


def check_range(name: str, value: Any, source: str) -> None:
    """UsageError unless a numeric setting's value lies within its range (a NaN does not)."""
    low, high = RANGES[name]
    if not (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and low <= value <= high):
        raise UsageError(f"setting {name!r} in {source} must be between {low:g} and {high:g}, not {value!r}",
                         hint=f"set it within that range (the README's Settings table gives each setting's), or remove it")


# The settings that choose the model (`--llm`, `--model`, `--llm-url`): a command may
# ask for another than the warm server's (`amem --llm none add ...`). The server serves
# it without a model; another model it leaves to the command's own process.
MODEL_CHOICE = ("llm", "model", "llm_url", "llm_model")


# What a model writes by default: the fields where it was not worse than the
# deterministic method beyond the interval in a blind pairwise judgment on the judged set
# (benchmarks/judging/, issue 39): none. The bundled SmolLM2-135M-Instruct lost on
# keywords (net -0.765 [-0.836, -0.689]), tags (-0.344 [-0.454, -0.235]) and contexts
# (-0.251 [-0.317, -0.191]); a model not judged is not trusted with more (Qwen2.5-Coder-1.5B,
# judged the same way, is not worse at keywords and better at tags: README, "Fields").
MEASURED_MODEL_FIELDS: tuple[str, ...] = ()


def model_fields(settings: Settings) -> frozenset[str]:
    """The fields the model writes, from the `model_fields` setting."""
    value = settings.model_fields.strip().lower()
    if value == "auto":
        return frozenset(MEASURED_MODEL_FIELDS)
    if value == "all":
        return frozenset(MODEL_FIELDS)
    return frozenset(name.strip() for name in value.split(",") if name.strip())


# Settings for the common uses, chosen at `amem init --profile` (written to the vault's
# amem.toml, where they can be changed). Each is only a set of the settings above.
EMBEDDERS = ("onnx", "sentence-transformers", "fake")

PROFILES: dict[str, dict[str, Any]] = {
    # only close links, fast
    "personal": {"link_threshold": 0.6, "max_links": 2},
    # more links: a team's topics cross
    "team": {"link_threshold": 0.5, "max_links": 3},
    # a low threshold and more candidates: more linking, more evolution
    "research": {"link_threshold": 0.35, "link_k": 10, "max_links": 5},
    # speed first: no model, deterministic building and linking
    "agent": {"llm": "none", "link_k": 3, "max_links": 2},
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


def _read_toml(path: Path, data: bytes | None = None) -> dict[str, Any]:
    """The file's settings ({} if there is none); `data`: its bytes, read already."""
    try:
        if data is None:
            if not path.is_file():
                return {}
            data = path.read_bytes()
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise UsageError(f"cannot read the config file {path}: {exc}", hint="fix or remove the file") from None


# -- a vault's own amem.toml, and trusting it --------------------------------------
#
# A vault is data: it may come from anyone (a cloned repository, a shared folder). Its
# amem.toml may tune how notes are linked and found, but the settings below send notes
# to a server (llm_url, llm_model, chroma_url, chroma_collection: a collection on it),
# load a model or code (llm, model, embedding_model: a folder) or write outside the vault
# (cache_dir). From a vault's amem.toml they count only once the user has trusted the
# file, as it is, for that vault (like direnv's `allow`): any change needs trusting again.
RESTRICTED = ("llm", "llm_url", "llm_model", "model", "embedding_model", "cache_dir", "chroma_url", "chroma_collection")
# Values of restricted settings that only make a vault do less: honoured untrusted.
HARMLESS = {"llm": NO_MODEL}
TRUST_FILE = "trusted-vaults.json"


def trust_path(environ: Mapping[str, str] | None = None) -> Path:
    """The user's record of trusted vault configs: beside the user config, never in a vault."""
    return user_config_path(environ).with_name(TRUST_FILE)


def needs_trust(values: Mapping[str, Any]) -> list[str]:
    """The settings in `values` (a vault's amem.toml) that count only if it is trusted."""
    return [k for k in RESTRICTED if k in values and str(values[k]).strip().lower() not in HARMLESS.get(k, ())]


def _vault_key(vault_dir: Path) -> str:
    return str(Path(vault_dir).expanduser().resolve())


def trusted_vaults(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Vault folder -> the SHA-256 of the amem.toml trusted for it."""
    path = trust_path(environ)
    try:
        record = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}", hint="remove the file and trust your vaults again") from None
    if not isinstance(record, dict) or not all(isinstance(v, str) for v in record.values()):
        raise UsageError(f"{path} is not a record of trusted vaults", hint="remove it and trust your vaults again")
    return record


def trusted_vaults_state(environ: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Each trusted vault and whether its amem.toml changed since (None: it is gone)."""
    rows = []
    for vault, digest in sorted(trusted_vaults(environ).items()):
        try:
            changed = _digest((Path(vault) / VAULT_CONFIG).read_bytes()) != digest
        except OSError:
            changed = None
        rows.append({"vault": vault, "changed": changed})
    return rows


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_trusted(record: dict[str, str], environ: Mapping[str, str] | None) -> None:
    path = trust_path(environ)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=2, sort_keys=True)
        os.replace(tmp, path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}", hint="check the folder's permissions") from None


def trust_vault(vault_dir: Path, environ: Mapping[str, str] | None = None) -> tuple[Path, list[str]]:
    """Trust the vault's amem.toml as it is now; returns its path and the settings it may now set."""
    path = Path(vault_dir) / VAULT_CONFIG
    if not path.is_file():
        raise UsageError(f"there is no {path} to trust", hint="amem reads nothing from this vault that needs trust")
    data = path.read_bytes()
    held = needs_trust(_coerce(_read_toml(path, data), str(path)))
    _write_trusted({**trusted_vaults(environ), _vault_key(vault_dir): _digest(data)}, environ)
    return path, held


def revoke_trust(vault_dir: Path, environ: Mapping[str, str] | None = None) -> bool:
    """Forget the vault's trusted amem.toml; False if none was trusted."""
    record = trusted_vaults(environ)
    if record.pop(_vault_key(vault_dir), None) is None:
        return False
    _write_trusted(record, environ)
    return True


def _vault_settings(vault_dir: Path, environ: Mapping[str, str], notices: list[str] | None) -> dict[str, Any]:
    """The vault's amem.toml, less the settings it may not set untrusted (said in `notices`).
    The file is read once: the bytes hashed are the bytes used."""
    path = vault_dir / VAULT_CONFIG
    try:
        data = path.read_bytes() if path.is_file() else None
    except OSError as exc:
        raise UsageError(f"cannot read the config file {path}: {exc.strerror}", hint="fix or remove the file") from None
    if data is None:
        return {}
    values = _coerce(_read_toml(path, data), str(path))
    values.pop("dir", None)
    held = needs_trust(values)
    if held and trusted_vaults(environ).get(_vault_key(vault_dir)) != _digest(data):
        for key in held:
            del values[key]
        if notices is not None:
            where = Path(_vault_key(vault_dir)) / VAULT_CONFIG  # absolute: the same words in process and through a server
            notices.append(f"{where} sets {', '.join(held)}: ignored until you trust the file "
                           "(read it, then run `amem trust`; again after any change to it, a git pull too)")
    return values


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
            close = difflib.get_close_matches(key, known, n=1)
            guess = f"did you mean {close[0]!r}? " if close else ""
            raise UsageError(f"unknown setting {key!r} in {source}",
                             hint=f"{guess}remove or rename it; the README's Settings table lists every setting")
        where = f"the environment (AMEM_{key.upper()})" if source == "environment" else source
        if key == "dir":
            value = Path(str(value)).expanduser()
        elif known[key].type in ("int", int):
            try:
                if isinstance(value, bool) or isinstance(value, float) and not value.is_integer():
                    raise ValueError(value)
                value = int(value)
            except (TypeError, ValueError, OverflowError):
                raise UsageError(f"setting {key!r} in {where} must be a whole number, not {value!r}") from None
        elif known[key].type in ("float", float):
            try:
                if isinstance(value, bool):
                    raise ValueError(value)
                value = float(value)
            except (TypeError, ValueError):
                raise UsageError(f"setting {key!r} in {where} must be a number, not {value!r}") from None
        if key in RANGES:
            check_range(key, value, where)
        out[key] = value
    return out


def load_settings(environ: Mapping[str, str] | None = None, *, notices: list[str] | None = None, **flags: Any) -> Settings:
    """Settings for one run. `flags` are the command-line values (None = not given);
    `environ` the environment to read (default: this process's; the server passes the
    client's). Settings of an untrusted vault's amem.toml that were ignored are said,
    one line each, in `notices` (for the caller to show)."""
    return settings_with_sources(environ, notices=notices, **flags)[0]


@dataclass(frozen=True)
class Source:
    """Where a setting's value came from: `kind` is one of SOURCES; `where`, the file,
    variable or flag that gave it (None for a default)."""

    kind: str
    where: str | None = None


SOURCES = ("default", "user config", "vault", "environment", "flag")


def settings_with_sources(environ: Mapping[str, str] | None = None, *, notices: list[str] | None = None,
                          **flags: Any) -> tuple[Settings, dict[str, Source]]:
    """`load_settings`, and where each setting's value came from (a later layer wins)."""
    environ = os.environ if environ is None else environ
    flags = _coerce({k: v for k, v in flags.items() if v is not None}, "the arguments given")
    env = _coerce(_from_env(environ), "environment")
    config_path = user_config_path(environ)
    user = _coerce(_read_toml(config_path), str(config_path))
    if "dir" in flags:
        vault_dir = Path(flags["dir"]).expanduser()
    elif "dir" in env:
        vault_dir = Path(env["dir"]).expanduser()
    else:
        vault_dir = user.get("dir") or default_vault_dir()
    vault = _vault_settings(vault_dir, environ, notices)
    merged: dict[str, Any] = {}
    sources = {f.name: Source("default") for f in fields(Settings)}
    for layer, source in ((user, lambda key: Source("user config", str(config_path))),
                          (vault, lambda key: Source("vault", str(vault_dir / VAULT_CONFIG))),
                          (env, lambda key: Source("environment", f"AMEM_{key.upper()}")),
                          (flags, lambda key: Source("flag", "--" + key.replace("_", "-")))):
        merged.update(layer)
        sources.update((key, source(key)) for key in layer)
    merged["dir"] = vault_dir
    settings = Settings(**merged)
    if settings.embedder not in EMBEDDERS:
        raise UsageError(
            f"unknown embedder {settings.embedder!r}", hint="use 'onnx' (default), 'sentence-transformers' or 'fake'"
        )
    if settings.link_choice not in ("similarity", "model"):
        raise UsageError(f"unknown link_choice {settings.link_choice!r}", hint="use 'similarity' (default) or 'model'")
    unknown = sorted(model_fields(settings) - set(MODEL_FIELDS))
    if "boxes" in unknown:
        raise UsageError("boxes are no model field: they are the vault's topics, found among all its notes",
                         hint=f"leave 'boxes' out of model_fields (a list of: {', '.join(MODEL_FIELDS)}); "
                              "`amem boxes --rebuild` files the notes again")
    if unknown:
        raise UsageError(
            f"unknown model field {unknown[0]!r} in model_fields",
            hint=f"use 'auto' (default), 'all', or a list of: {', '.join(MODEL_FIELDS)}",
        )
    if settings.date_order not in DATE_ORDERS:
        raise UsageError(f"unknown date_order {settings.date_order!r}", hint="use 'auto' (default), 'day-first' or 'month-first'")
    if settings.server not in ("auto", "off"):
        raise UsageError(f"unknown server setting {settings.server!r}", hint="use 'auto' (default) or 'off'")
    return settings, sources
