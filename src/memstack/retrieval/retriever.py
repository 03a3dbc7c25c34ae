"""Hybrid ranking of passages (archived turns, memories): lexical + dense, thread-aware and time-aware.

What it does for one query, in order (each step measured on LoCoMo, see ``memstack eval locomo``):

1. a time expression in the query ("last June", "on 16 November, 2023") is resolved against ``now`` and removed
   from the words matched lexically;
2. BM25 over *turn keys*: a passage's words plus those of the ``context_turns`` passages before it in its thread,
   so an answer is found by the words of the question it answers;
3. neighbour smoothing: each passage gains a share of its thread neighbours' scores;
4. thread prior: a BM25 score of the whole thread (session) for the query multiplies the passage score, so turns
   of the conversation that is about the topic rank first;
5. the lexical score, scaled to a best of 1, is added to ``dense_weight`` x the cosine similarity with the query;
6. the result is multiplied by the time preference (items in the asked-for range first), a recency preference
   (``recency_weight``: newer items a little first, halving with ``recency_half_life_days`` of age) and the
   passage's own ``weight`` (a prior supplied by the caller).

:class:`HybridRetriever` holds everything in memory and is incremental (recall keeps one per user, see
:mod:`memstack.retrieval.archive`). Steps 3-6 are :func:`fuse`, which also ranks the part of an archive a database
hands over (:func:`memstack.retrieval.archive.rank_candidates`): one formula, wherever the passages live.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from memstack.errors import DimensionMismatch, InputError
from memstack.retrieval.bm25 import BM25Index
from memstack.retrieval.fusion import max_normalize, neighbour_smooth, recency, time_boost, top_k
from memstack.retrieval.time_range import TimeRange, find_time_range
from memstack.text import query_terms, tokenize
from memstack.types import Vector

__all__ = ["Hit", "HybridRetriever", "Passage", "Query", "RetrievalSettings", "days_since_epoch", "fuse"]

_EPOCH = datetime(1970, 1, 1)


@dataclass(frozen=True, slots=True)
class Passage:
    """One retrievable item. ``thread`` groups consecutive passages (a session); ``weight`` is a prior (1 = none)."""

    id: str
    text: str
    at: datetime | None = None
    thread: str | None = None
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not self.id:
            raise InputError("a passage needs an id; use the archived turn's or the memory's id")
        if self.weight < 0:
            raise InputError(f"passage weight must be >= 0, got {self.weight} for {self.id!r}")


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    """The ranking's parameters; the defaults are the ones ``memstack eval locomo`` reports."""

    context_turns: int = 1
    neighbour_weight: float = 0.2
    thread_weight: float = 1.0
    dense_weight: float = 1.0
    time_weight: float = 1.0
    time_tau_days: float = 7.0
    recency_weight: float = 0.0
    recency_half_life_days: float = 90.0
    k1: float = 1.2
    b: float = 0.75

    def __post_init__(self) -> None:
        if self.context_turns < 0 or self.time_tau_days <= 0 or self.recency_half_life_days <= 0:
            raise InputError("context_turns must be >= 0, time_tau_days and recency_half_life_days > 0")
        weights = (self.neighbour_weight, self.thread_weight, self.dense_weight, self.time_weight, self.recency_weight)
        if min(weights) < 0:
            raise InputError(f"retrieval weights must be >= 0, got {weights}")


@dataclass(frozen=True, slots=True)
class Hit:
    passage: Passage
    score: float
    rank: int  # 1 = best
    time_range: TimeRange | None = field(default=None, compare=False)


