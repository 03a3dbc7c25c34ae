"""A user's archived messages ranked for a query: one ranking, whether the archive is indexed in memory or a
database hands over the part of it that can score.

- :class:`UserArchive`: one user's messages (with their vectors) in a :class:`HybridRetriever`, in conversation
  order; :meth:`UserArchive.rank` ranks them all. Recall keeps these in memory where the store lives in the process
  (SQLite), bounded (:mod:`memstack.recall.index`); the SQLite store builds one per query when it has to.
- :class:`Candidates` and :func:`rank_candidates`: a database (PostgreSQL) finds, with its indexes, every message a
  query term can lift (those holding a term, the messages after them, whose turn key holds it, and the
  neighbours of both), the nearest messages by vector and, when the query names a time, the nearest in that time;
  with the statistics of the user's whole archive, :func:`~memstack.retrieval.retriever.fuse` then gives those
  messages the scores the in-memory retriever would, exactly for the lexical part (same counts, same arithmetic),
  to float rounding for the vectors. A message that is in none of those sets has no lexical score and a vector
  farther than all of them, so it could only rank by being near the asked-for time without being near the query.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np
import numpy.typing as npt

from memstack.errors import InputError
from memstack.retrieval.bm25 import bm25_scores
from memstack.retrieval.fusion import top_k
from memstack.retrieval.retriever import HybridRetriever, Passage, Query, RetrievalSettings, fuse
from memstack.types import ArchivedMessage, ArchiveMatch, Vector

__all__ = ["ArchiveQuery", "ArchiveStats", "Candidates", "UserArchive", "message_text", "rank_candidates"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def message_text(text: str, speaker: str | None) -> str:
    """What is indexed and embedded for a message: ``"Speaker: text"`` when its speaker is known."""
    return f"{speaker}: {text}" if speaker else text


@dataclass(frozen=True, slots=True)
class ArchiveQuery:
    """One recall query over an archive: the parsed text, its vector (``None``: lexical only) and the settings."""

    query: Query
    vector: Vector | None
    settings: RetrievalSettings

    @classmethod
    def of(
        cls, text: str, vector: Vector | None, settings: RetrievalSettings, *, now: datetime | None = None
    ) -> ArchiveQuery:
        return cls(Query.parse(text, settings, now=now), vector, settings)


def _order(message: ArchivedMessage) -> tuple[int, int]:
    return (message.turn, 0 if message.role == "user" else 1)


@dataclass(eq=False)
class UserArchive:
    """One user's indexed messages: ``messages[i]`` is passage ``i`` of ``retriever`` (without its vector), sessions
    in the order they were first written, each in turn order; ``seq`` is the last store ``seq`` read.

    Exchanges a forgotten memory hides (:meth:`hide`: ``(session_id, turn)`` pairs) stay indexed but are never
    ranked nor shown as the message before one that is: a flag per message, set when the hidden set changes (a
    forget or a restore: one pass over the messages) and for each message added, so a query pays one vectorised
    mask, never a pass in Python."""

    settings: RetrievalSettings
    retriever: HybridRetriever = field(init=False)
    messages: list[ArchivedMessage] = field(default_factory=list)
    seq: int = 0
    _last: dict[str, tuple[int, int]] = field(default_factory=dict)
    _threads: dict[str, int] = field(default_factory=dict)
    _hidden: frozenset[tuple[str, int]] = field(default_factory=frozenset)
    _hidden_flags: list[bool] = field(default_factory=list)
    _hidden_mask: npt.NDArray[np.bool_] | None = None  # the flags as an array, made again after a change

    def __post_init__(self) -> None:
        self.retriever = HybridRetriever(self.settings)

    def __len__(self) -> int:
        return len(self.messages)

    def hide(self, exchanges: Iterable[tuple[str, int]]) -> None:
        """Leave the messages of these exchanges (``(session_id, turn)``) out of every ranking from now on (the
        set replaces the one before: a restore shows its exchanges again)."""
        hidden = frozenset(exchanges)
        if hidden == self._hidden:
            return
        self._hidden = hidden
        self._hidden_flags = [(m.session_id, m.turn) in hidden for m in self.messages] if hidden else []
        self._hidden_mask = None

    def add(self, rows: Sequence[ArchivedMessage]) -> None:
        """Index ``rows`` (in ``seq`` order, with vectors); rebuilds in session order when one comes before its
        session's last (a message's lexical key includes the message before it)."""
        if not rows:
            return
        self.seq = max(self.seq, max(r.seq for r in rows))
        last = dict(self._last)
        for row in rows:
            if row.session_id in last and _order(row) <= last[row.session_id]:
                self._rebuild([*self._stored_rows(), *rows])
                return
            last[row.session_id] = _order(row)
        self._append(rows)

    def _stored_rows(self) -> list[ArchivedMessage]:
        vectors = self.retriever.vectors
        return [replace(m, embedding=vectors[i]) for i, m in enumerate(self.messages)]

    def _rebuild(self, rows: Sequence[ArchivedMessage]) -> None:
        unique = {r.id: r for r in rows}
        first_seen: dict[str, int] = {}
        for r in sorted(unique.values(), key=lambda r: r.seq):
            first_seen.setdefault(r.session_id, r.seq)
        ordered = sorted(unique.values(), key=lambda r: (first_seen[r.session_id], _order(r)))
        self.retriever = HybridRetriever(self.settings)
        self.messages = []
        self._last = {}
        self._threads = {}
        self._hidden_flags = []
        self._append(ordered)

    def _append(self, rows: Sequence[ArchivedMessage]) -> None:
        passages = []
        for r in rows:
            self._threads.setdefault(r.session_id, len(self._threads))
            self._last[r.session_id] = _order(r)
            passages.append(Passage(r.id, message_text(r.text, r.speaker), r.at, r.session_id))
        matrix = np.stack([np.asarray(r.embedding, dtype=np.float32) for r in rows])
        self.retriever.add(passages, matrix)
        self.messages.extend(replace(r, embedding=None) for r in rows)
        if self._hidden:
            self._hidden_flags.extend((r.session_id, r.turn) in self._hidden for r in rows)
            self._hidden_mask = None

    def rank(self, query: ArchiveQuery, k: int, *, exclude_session: str | None = None) -> list[ArchiveMatch]:
        """The ``k`` best messages with a positive score, best first; ``exclude_session``'s messages and hidden ones
        are left out (they still count in the statistics and the scaling, as in every other ranking of the
        archive)."""
        if query.settings != self.settings:
            raise InputError("this archive was indexed with other retrieval settings; rank with its own")
        if not self.messages:
            return []
        scores, _ = self.retriever.scores(query.query, query.vector)
        if exclude_session is not None and exclude_session in self._threads:
            scores = np.where(np.asarray([m.session_id == exclude_session for m in self.messages]), 0.0, scores)
        hidden = None
        if self._hidden:
            if self._hidden_mask is None:
                self._hidden_mask = np.asarray(self._hidden_flags, dtype=bool)
            hidden = self._hidden_mask
            scores = np.where(hidden, 0.0, scores)
        out = []
        for i in top_k(scores, k):
            if scores[i] <= 0:
                break
            before = self.retriever.previous(i)
            if before is not None and hidden is not None and hidden[before]:
                before = None
            out.append(
                ArchiveMatch(self.messages[i], float(scores[i]), None if before is None else self.messages[before])
            )
        return out


@dataclass(frozen=True, slots=True)
class ArchiveStats:
    """A user's whole archive, as BM25 needs it: messages with a vector, their terms, the terms of their turn keys
    (each message's and the one's before it), and the sessions (threads) they are in."""

    messages: int
    terms: int
    key_terms: int
    threads: int


@dataclass(frozen=True, slots=True)
class Candidates:
    """The messages a database found for a query (see the module docstring), in archive order (session, turn,
    side), one entry per message in each array: the store's id of the message, of the one before it in its session
    (-1: none) and of its session; ``tf[i, t]`` how often query term ``t`` occurs in it; its terms and its turn
    key's; its dot product with the query vector (``None`` without one); when it was said (days since 1970); whether
    its session is excluded. ``thread_terms``: the terms of each session holding a query term."""

    ids: Ints
    prev: Ints
    thread: Ints
    tf: Floats
    lengths: Floats
    key_lengths: Floats
    dense: Floats | None
    days: Floats
    excluded: npt.NDArray[np.bool_]
    stats: ArchiveStats
    thread_terms: Mapping[int, int]


def rank_candidates(candidates: Candidates, query: ArchiveQuery, k: int) -> list[tuple[int, float]]:
    """``(id, score)`` of the ``k`` best candidates with a positive score, best first: the in-memory ranking's
    formula (:meth:`UserArchive.rank`) over the part of the archive that can score."""
    c, s = candidates, query.settings
    n = len(c.ids)
    if n == 0 or c.stats.messages == 0:
        return []
    prev = _positions(c.ids, c.prev)
    nxt = np.full(n, -1, dtype=np.int64)
    nxt[prev[prev >= 0]] = np.flatnonzero(prev >= 0)
    own = np.asarray(c.tf, dtype=np.float64).reshape(n, len(query.query.terms))
    if s.context_turns == 0:
        key_tf, key_lengths, key_total = own, c.lengths, c.stats.terms
    elif s.context_turns == 1:
        before = np.vstack([own, np.zeros((1, own.shape[1]))])[prev]  # row -1: the zero row
        key_tf, key_lengths, key_total = own + before, c.key_lengths, c.stats.key_terms
    else:
        raise InputError(
            f"an archive ranked by the database keys each message with the one before it (context_turns 0 or 1), "
            f"not {s.context_turns}; use 0 or 1, or an in-memory index"
        )
    key_df = [int(x) for x in (key_tf > 0).sum(axis=0)]
    keys = bm25_scores(key_tf, key_lengths, key_df, c.stats.messages, key_total, k1=s.k1, b=s.b)
    # Sessions as BM25 documents: those holding no term score 0 whatever their length.
    threads, thread_of = np.unique(c.thread, return_inverse=True)
    thread_tf = np.zeros((len(threads), own.shape[1]), dtype=np.float64)
    np.add.at(thread_tf, thread_of, own)
    thread_lengths = np.asarray([c.thread_terms.get(int(t), 1) for t in threads], dtype=np.float64)
    thread_df = [int(x) for x in (thread_tf > 0).sum(axis=0)]
    thread_scores = bm25_scores(thread_tf, thread_lengths, thread_df, c.stats.threads, c.stats.terms, k1=s.k1, b=s.b)
    fused = fuse(
        s,
        query.query,
        keys,
        prev,
        nxt,
        threads=thread_scores,
        thread_of=thread_of.astype(np.int64),
        dense=c.dense,
        days=c.days,
    )
    fused = np.where(c.excluded, 0.0, fused)
    return [(int(c.ids[i]), float(fused[i])) for i in top_k(fused, k) if fused[i] > 0]


def _positions(ids: Ints, wanted: Ints) -> Ints:
    """The index in ``ids`` of each of ``wanted`` (-1 where it is not there)."""
    order = np.argsort(ids, kind="stable")
    ranked = ids[order]
    at = np.clip(np.searchsorted(ranked, wanted), 0, len(ids) - 1)
    return np.where(ranked[at] == wanted, order[at], -1).astype(np.int64)
