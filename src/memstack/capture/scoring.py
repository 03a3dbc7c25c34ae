"""Ranking a user's long-term memories for a message: layer 6 of the context and the ``recall_memory`` tool.

One query, two store calls (both scoped to the user inside the store): ``index.nearest`` (dense, cosine) and
``index.search_text`` (lexical, BM25). Then, per memory:

``score = (cosine + lexical_weight × bm25 / best_bm25) × category_weight × schedule_factor``

* **hybrid**: the lexical part finds memories that share a rare word with the message (a name, a course code) that
  the small embedding model places far away. ``memstack eval memories`` measures dense alone, lexical alone and the
  fusion on LoCoMo; :data:`LEXICAL_WEIGHT` is the weight it selects. A memory found only lexically is given the
  lowest cosine of the dense pool (its true cosine is at most that);
* **category weights**: how much a kind of memory matters to an answer, whatever the message (a preference about
  how to answer applies to every reply); chosen as product defaults, configurable per call or per agent;
* **schedule decay**: a schedule memory fades with its age (half-life ``schedule_half_life_days``, never below
  ``schedule_floor``) and is boosted while its date is near; **expired** memories (``expires_at`` passed) are never
  returned, whatever their category.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from types import MappingProxyType

from memstack.errors import InputError
from memstack.store.base import Store
from memstack.types import Category, Memory, MemoryFilter, ScoredMemory, UserRef, Vector, utcnow

__all__ = [
    "DEFAULT_CATEGORY_WEIGHTS",
    "LEXICAL_WEIGHT",
    "MemoryScorer",
    "ScoringSettings",
]

#: Weight of the max-normalised BM25 score added to the cosine (see ``memstack eval memories``).
LEXICAL_WEIGHT = 0.3

#: Product defaults, not fitted: how to answer (preferences, learning style) matters to nearly every reply, goals
#: often; "general" is the classifier's catch-all.
DEFAULT_CATEGORY_WEIGHTS: Mapping[Category, float] = MappingProxyType(
    {
        Category.PREFERENCE: 1.1,
        Category.LEARNINGSTYLE: 1.1,
        Category.GOAL: 1.05,
        Category.FACT: 1.0,
        Category.SCHEDULE: 1.0,
        Category.GENERAL: 0.9,
    }
)


@dataclass(frozen=True, slots=True)
class ScoringSettings:
    """``pool``: results asked of each store search before re-ranking (at least ``k``)."""

    pool: int = 30
    lexical_weight: float = LEXICAL_WEIGHT
    category_weights: Mapping[Category, float] = field(default_factory=lambda: dict(DEFAULT_CATEGORY_WEIGHTS))
    schedule_half_life_days: float = 14.0
    schedule_floor: float = 0.3
    upcoming_days: float = 7.0
    upcoming_boost: float = 1.2
    #: What a past version's score is multiplied by where a caller asks for them beside the current memories (a
    #: chat turn): below 1, so a past fact shows after the current one it led to, at equal relevance.
    past_weight: float = 0.8

    def __post_init__(self) -> None:
        if self.pool < 1:
            raise InputError(f"pool must be at least 1, got {self.pool}")
        if self.lexical_weight < 0 or self.past_weight < 0 or any(w < 0 for w in self.category_weights.values()):
            raise InputError("lexical, past and category weights must be zero or more")
        if self.schedule_half_life_days <= 0 or not 0 <= self.schedule_floor <= 1 or self.upcoming_days < 0:
            raise InputError("schedule_half_life_days must be positive, schedule_floor within 0..1")

    def with_weights(self, weights: Mapping[Category | str, float] | None) -> ScoringSettings:
        """These settings with some category weights replaced (e.g. an agent's ``memory.category_weights``)."""
        if not weights:
            return self
        merged = dict(self.category_weights)
        merged.update({Category.parse(str(c)): float(w) for c, w in weights.items()})
        return replace(self, category_weights=merged)


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=utcnow().tzinfo)