def _naive_utc(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo is not None else when


def days_since_epoch(when: datetime | None) -> float:
    """Days since 1970 (naive times are taken as UTC); NaN for an untimed passage."""
    return float("nan") if when is None else (_naive_utc(when) - _EPOCH).total_seconds() / 86400


_days = days_since_epoch

Floats = npt.NDArray[np.float64]
Links = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Query:
    """A query as the ranking reads it: its time range resolved against ``now`` (naive UTC) and the stems matched
    lexically (the time expression removed)."""

    text: str
    terms: tuple[str, ...]
    now: datetime
    time_range: TimeRange | None = None

    @classmethod
    def parse(cls, text: str, settings: RetrievalSettings, *, now: datetime | None = None) -> Query:
        when = _naive_utc(now) if now is not None else _naive_utc(datetime.now(UTC))
        time_range = find_time_range(text, when) if settings.time_weight > 0 else None
        terms = query_terms(time_range.strip(text) if time_range else text)
        return cls(text, tuple(terms), when, time_range)


def fuse(
    settings: RetrievalSettings,
    query: Query,
    keys: Floats,
    prev: Links,
    nxt: Links,
    *,
    threads: Floats | None = None,
    thread_of: Links | None = None,
    dense: Floats | None = None,
    days: Floats | None = None,
    weights: Floats | None = None,
) -> Floats:
    """Steps 3-6 for some passages: ``keys`` is each one's BM25 over turn keys, ``prev``/``nxt`` its thread
    neighbours (indices, -1 for none), ``threads`` the BM25 of each thread and ``thread_of`` each passage's
    (-1 for none), ``dense`` the dot product with the query vector, ``days`` when each was said (NaN: untimed).

    The passages must include every one with a lexical score (those whose key holds a query term and their
    neighbours) for the scaling to the best lexical score to be the whole collection's."""
    s = settings
    lexical = neighbour_smooth(keys, prev, nxt, s.neighbour_weight)
    if s.thread_weight > 0 and threads is not None and thread_of is not None and threads.size:
        thread_scores = np.append(max_normalize(threads), 0.0)
        lexical = lexical * (1.0 + s.thread_weight * thread_scores[thread_of])
    fused = max_normalize(lexical)
    if dense is not None and s.dense_weight > 0:
        fused = fused + s.dense_weight * dense
    if query.time_range is not None and days is not None:
        tr = query.time_range
        start, end = _days(tr.start - tr.slack), _days(tr.end + tr.slack)
        distance = np.nan_to_num(np.maximum(np.maximum(start - days, days - end), 0.0), nan=np.inf)
        fused = fused * time_boost(distance, s.time_weight, s.time_tau_days)
    if s.recency_weight > 0 and days is not None:
        fused = fused * recency(_days(query.now) - days, s.recency_weight, s.recency_half_life_days)
    if weights is not None:
        fused = fused * weights
    return fused


class HybridRetriever:
    """Holds passages and their vectors; ``search`` ranks them for a query. Not thread-safe: one per user."""

    def __init__(self, settings: RetrievalSettings | None = None, *, dim: int | None = None) -> None:
        self.settings = settings or RetrievalSettings()
        self.dim = dim
        self._passages: list[Passage] = []
        self._tokens: list[list[str]] = []
        self._keys = BM25Index(k1=self.settings.k1, b=self.settings.b)
        self._prev: list[int] = []
        self._next: list[int] = []
        self._thread_of: list[int] = []
        self._threads: dict[str, int] = {}
        self._thread_last: dict[int, int] = {}
        self._thread_tokens: list[list[str]] = []
        self._vectors: list[Vector] = []
        self._position: dict[str, int] = {}
        self._cache: dict[str, object] = {}

    def __len__(self) -> int:
        return len(self._passages)

    @property
    def passages(self) -> Sequence[Passage]:
        return self._passages

    def previous(self, index: int) -> int | None:
        """The passage before passage ``index`` in its thread, or ``None``."""
        before = self._prev[index]
        return before if before >= 0 else None

    @property
    def vectors(self) -> Sequence[Vector]:
        """One vector per passage, in insertion order (empty when the passages came without vectors)."""
        return self._vectors

    def add(self, passages: Sequence[Passage], vectors: Vector | None = None) -> None:
        """Append passages (oldest first within a thread) with one vector row each, or none at all."""
        if vectors is not None:
            matrix = np.asarray(vectors, dtype=np.float32)
            if matrix.ndim != 2 or matrix.shape[0] != len(passages):
                raise InputError(f"need one vector per passage: {len(passages)} passages, vectors {matrix.shape}")
            if self.dim is None:
                self.dim = int(matrix.shape[1])
            if matrix.shape[1] != self.dim:
                raise DimensionMismatch(self.dim, int(matrix.shape[1]))
            if self._passages and len(self._vectors) != len(self._passages):
                raise InputError("passages were added without vectors before; add all with vectors or none")
        elif self._vectors:
            raise InputError("this retriever holds vectors; pass one vector per passage")
        ids = [p.id for p in passages]
        if len(set(ids)) != len(ids) or not self._position.keys().isdisjoint(ids):
            raise InputError("passage ids must be unique; each archived turn or memory is added once")
        for row, passage in enumerate(passages):
            self._add_one(passage, None if vectors is None else matrix[row])
        self._cache.clear()

    def _add_one(self, passage: Passage, vector: Vector | None) -> None:
        index = len(self._passages)
        tokens = tokenize(passage.text)
        thread = -1
        previous = -1
        if passage.thread is not None:
            thread = self._threads.setdefault(passage.thread, len(self._threads))
            if thread == len(self._thread_tokens):
                self._thread_tokens.append([])
            self._thread_tokens[thread].extend(tokens)
            previous = self._thread_last.get(thread, -1)
            self._thread_last[thread] = index
        key = list(tokens)
        back = previous
        for _ in range(self.settings.context_turns):
            if back < 0:
                break
            key.extend(self._tokens[back])
            back = self._prev[back]
        self._keys.add_tokens(key)
        self._position[passage.id] = index
        self._passages.append(passage)
        self._tokens.append(tokens)
        self._prev.append(previous)
        self._next.append(-1)
        if previous >= 0:
            self._next[previous] = index
        self._thread_of.append(thread)
        if vector is not None:
            self._vectors.append(vector)

    def _arrays(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        if "links" not in self._cache:
            self._cache["links"] = (
                np.asarray(self._prev, dtype=np.int64),
                np.asarray(self._next, dtype=np.int64),
                np.asarray(self._thread_of, dtype=np.int64),
            )
        links: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]] = self._cache["links"]  # type: ignore[assignment]
        return links

    def _thread_index(self) -> BM25Index:
        if "threads" not in self._cache:
            index = BM25Index(k1=self.settings.k1, b=self.settings.b)
            for tokens in self._thread_tokens:
                index.add_tokens(tokens)
            self._cache["threads"] = index
        threads: BM25Index = self._cache["threads"]  # type: ignore[assignment]
        return threads

    def _matrix(self) -> Vector | None:
        if not self._vectors:
            return None
        if "matrix" not in self._cache:
            self._cache["matrix"] = np.stack(self._vectors)
        matrix: Vector = self._cache["matrix"]  # type: ignore[assignment]
        return matrix

    def _days(self) -> npt.NDArray[np.float64]:
        if "days" not in self._cache:
            self._cache["days"] = np.array([_days(p.at) for p in self._passages])
        days: npt.NDArray[np.float64] = self._cache["days"]  # type: ignore[assignment]
        return days

    def _weights(self) -> npt.NDArray[np.float64] | None:
        if "weights" not in self._cache:
            weights = np.array([p.weight for p in self._passages], dtype=np.float64)
            self._cache["weights"] = weights if np.any(weights != 1.0) else None
        cached: npt.NDArray[np.float64] | None = self._cache["weights"]  # type: ignore[assignment]
        return cached

    def scores(
        self, query: str | Query, query_vector: Vector | None = None, *, now: datetime | None = None
    ) -> tuple[Floats, TimeRange | None]:
        """The fused score of every passage, in insertion order, and the time range read from the query."""
        s = self.settings
        q = query if isinstance(query, Query) else Query.parse(query, s, now=now)
        prev, nxt, thread_of = self._arrays()
        threads = self._thread_index().scores(q.terms) if s.thread_weight > 0 and self._thread_tokens else None
        dense = None
        matrix = self._matrix()
        if query_vector is not None and matrix is not None and s.dense_weight > 0:
            vector = np.asarray(query_vector, dtype=np.float32).reshape(-1)
            if vector.shape[0] != matrix.shape[1]:
                raise DimensionMismatch(int(matrix.shape[1]), int(vector.shape[0]))
            dense = (matrix @ vector).astype(np.float64)
        days = self._days() if q.time_range is not None or s.recency_weight > 0 else None
        fused = fuse(
            s,
            q,
            self._keys.scores(q.terms),
            prev,
            nxt,
            threads=threads,
            thread_of=thread_of,
            dense=dense,
            days=days,
            weights=self._weights(),
        )
        return fused, q.time_range

    def search(
        self, query: str | Query, query_vector: Vector | None = None, *, k: int = 10, now: datetime | None = None
    ) -> list[Hit]:
        """The ``k`` best passages, best first. ``now`` resolves relative times (default: the current time)."""
        if k <= 0:
            raise InputError(f"k must be a positive number of results, got {k}")
        scores, time_range = self.scores(query, query_vector, now=now)
        return [
            Hit(self._passages[i], float(scores[i]), rank, time_range)
            for rank, i in enumerate(top_k(scores, k), start=1)
        ]

    def windows(self, hits: Sequence[Hit], *, before: int | None = None) -> list[list[Passage]]:
        """Each hit with the ``before`` passages preceding it in its thread (default: ``context_turns``), overlapping
        windows merged, in thread order: what a prompt shows, with no passage twice."""
        back = self.settings.context_turns if before is None else before
        chosen: set[int] = set()
        for hit in hits:
            if hit.passage.id not in self._position:
                raise InputError(f"hit {hit.passage.id!r} is not a passage of this retriever")
            i = self._position[hit.passage.id]
            chosen.add(i)
            for _ in range(back):
                i = self._prev[i]
                if i < 0:
                    break
                chosen.add(i)
        windows: list[list[Passage]] = []
        window_of: dict[int, int] = {}
        for i in sorted(chosen):
            previous = self._prev[i]
            if previous in window_of:
                window_of[i] = window_of[previous]
                windows[window_of[i]].append(self._passages[i])
            else:
                window_of[i] = len(windows)
                windows.append([self._passages[i]])
        return windows
