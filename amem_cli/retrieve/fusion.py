"""Reciprocal rank fusion of ranked lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Ranked = Sequence[tuple[str, float]]


def rrf(lists: Mapping[str, Ranked], *, k: int = 60, weights: Mapping[str, float] | None = None) -> list[tuple[str, float, dict]]:
    """Fuse ranked lists (best first). Returns (id, fused score, {list: {rank, score}}), best first."""
    fused: dict[str, float] = {}
    explain: dict[str, dict] = {}
    for name, ranked in lists.items():
        w = (weights or {}).get(name, 1.0)
        for rank, (item, score) in enumerate(ranked, 1):
            fused[item] = fused.get(item, 0.0) + w / (k + rank)
            explain.setdefault(item, {})[name] = {"rank": rank, "score": round(float(score), 6)}
    order = sorted(fused, key=lambda i: (-fused[i], i))
    return [(i, fused[i], explain[i]) for i in order]
