"""The exact scan both in-process searches share: every score computed, the best ``k`` picked.

Used by the cache's warm search (:class:`~memstack.store.vectors.cache.UserVectors`) and by the search of what held
at an earlier time, which reads its rows from the table (an ``as_of`` search is rare; the cache holds current
memories only). PostgreSQL's exact scan is the same rule in SQL (:mod:`memstack.store.vectors.pgvector`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from memstack.types import Vector

__all__ = ["top_k"]


def top_k(scores: Vector, k: int) -> npt.NDArray[np.intp]:
    """The positions of the ``min(k, len(scores))`` highest scores, best first, the earlier row first among equal
    scores. ``argpartition`` first: sorting only the ``k`` kept is what makes a 100,000-row scan cost the dot
    products and little else."""
    m = len(scores)
    kk = min(k, m)
    if kk <= 0:
        return np.empty(0, dtype=np.intp)
    top = np.argpartition(-scores, kk - 1)[:kk] if kk < m else np.arange(m)
    return top[np.lexsort((top, -scores[top]))]
