"""ONNX backend: the sentence-transformers model run by onnxruntime, fast start, fast runs.

Embedding imports numpy, onnxruntime and tokenizers only (under a second; torch alone takes
~10 s). torch is needed once per model and weights file, to export the transformer to ONNX
into the user cache. The rest of the model, mean pooling and normalisation, is numpy.

The export's matrix weights are quantized to int8 (per output channel; activations at run
time): all-MiniLM-L6-v2 embeds ~2.8x faster on 2 cores, its vectors within cosine 0.99 of
the full-precision model's. Measured with benchmarks/locomo.py (504 questions): recall@10
-0.003 [-0.012, +0.006] against full precision, and +0.001 [-0.003, +0.006] for a vault
embedded at full precision and searched with these vectors: the two mix, so the identity
(what the index checks its vectors against) stays the model's. Not every model survives
int8 (all-mpnet-base-v2: cosine ~0 to its own vectors; its feed-forward inputs suffer most):
the export checks the int8 file against the full one and keeps the full one if they part.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..errors import AmemError
from ..places import cache_root
from .base import Embedder
from .sentence import DEFAULT_MODEL, model_label, resolve_model_path

EXPORT_VERSION = 3  # part of the cache key: bump it when the export changes (2: int8 weights; 3: checked)
WEIGHTS = ("model.safetensors", "pytorch_model.bin")
# Plain sentences the int8 export must embed close to the full one. all-MiniLM-L6-v2: cosine
# 0.97-0.99 (LoCoMo turns); all-mpnet-base-v2: -0.15 to 0.05 (with one scale a matrix: 0.80-0.88).
PROBES = (
    "How long should I cook spaghetti?",
    "Caroline went to the support group yesterday and felt welcome there.",
    "The quarterly report is due on Friday; Sam still needs the sales figures.",
    "I love hiking in the mountains with my dog.",
)
MIN_INT8_COSINE = 0.95


class OnnxUnavailable(AmemError):
    """The model cannot run on ONNX here: no runtime, no torch to export it, or a model
    layout this backend does not reproduce."""


@dataclass(frozen=True)
class ModelLayout:
    """What the model folder says about the parts this backend reproduces."""

    name: str  # the model part of the identity
    transformer: Path  # the Hugging Face model folder (config, weights, tokenizer.json)
    dims: int
    max_seq_length: int
    lower_case: bool


def _one_line(exc: Exception) -> str:
    """The first line of an error (torch and onnxruntime write whole pages)."""
    text = str(exc).strip()
    return f"{exc.__class__.__name__}: {text.splitlines()[0]}" if text else exc.__class__.__name__


def _json(path: Path, default=None):
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else default


def _is_mean_pooling(config: dict) -> bool:
    """sentence-transformers 6 writes `pooling_mode`; older versions one boolean per mode."""
    mode = config.get("pooling_mode")
    if mode is None:
        on = [k for k, v in config.items() if k.startswith("pooling_mode_") and v]
        return on in ([], ["pooling_mode_mean_tokens"])
    return mode in ("mean", ["mean"])


def read_layout(model: str) -> ModelLayout:
    """Read the model folder (JSON only, no torch). Only Transformer -> mean Pooling
    (-> Normalize) is reproduced; anything else stays with sentence-transformers."""
    root = Path(resolve_model_path(model))
    modules = _json(root / "modules.json")
    if modules is None:  # a plain Hugging Face model: sentence-transformers adds mean pooling
        transformer, pooling = root, {}
    else:
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            raise OnnxUnavailable(f"ONNX reproduces Transformer, Pooling, Normalize models, not {', '.join(kinds)}")
        transformer, pooling = root / modules[0]["path"], _json(root / modules[1]["path"] / "config.json", {})
    if not _is_mean_pooling(pooling):
        raise OnnxUnavailable("ONNX reproduces mean pooling only")
    if (_json(root / "config_sentence_transformers.json", {})).get("default_prompt_name"):
        raise OnnxUnavailable("ONNX does not add the model's default prompt")
    if not (transformer / "tokenizer.json").is_file():
        raise OnnxUnavailable("the model folder has no tokenizer.json")
    config = _json(transformer / "config.json", {})
    dims = pooling.get("embedding_dimension") or pooling.get("word_embedding_dimension") or config.get("hidden_size")
    if not dims:
        raise OnnxUnavailable("the model's dimensions are not in its config.json")
    st_config = _json(transformer / "sentence_bert_config.json", {})
    # As sentence-transformers: its own setting, else the tokenizer's capped by the positions.
    max_len = st_config.get("max_seq_length") or min(
        (_json(transformer / "tokenizer_config.json", {})).get("model_max_length", 512),
        config.get("max_position_embeddings", 512),
    )
    return ModelLayout(
        model_label(model), transformer, int(dims), int(max_len), bool(st_config.get("do_lower_case"))
    )


def _weights(layout: ModelLayout) -> Path:
    for name in WEIGHTS:
        if (layout.transformer / name).is_file():
            return layout.transformer / name
    raise OnnxUnavailable(f"the model folder has none of {', '.join(WEIGHTS)}")


def onnx_path(model: str = DEFAULT_MODEL, cache_dir: str | Path | None = None) -> Path:
    """Where the ONNX export of this model lives: keyed by identity, the weights file
    (size and mtime: hashing 90 MB at every start would cost more than it saves) and the
    export code version."""
    layout = read_layout(model)
    weights = _weights(layout)
    stat = weights.stat()
    identity = f"{layout.name}:{layout.dims}"
    key = hashlib.sha256(f"{identity}|{weights.name}|{stat.st_size}|{stat.st_mtime_ns}|{EXPORT_VERSION}".encode())
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(layout.name).name)
    return cache_root(cache_dir) / "onnx" / f"{slug}-{layout.dims}-{key.hexdigest()[:16]}.onnx"


def export_onnx(model: str = DEFAULT_MODEL, cache_dir: str | Path | None = None, *, force: bool = False) -> Path:
    """The model's ONNX file, exported with torch if it is not in the cache yet (or `force`).
    Written to a temp file then renamed, so a reader never sees half a file."""
    target = onnx_path(model, cache_dir)
    if target.is_file() and not force:
        return target
    print("amem: preparing the embedding model for fast start (once, ~20 s)", file=sys.stderr, flush=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")  # one per process: concurrent exports never share it
    full = target.with_suffix(f".{os.getpid()}.full.tmp")  # the full-precision export, quantized into tmp
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        layout = read_layout(model)
        _export(layout, full)
        _quantize(full, tmp)
        os.replace(tmp if _int8_keeps_the_vectors(layout, full, tmp) else full, target)
    except Exception as exc:
        raise OnnxUnavailable(f"cannot export the embedding model to ONNX: {_one_line(exc)}") from None
    finally:
        tmp.unlink(missing_ok=True)
        full.unlink(missing_ok=True)
    return target


def _int8_keeps_the_vectors(layout: ModelLayout, full: Path, quantized: Path) -> bool:
    """Whether the int8 file embeds PROBES close to the full-precision one; if not, says so."""
    import numpy as np
    import onnxruntime

    tokenizer = _tokenizer(layout)
    vectors = [
        np.stack([_vector(_session(onnxruntime, path, layout.dims), tokenizer, layout, t) for t in PROBES])
        for path in (full, quantized)
    ]
    worst = float((vectors[0] * vectors[1]).sum(axis=1).min())
    if worst < MIN_INT8_COSINE:
        print(f"amem: int8 weights change this model's vectors (cosine {worst:.2f}); keeping full precision",
              file=sys.stderr, flush=True)
    return worst >= MIN_INT8_COSINE


def _quantize(full: Path, out: Path) -> None:
    """int8 weights for the matrix products, one scale per output channel (one scale per
    matrix moved vectors to cosine 0.96 of the full model's; per channel 0.994)."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    # It logs a hint to pre-process the graph on the root logger: not the user's business.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(full), str(out), weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"])
    finally:
        root.setLevel(level)


def _export(layout: ModelLayout, out: Path) -> None:
    import inspect
    import warnings

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    model = AutoModel.from_pretrained(layout.transformer).eval()
    names = ["input_ids", "attention_mask"]
    if "token_type_ids" in inspect.signature(model.forward).parameters:
        names.append("token_type_ids")

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *inputs):
            return self.model(**dict(zip(names, inputs)))[0]

    # A padded row in the example, so the trace keeps the attention mask (transformers may
    # skip the mask when no token is padding, and tracing would bake that in).
    ids = torch.ones((2, 16), dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[1, 8:] = 0
    example = {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer and deprecation warnings, not the user's business
        torch.onnx.export(
            TokenEmbeddings(),
            tuple(example[n] for n in names),
            str(out),
            dynamo=False,  # the TorchScript exporter needs only `onnx`, not onnxscript
            input_names=names,
            output_names=["token_embeddings"],
            dynamic_axes={n: {0: "batch", 1: "sequence"} for n in [*names, "token_embeddings"]},
            opset_version=17,
        )


class OnnxEmbedder:
    """The model on onnxruntime. `fallback` builds the embedder used instead when ONNX cannot
    run the model here (the container gives sentence-transformers); without one that raises."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        cache_dir: str | Path | None = None,
        fallback: Callable[[], Embedder] | None = None,
    ):
        self.model_name = model
        self.cache_dir = cache_dir
        self._make_fallback = fallback
        self._fallback: Embedder | None = None
        self._session = None
        self._tokenizer = None
        self._layout: ModelLayout | None = None
        self._loading = threading.Lock()
        self._workers: ThreadPoolExecutor | None = None

    @property
    def identity(self) -> str:
        if self._fallback is None:
            try:
                # Read once: every search checks it, and the files do not change under a process.
                if self._layout is None:
                    self._layout = read_layout(self.model_name)
                return f"{self._layout.name}:{self._layout.dims}"
            except OnnxUnavailable as exc:
                self._fall_back(exc)
        return self._fallback.identity

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        if self._fallback is None and self._session is None:
            with self._loading:  # an import embeds on a background thread too
                try:
                    if self._session is None and self._fallback is None:
                        self._load()
                except OnnxUnavailable as exc:
                    self._fall_back(exc)
        if self._fallback is not None:
            return self._fallback.embed(texts)
        import numpy as np

        # One text a run: an int8 run quantizes its input with one scale for the whole run,
        # so a text run with others comes out a little different (cosine 0.988) than alone.
        # Alone, a text has one vector whatever it is embedded with; and on 2 cores note
        # texts embed as fast one at a time (326/s) as in runs of 8 (319/s).
        # The runs go to one worker a core, each running the single-threaded session (it
        # lets go of the GIL): on 2 cores 169 texts/s against 134 for one run at a time on
        # two threads (measured at full precision).
        workers = self._pool() if len(texts) > 1 else None
        return np.stack(list((workers.map if workers else map)(self._embed_one, texts))).tolist()

    def _pool(self) -> ThreadPoolExecutor | None:
        with self._loading:
            if self._workers is None and _cores() > 1:
                self._workers = ThreadPoolExecutor(_cores(), thread_name_prefix="amem-onnx")
        return self._workers

    def _embed_one(self, text: str):
        return _vector(self._session, self._tokenizer, self._layout, text)

    def _load(self) -> None:
        try:
            import onnxruntime
            import tokenizers  # noqa: F401
        except ImportError as exc:
            raise OnnxUnavailable(f"the ONNX embedder needs onnxruntime and tokenizers ({exc})") from None
        layout = read_layout(self.model_name)
        for force in (False, True):
            path = export_onnx(self.model_name, self.cache_dir, force=force)
            try:
                session = _session(onnxruntime, path, layout.dims)
                break
            except Exception as exc:  # a damaged cache file (a full disk, a bad copy): export once more
                error = _one_line(exc)
        else:
            raise OnnxUnavailable(f"onnxruntime cannot load {path}: {error}")
        self._session, self._tokenizer, self._layout = session, _tokenizer(layout), layout

    def _fall_back(self, exc: OnnxUnavailable) -> None:
        if self._make_fallback is None:
            raise exc
        print(f"amem: {exc.message}; using sentence-transformers instead", file=sys.stderr, flush=True)
        self._fallback = self._make_fallback()


def _tokenizer(layout: ModelLayout):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(layout.transformer / "tokenizer.json"))
    # tokenizer.json may fix padding and truncation (MiniLM's: 128 tokens). As
    # sentence-transformers: truncate at the model's max_seq_length; one text a run, no padding.
    tokenizer.enable_truncation(layout.max_seq_length)
    tokenizer.no_padding()
    return tokenizer


def _vector(session, tokenizer, layout: ModelLayout, text: str):
    """The text's vector: the mean of its token vectors (none is padding), normalised."""
    import numpy as np

    encoding = tokenizer.encode(text.lower() if layout.lower_case else text)
    feeds = {
        "input_ids": np.array([encoding.ids], dtype=np.int64),
        "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
        "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
    }
    (tokens,) = session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})
    pooled = tokens[0].mean(axis=0)
    return pooled / max(float(np.linalg.norm(pooled)), 1e-12)


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _session(onnxruntime, path: Path, dims: int):
    onnxruntime.set_default_logger_severity(3)  # errors only: no runtime warnings on the user's terminal
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # `embed` runs a session on each core instead
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    if session.get_outputs()[0].shape[-1] != dims:
        raise ValueError(f"the file gives {session.get_outputs()[0].shape[-1]} dimensions, not {dims}")
    return session