class MemoryScorer:
    """Ranks one user's active memories for a query. Stateless apart from its settings; share one per store."""

    def __init__(
        self, store: Store, settings: ScoringSettings | None = None, *, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.store = store
        self.settings = settings or ScoringSettings()
        self.clock = clock

    def expired(self, memory: Memory, now: datetime) -> bool:
        return memory.expires_at is not None and _aware(memory.expires_at) <= now

    def weight(self, memory: Memory, now: datetime, settings: ScoringSettings | None = None) -> float:
        """Category weight x schedule decay (0 for an expired memory)."""
        s = settings or self.settings
        if self.expired(memory, now):
            return 0.0
        w = s.category_weights.get(memory.category, 1.0)
        if memory.category is Category.SCHEDULE:
            said = _aware(memory.observed_at or memory.created_at)
            age_days = max(0.0, (now - said).total_seconds() / 86400)
            w *= max(s.schedule_floor, 0.5 ** (age_days / s.schedule_half_life_days))
            if memory.expires_at is not None:
                event = _aware(memory.expires_at) - timedelta(days=1)  # expiry is the day after the event
                if event - now <= timedelta(days=s.upcoming_days):
                    w *= s.upcoming_boost
        return w

    async def recall(
        self,
        user: UserRef,
        query: str,
        query_vector: Vector,
        *,
        k: int = 10,
        agent_id: str | None = None,
        categories: tuple[Category, ...] = (),
        now: datetime | None = None,
        weights: Mapping[Category | str, float] | None = None,
        as_of: datetime | None = None,
        with_past: bool = False,
    ) -> list[ScoredMemory]:
        """The ``k`` best active, unexpired memories for ``query`` (embedded as ``query_vector``), best first;
        ``score`` is the final weighted score. ``weights`` overrides some category weights for this call.
        ``as_of``: among what held then (superseded past versions included), weighed as at that time (recency,
        expiry and upcoming dates read against it instead of ``now``). ``with_past`` (without ``as_of``): past
        versions too, by their cosine similarity times ``past_weight`` (one more store search, vector only)."""
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        s = self.settings.with_weights(weights)
        when = _aware(as_of or now or self.clock())
        pool = max(s.pool, k)
        flt = MemoryFilter(categories=categories, agent_id=agent_id, as_of=as_of)
        dense = await self.store.search_index.nearest(user, query_vector, pool, flt)
        lexical: list[ScoredMemory] = []
        if s.lexical_weight > 0 and query.strip():
            lexical = await self.store.search_index.search_text(user, query, pool, as_of=flt.as_of)
        past: dict[str, float] = {}
        if with_past and as_of is None and s.past_weight > 0:
            flt_past = MemoryFilter(categories=categories, agent_id=agent_id, past=True)
            earlier = await self.store.search_index.nearest(user, query_vector, pool, flt_past)
            dense = [*dense, *earlier]
            past = {hit.memory.id: s.past_weight for hit in earlier}
        memories: dict[str, Memory] = {h.memory.id: h.memory for h in dense}
        cosine = {h.memory.id: h.score for h in dense}
        vectors = {h.memory.id: h.vector for h in dense if h.vector is not None}  # passed along (ScoredMemory)
        floor = min(cosine.values(), default=0.0)
        best_bm25 = max((h.score for h in lexical), default=0.0)
        bm25: dict[str, float] = {}
        for hit in lexical:
            m = hit.memory
            if agent_id is not None and m.agent_id not in (None, agent_id):
                continue
            if categories and m.category not in categories:
                continue
            memories.setdefault(m.id, m)
            bm25[m.id] = hit.score / best_bm25 if best_bm25 > 0 else 0.0
        scored: list[ScoredMemory] = []
        for memory_id, memory in memories.items():
            w = self.weight(memory, when, s) * past.get(memory_id, 1.0)
            if w <= 0:
                continue
            fused = cosine.get(memory_id, floor) + s.lexical_weight * bm25.get(memory_id, 0.0)
            scored.append(ScoredMemory(memory, max(fused, 0.0) * w, vectors.get(memory_id)))
        scored.sort(key=lambda h: (-h.score, h.memory.id))
        top = scored[:k]
        unheld = [h.memory.id for h in top if h.vector is None and h.memory.id not in past]
        if unheld:  # found by their words only: the index may hold their vectors all the same
            at_hand = self.store.vectors.at_hand(user, unheld)
            top = [replace(h, vector=at_hand.get(h.memory.id)) if h.vector is None else h for h in top]
        return top
