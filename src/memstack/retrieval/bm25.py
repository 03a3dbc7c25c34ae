"""An incremental in-memory BM25 index that scores exactly like SQLite FTS5's ``bm25()``.

Same tokens (:mod:`memstack.retrieval.text` mirrors ``porter unicode61``), same formula: k1 = 1.2, b = 0.75,
``idf = ln((N - n + 0.5) / (n + 0.5))`` floored at 1e-6, document length in tokens. So a ranking measured here
holds on the SQLite store, whose FTS5 table returns the same numbers (a test checks this against real FTS5).
PostgreSQL's ``ts_rank`` has no IDF; there this index runs over the user's cached documents instead.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from memstack.errors import InputError
from memstack.retrieval.text import tokenize

__all__ = ["BM25Index"]

_IDF_FLOOR = 1e-6  # FTS5 never lets a very common term count negatively


class BM25Index:
    """Documents are numbered 0, 1, 2… in the order they are added; ``scores`` returns one score per document."""

    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
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
        n = len(self._postings[term][0]) if term in self._postings else 0
        return max(math.log((len(self._lengths) - n + 0.5) / (n + 0.5)), _IDF_FLOOR)

    def scores(self, terms: Iterable[str]) -> npt.NDArray[np.float64]:
        """BM25 of every document for the given query stems (0 where no term matches); higher is better."""
        out = np.zeros(len(self._lengths), dtype=np.float64)
        if not self._lengths:
            return out
        lengths = np.asarray(self._lengths, dtype=np.float64)
        norm = self.k1 * (1.0 - self.b + self.b * lengths / (self._total / len(self._lengths)))
        for term in dict.fromkeys(terms):
            posting = self._postings.get(term)
            if posting is None:
                continue
            docs = np.asarray(posting[0])
            tfs = np.asarray(posting[1], dtype=np.float64)
            out[docs] += self.idf(term) * tfs * (self.k1 + 1.0) / (tfs + norm[docs])
        return out
