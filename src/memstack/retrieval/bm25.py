"""BM25, the one formula of every lexical ranking in memstack: an incremental in-memory index, and the arithmetic the
stores use to rank their full-text matches.

Same tokens everywhere (:mod:`memstack.text`), same formula as SQLite FTS5's ``bm25()``: k1 = 1.2, b = 0.75,
``idf = ln((N - n + 0.5) / (n + 0.5))`` floored at 1e-6, document length in tokens. The statistics (N documents,
their average length, n documents holding the term) are those of the collection being ranked: one user's
memories, one user's archive. Both stores rank their matches with :func:`bm25_scores` (SQLite in Python,
PostgreSQL with the same expression in SQL), so a ranking measured here holds on either.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from memstack.errors import InputError
from memstack.text import tokenize

__all__ = ["IDF_FLOOR", "K1", "B", "BM25Index", "bm25_scores", "idf", "length_norm", "term_score"]

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6  # FTS5 never lets a very common term count negatively

Floats = npt.NDArray[np.float64]


def idf(n_docs: int, df: int) -> float:
    """Inverse document frequency of a term found in ``df`` of ``n_docs`` documents."""
    return max(math.log((n_docs - df + 0.5) / (df + 0.5)), IDF_FLOOR)


def length_norm(lengths: Floats, n_docs: int, total: int, k1: float = K1, b: float = B) -> Floats:
    """``k1 (1 - b + b |d| / avgdl)`` of each document: how its length tempers term frequency."""
    norm: Floats = k1 * (1.0 - b + b * lengths / (total / n_docs))
    return norm


def term_score(tf: Floats, norm: Floats, term_idf: float, k1: float = K1) -> Floats:
    """One term's contribution to each document's score."""
    score: Floats = term_idf * tf * (k1 + 1.0) / (tf + norm)
    return score


def bm25_scores(
    tf: Floats, lengths: Floats, df: Sequence[int], n_docs: int, total: int, *, k1: float = K1, b: float = B
) -> Floats:
    """BM25 of some documents of a collection: ``tf[d, t]`` is how often query term ``t`` occurs in document ``d``,
    ``lengths[d]`` its length; ``df[t]``, ``n_docs`` and ``total`` (the sum of all lengths) describe the whole
    collection. Terms add up in query order (the order :class:`BM25Index` uses, so the sums are equal)."""
    out = np.zeros(len(lengths), dtype=np.float64)
    if not len(lengths) or n_docs <= 0:
        return out
    norm = length_norm(np.asarray(lengths, dtype=np.float64), n_docs, total, k1, b)
    for t, n in enumerate(df):
        column = np.asarray(tf[:, t], dtype=np.float64)
        hit = column > 0
        if n > 0 and hit.any():
            out[hit] += term_score(column[hit], norm[hit], idf(n_docs, n), k1)
    return out


class BM25Index:
    """Documents are numbered 0, 1, 2… in the order they are added; ``scores`` returns one score per document."""

    def __init__(self, *, k1: float = K1, b: float = B) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0:
            raise InputError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1 = k1
        self.b = b
        self._postings: dict[str, tuple[list[int], list[int]]] = {}
        self._lengths: list[int] = []
        self._total = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, text: str) -> int:
        """Index one document; returns its number."""
        return self.add_tokens(tokenize(text))

    def add_tokens(self, tokens: Sequence[str]) -> int:
        doc = len(self._lengths)
        for term, tf in Counter(tokens).items():
            docs, tfs = self._postings.setdefault(term, ([], []))
            docs.append(doc)
            tfs.append(tf)
        self._lengths.append(len(tokens))
        self._total += len(tokens)
        return doc

    def idf(self, term: str) -> float:
        return idf(len(self._lengths), len(self._postings[term][0]) if term in self._postings else 0)

    def scores(self, terms: Iterable[str]) -> Floats:
        """BM25 of every document for the given query stems (0 where no term matches); higher is better."""
        out = np.zeros(len(self._lengths), dtype=np.float64)
        if not self._lengths:
            return out
        lengths = np.asarray(self._lengths, dtype=np.float64)
        norm = length_norm(lengths, len(self._lengths), self._total, self.k1, self.b)
        for term in dict.fromkeys(terms):
            posting = self._postings.get(term)
            if posting is None:
                continue
            docs = np.asarray(posting[0])
            tfs = np.asarray(posting[1], dtype=np.float64)
            out[docs] += term_score(tfs, norm[docs], self.idf(term), self.k1)
        return out
