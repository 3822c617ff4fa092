"""A deterministic hashing embedder: fast and exact, for tests and `--embedder fake`."""

from __future__ import annotations

import hashlib
import math
import re

_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """Bag of words and character trigrams hashed into a fixed number of signed buckets."""

    def __init__(self, dimensions: int = 256):
        self.dimensions = dimensions

    @property
    def identity(self) -> str:
        return f"hash:{self.dimensions}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def _one(self, text: str) -> list[float]:
        vec = [0.0] * self.dimensions
        words = [w.lower() for w in _WORD.findall(text)]
        features = words + [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
        for feat in features:
            digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dimensions
            vec[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vec))
        if norm == 0:
            vec[0] = 1.0
            return vec
        return [v / norm for v in vec]
