"""Fusing ranked lists into one ranking: reciprocal ranks, or normalised scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Ranked = Sequence[tuple[str, float]]
Fused = list[tuple[str, float, dict]]


def rrf(lists: Mapping[str, Ranked], *, k: int = 60, weights: Mapping[str, float] | None = None) -> Fused:
    """Weighted reciprocal rank fusion: sum of weight / (k + rank). Returns
    (id, fused score, {list: {rank, score}}), best first."""
    fused: dict[str, float] = {}
    for name, ranked in lists.items():
        w = (weights or {}).get(name, 1.0)
        for rank, (item, _) in enumerate(ranked, 1):
            fused[item] = fused.get(item, 0.0) + w / (k + rank)
    return _ranked(fused, lists)


def score_fusion(lists: Mapping[str, Ranked], *, weights: Mapping[str, float] | None = None) -> Fused:
    """Weighted sum of each list's scores scaled to 0..1 by the list's best score (a note
    missing from a list scores 0 there). Unlike ranks, this keeps how far ahead a hit is."""
    fused: dict[str, float] = {}
    for name, ranked in lists.items():
        if not ranked:
            continue
        w = (weights or {}).get(name, 1.0)
        top = max(s for _, s in ranked)
        low = min(min(s for _, s in ranked), 0.0)
        span = (top - low) or 1.0
        for item, score in ranked:
            fused[item] = fused.get(item, 0.0) + w * (score - low) / span
    return _ranked(fused, lists)


def _ranked(fused: dict[str, float], lists: Mapping[str, Ranked]) -> Fused:
    explain: dict[str, dict] = {}
    for name, ranked in lists.items():
        for rank, (item, score) in enumerate(ranked, 1):
            # Six significant digits, not six decimals: FTS5's BM25 gives a word that half
            # the notes hold an IDF of 1e-6, so a small vault's keyword scores are ~1e-6.
            explain.setdefault(item, {})[name] = {"rank": rank, "score": float(f"{float(score):.6g}")}
    order = sorted(fused, key=lambda i: (-fused[i], i))
    return [(i, fused[i], explain[i]) for i in order]


FUSIONS = {"rrf": rrf, "score": score_fusion}
