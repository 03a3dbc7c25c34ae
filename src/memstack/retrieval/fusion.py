"""Score arithmetic for combining rankings: normalisation, fusion, neighbour smoothing, time preference.

All functions take and return float arrays aligned with the item list, so they compose without bookkeeping.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["max_normalize", "neighbour_smooth", "recency", "reciprocal_rank_fusion", "time_boost", "top_k"]

Scores = npt.NDArray[np.float64]


def max_normalize(scores: Scores) -> Scores:
    """Scale so the best score is 1 (BM25 values depend on the query; cosine similarities do not)."""
    top = float(scores.max()) if scores.size else 0.0
    return scores / top if top > 0 else np.zeros_like(scores)


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], n: int, *, k: float = 60.0) -> Scores:
    """RRF (Cormack et al. 2009): each ranking adds ``1 / (k + rank)`` for the items it lists, ranks from 1."""
    out = np.zeros(n, dtype=np.float64)
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            out[item] += 1.0 / (k + rank)
    return out


def neighbour_smooth(scores: Scores, prev: npt.NDArray[np.int64], nxt: npt.NDArray[np.int64], weight: float) -> Scores:
    """Add ``weight`` times the scores of each item's previous and next item in the same thread.

    ``prev``/``next`` hold an index or -1 where there is none. A reply that only says "yes, adoption agencies"
    gains from the question before it, and the question from its answer."""
    if weight == 0 or scores.size == 0:
        return scores
    padded = np.append(scores, 0.0)  # index -1 reads the trailing 0
    smoothed: Scores = scores + weight * (padded[prev] + padded[nxt])
    return smoothed


def time_boost(distance_days: Scores, weight: float, tau_days: float) -> Scores:
    """Multiplier ``1 + weight * exp(-distance / tau)``: full boost inside the asked-for range, fading outside."""
    return 1.0 + weight * np.exp(-distance_days / tau_days)


def recency(age_days: Scores, weight: float, half_life_days: float) -> Scores:
    """Multiplier ``1 + weight * 0.5 ** (age / half_life)``: 1 + weight for what is new, fading to 1 with age.
    Items from the future (age < 0) count as new; untimed ones (NaN) get 1."""
    factor: Scores = 1.0 + weight * np.exp2(-np.maximum(age_days, 0.0) / half_life_days)
    return np.nan_to_num(factor, nan=1.0)


def top_k(scores: Scores, k: int) -> list[int]:
    """Indices of the ``k`` best scores, best first; ties keep the earlier item first."""
    if k <= 0 or scores.size == 0:
        return []
    if k < scores.size:
        part = np.argpartition(-scores, k - 1)[:k]
        cutoff = scores[part].min()
        candidates = np.flatnonzero(scores >= cutoff)
    else:
        candidates = np.arange(scores.size)
    order = sorted(candidates.tolist(), key=lambda i: (-scores[i], i))
    return order[:k]
