"""Recall: a user's long-term memories and archived messages, ranked together for one query.

::

    recaller = Recaller(store, embedder, scorer)
    items = await recaller.recall(user, "what did I say about the Boston trip?", k=10, at=now)

Per query: the query is embedded once (or the caller's vector is used); the user's archive index is brought up to
date (one store query, :mod:`memstack.recall.index`); every archived message is scored by the hybrid retriever
(:mod:`memstack.retrieval`: BM25 over message keys + MiniLM cosine, thread-aware, time expressions resolved against
``at``, a mild recency preference); the memories are scored by :class:`~memstack.capture.scoring.MemoryScorer`
(vector + full text in the store, category weights, schedule decay, expiry), scaled by ``memory_weight`` and given
the same time preference; both lists are merged by score. What ``memstack eval locomo`` measures is this ranking.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from memstack.capture.scoring import MemoryScorer
from memstack.embed import Embedder
from memstack.errors import InputError
from memstack.recall.index import ArchiveIndex, UserArchive, message_text
from memstack.retrieval import RetrievalSettings, TimeRange, find_time_range, time_boost, top_k
from memstack.types import Category, RecallItem, RecallKind, ScoredMemory, UserRef, Vector, utcnow

__all__ = ["RECALL_RETRIEVAL", "RecallSettings", "Recaller"]

#: The archive ranking's settings (see ``memstack eval locomo``).
RECALL_RETRIEVAL = RetrievalSettings()


@dataclass(frozen=True, slots=True)
class RecallSettings:
    """``retrieval``: how archived messages are ranked. ``memory_weight``: a memory's score (cosine + lexical,
    x category weight) relative to an archived message's (lexical + cosine). ``memory_pool``: memories asked of
    the store per query. ``max_messages``: archived messages kept indexed in memory, all users together (about
    6 KB each with their vectors and search structures; the engine's default is ``Config.recall_cache_messages``)."""

    retrieval: RetrievalSettings = field(default_factory=lambda: RECALL_RETRIEVAL)
    memory_weight: float = 1.0
    memory_pool: int = 30
    max_messages: int = 50_000

    def __post_init__(self) -> None:
        if self.memory_weight < 0 or self.memory_pool < 1 or self.max_messages < 0:
            raise InputError("memory_weight must be >= 0, memory_pool >= 1 and max_messages >= 0")


def _kinds(kinds: Sequence[RecallKind | str] | None) -> frozenset[RecallKind]:
    if kinds is None:
        return frozenset(RecallKind)
    try:
        return frozenset(RecallKind(k) for k in kinds)
    except ValueError:
        raise InputError(f"kinds must be among {', '.join(k.value for k in RecallKind)}, got {list(kinds)}") from None


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


class Recaller:
    """Ranks memories and archived messages for a query. One per engine; safe for concurrent queries."""

    def __init__(
        self,
        store_index: ArchiveIndex,
        embedder: Embedder,
        scorer: MemoryScorer,
        settings: RecallSettings | None = None,
        *,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.archive = store_index
        self.embedder = embedder
        self.scorer = scorer
        self.settings = settings or RecallSettings()
        self.clock = clock

    async def recall(
        self,
        user: UserRef,
        query: str,
        *,
        k: int = 10,
        at: datetime | None = None,
        vector: Vector | None = None,
        kinds: Sequence[RecallKind | str] | None = None,
        exclude_session: str | None = None,
        agent_id: str | None = None,
        weights: Mapping[Category | str, float] | None = None,
    ) -> list[RecallItem]:
        """The ``k`` best items for ``query``, best first. ``at``: when the question is asked (relative times such
        as "two weeks ago" are read against it; default now). ``vector``: the query's embedding when the caller
        has it. ``kinds``: memory, turn or both (default). ``exclude_session``: leave out that session's messages
        (the current conversation, which the turn's own layers show). ``agent_id``/``weights``: as for memories."""
        if not query.strip():
            raise InputError("recall needs a query; pass the text to recall things for")
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        wanted = _kinds(kinds)
        now = _aware(at) if at is not None else self.clock()
        archive_task = asyncio.ensure_future(self.archive.current(user)) if RecallKind.TURN in wanted else None
        try:
            if vector is None:
                vector = (await self.embedder.embed([query]))[0]
            archive = await archive_task if archive_task is not None else None
        except BaseException:
            if archive_task is not None and not archive_task.done():
                archive_task.cancel()
            raise
        time_range = find_time_range(query, now.astimezone(UTC).replace(tzinfo=None))
        memories = None
        if RecallKind.MEMORY in wanted and self.settings.memory_weight > 0:  # the store works while messages rank
            pool = max(k, self.settings.memory_pool)
            memories = asyncio.ensure_future(
                self.scorer.recall(user, query, vector, k=pool, agent_id=agent_id, now=now, weights=weights)
            )
        items: list[RecallItem] = []
        try:
            if archive is not None and len(archive):
                items += self._messages(archive, query, vector, now, k, exclude_session)
            if memories is not None:
                items += self._memories(await memories, time_range)
        except BaseException:
            if memories is not None and not memories.done():
                memories.cancel()
            raise
        items.sort(key=lambda item: (-item.score, item.kind.value, item.id))
        return items[:k]

    def _messages(
        self, archive: UserArchive, query: str, vector: Vector, now: datetime, k: int, exclude: str | None
    ) -> list[RecallItem]:
        scores, _ = archive.retriever.scores(query, vector, now=now)
        if exclude is not None:
            thread = archive.thread_of().get(exclude)
            if thread is not None:
                scores = np.where(np.asarray([m.session_id == exclude for m in archive.messages]), 0.0, scores)
        out = []
        for i in top_k(scores, k):
            if scores[i] <= 0:
                break
            m = archive.messages[i]
            before = archive.retriever.previous(i)
            context = ""
            if before is not None:
                b = archive.messages[before]
                context = message_text(b.text, b.speaker)
            out.append(
                RecallItem(
                    RecallKind.TURN,
                    m.id,
                    message_text(m.text, m.speaker),
                    float(scores[i]),
                    m.at,
                    (m.turn_id,),
                    m.session_id,
                    m.role,
                    m.speaker,
                    context=context,
                )
            )
        return out

    def _memories(self, found: Sequence[ScoredMemory], time_range: TimeRange | None) -> list[RecallItem]:
        s = self.settings
        out = []
        for hit in found:
            m = hit.memory
            when = m.observed_at or m.created_at
            score = hit.score * s.memory_weight
            if time_range is not None and s.retrieval.time_weight > 0:
                naive = _aware(when).astimezone(UTC).replace(tzinfo=None)
                distance = np.asarray([time_range.distance_days(naive)])
                score *= float(time_boost(distance, s.retrieval.time_weight, s.retrieval.time_tau_days)[0])
            out.append(
                RecallItem(
                    RecallKind.MEMORY,
                    m.id,
                    m.content,
                    score,
                    when,
                    tuple(m.source_turn_ids),
                    category=m.category,
                )
            )
        return out
