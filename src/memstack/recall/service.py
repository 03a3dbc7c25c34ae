"""Recall: a user's long-term memories and archived messages, ranked together for one query.

::

    recaller = Recaller(store, embedder, scorer)
    items = await recaller.recall(user, "what did I say about the Boston trip?", k=10, at=now)

Per query: the query is embedded once (or the caller's vector is used); the archived messages are ranked by the
hybrid formula (:mod:`memstack.retrieval`: BM25 over message keys + MiniLM cosine, thread-aware, time expressions
resolved against ``at``), by the database or from an in-memory index (:mod:`memstack.recall.index`); the memories
are scored by :class:`~memstack.capture.scoring.MemoryScorer`
(vector + full text in the store, category weights, schedule decay, expiry), scaled by ``memory_weight`` and given
the same time preference; both lists are merged by score. What ``memstack eval locomo`` measures is this ranking.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial

import numpy as np

from memstack.capture.scoring import MemoryScorer
from memstack.dates import check_time
from memstack.embed import Embedder
from memstack.errors import InputError
from memstack.recall.index import ArchiveIndex
from memstack.retrieval import RetrievalSettings, TimeRange, time_boost
from memstack.retrieval.archive import ArchiveQuery, message_text
from memstack.types import ArchiveMatch, Category, RecallItem, RecallKind, ScoredMemory, UserRef, Vector, utcnow
from memstack.types.memories import check_as_of

__all__ = ["RECALL_RETRIEVAL", "RecallSettings", "Recaller"]

#: The archive ranking's settings (see ``memstack eval locomo``).
RECALL_RETRIEVAL = RetrievalSettings()


@dataclass(frozen=True, slots=True)
class RecallSettings:
    """``retrieval``: how archived messages are ranked. ``memory_weight``: a memory's score (cosine + lexical,
    x category weight) relative to an archived message's (lexical + cosine). ``memory_pool``: memories asked of
    the store per query. ``max_messages``: archived messages kept indexed in memory, all users together (about
    6 KB each with their vectors and search structures; the engine's default is ``Config.recall_cache_messages``),
    where the store is embedded (SQLite; 0: none); a database server ranks them itself."""

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
        as_of: datetime | None = None,
        with_past: bool = False,
    ) -> list[RecallItem]:
        """The ``k`` best items for ``query``, best first. ``at``: when the question is asked (relative times such
        as "two weeks ago" are read against it; default now). ``vector``: the query's embedding when the caller
        has it. ``kinds``: memory, turn or both (default). ``exclude_session``: leave out that session's messages
        (the current conversation, which the turn's own layers show). ``agent_id``/``weights``: as for memories.
        ``as_of``: the memories that held then, weighed as at that time, and ``at`` defaults to it (archived messages
        are not filtered by it: what was said stays said). ``with_past``: past versions of memories too, below the
        current ones (:meth:`~memstack.capture.scoring.MemoryScorer.recall`; a chat turn's memory layer)."""
        as_of = check_as_of(as_of)
        if at is None and as_of is not None:
            at = as_of
        if not query.strip():
            raise InputError("recall needs a query; pass the text to recall things for")
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        wanted = _kinds(kinds)
        now = _aware(check_time(at, "at")) if at is not None else self.clock()
        warm = asyncio.ensure_future(self.archive.current(user)) if RecallKind.TURN in wanted else None
        try:
            if vector is None:
                vector = (await self.embedder.embed([query]))[0]
            if warm is not None:
                await warm  # an in-memory index caught up while the query was embedded
        except BaseException:
            if warm is not None and not warm.done():
                warm.cancel()
            raise
        asked = ArchiveQuery.of(query, vector, self.settings.retrieval, now=now)
        tasks: list[asyncio.Future[list[RecallItem]]] = []
        if RecallKind.TURN in wanted:  # the store ranks the archive while it ranks the memories
            tasks.append(asyncio.ensure_future(self._messages(user, asked, k, exclude_session)))
        if RecallKind.MEMORY in wanted and self.settings.memory_weight > 0:
            pool = max(k, self.settings.memory_pool)
            found = partial(
                self.scorer.recall,
                user,
                query,
                vector,
                k=pool,
                agent_id=agent_id,
                now=now,
                weights=weights,
                as_of=as_of,
                with_past=with_past,
            )
            tasks.append(asyncio.ensure_future(self._memories(found, asked.query.time_range)))
        try:
            lists = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            raise
        items = [item for found_items in lists for item in found_items]
        items.sort(key=lambda item: (-item.score, item.kind.value, item.id))
        return items[:k]

    async def _messages(self, user: UserRef, query: ArchiveQuery, k: int, exclude: str | None) -> list[RecallItem]:
        matches = await self.archive.search(user, query, k, exclude_session=exclude)
        return [_item(m) for m in matches]

    async def _memories(
        self, found: Callable[[], Awaitable[Sequence[ScoredMemory]]], time_range: TimeRange | None
    ) -> list[RecallItem]:
        s = self.settings
        out = []
        for hit in await found():
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
                    valid_from=m.valid_from,
                    valid_to=m.valid_to,
                    vector=hit.vector,
                )
            )
        return out


def _item(match: ArchiveMatch) -> RecallItem:
    m, before = match.message, match.previous
    return RecallItem(
        RecallKind.TURN,
        m.id,
        message_text(m.text, m.speaker),
        match.score,
        m.at,
        (m.turn_id,),
        m.session_id,
        m.role,
        m.speaker,
        context=message_text(before.text, before.speaker) if before is not None else "",
        context_id=before.id if before is not None else None,
    )
