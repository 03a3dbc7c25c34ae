"""Explicit adds (``AsyncMemstack.add`` and what is built on it: the HTTP API, the CLI, MCP): a memory the user already
has is handed back, not stored a second time.

A duplicate is decided as the capture pipeline decides it (:mod:`memstack.capture.writer`), among the user's active
memories nearest the new one (one nearest-neighbour call):

* the **same text**, once case, runs of whitespace and trailing punctuation are set aside
  (:func:`~memstack.capture.dedup.exact_duplicate`);
* else what the calibrated rule of the embedding model calls a **duplicate**
  (:meth:`~memstack.capture.dedup.DedupRule.decide`: the same threshold as automatic capture, no second one). The
  rule's *update* decision is not acted on here: an explicit add stores what it was given, beside the memory it
  contradicts, as it always has.

A duplicate returns the existing memory with action ``duplicate``: nothing is stored, nothing counts against the tier
limit, and a full tier answers ``duplicate`` (not ``LimitReached``) for a memory already held. ``force=True`` stores
the memory anyway. Only memories the new one would share its scope with are compared: a shared memory with shared
ones, an agent's private memory with the shared ones and that agent's own, and only those with the same metadata
(the caller's labels, such as a project: "prefers tabs" for project A is not held for project B, and a memory
without metadata is not one with). Forgotten memories are not compared: the
user put them aside, so adding the same text again stores a new memory (``restore`` brings back the old one with its
history). Adds for one user are serialised in this process (nearest → decide → insert under a per-user lock), so two
identical adds at once store one memory; across processes, an HTTP retry is made safe by its idempotency key
(:mod:`memstack.server.idempotency`), not by this check.
"""

from __future__ import annotations

from memstack.capture.dedup import NEAREST_K, DedupAction, DedupRule, exact_duplicate
from memstack.capture.writer import UserLocks
from memstack.store.base import Store
from memstack.types import AddResult, MemoryFilter, NewMemory, UpdateAction, UserRef, Vector

__all__ = ["ExplicitAdds"]

#: Nearest memories fetched before those of another scope (other agents' private ones) are set aside.
_FETCH = 10


class ExplicitAdds:
    """Adds to one store (not owned) with one dedup rule; see the module docstring."""

    def __init__(self, store: Store, rule: DedupRule, *, neighbours: int = NEAREST_K) -> None:
        self.store = store
        self.rule = rule
        self.neighbours = neighbours
        self._locks = UserLocks()

    async def add(
        self, user: UserRef, new: NewMemory, vector: Vector, *, limit: int | None, force: bool = False
    ) -> AddResult:
        """Store ``new`` (embedded as ``vector``) under the tier ``limit`` (``LimitReached`` when full), unless the
        user already has it (then the existing memory, action ``duplicate``); ``force`` skips the check."""
        async with self._locks.hold(user):
            if not force and (found := await self.duplicate_of(user, new, vector)) is not None:
                return found
            memory = await self.store.memories.add(user, new, vector, limit=limit, actor="user")
            return AddResult(memory, UpdateAction.CREATED)

    async def duplicate_of(self, user: UserRef, new: NewMemory, vector: Vector) -> AddResult | None:
        """The active memory of ``user`` that ``new`` duplicates (as an :class:`AddResult`), or ``None``."""
        labels = {k: v for k, v in new.metadata.items() if not isinstance(v, list | dict)}  # what a filter can match
        flt = MemoryFilter(agent_id=new.agent_id, metadata=labels)
        found = await self.store.index.nearest(user, vector, _FETCH, flt)
        scoped = [h for h in found if h.memory.agent_id in (None, new.agent_id) and h.memory.metadata == new.metadata]
        hits = scoped[: self.neighbours]
        if (same := exact_duplicate(new.content, hits)) is not None:
            return AddResult(same.memory, UpdateAction.DUPLICATE, "the same text")
        decision = self.rule.decide(new.content, hits)
        if decision.action is DedupAction.DUPLICATE and decision.existing_id is not None:
            existing = next(hit.memory for hit in hits if hit.memory.id == decision.existing_id)
            return AddResult(existing, UpdateAction.DUPLICATE, decision.reason)
        return None
