"""Superseding a memory in time: the news replaces the memory's text in place (same id, ``HistoryAction.SUPERSEDE``,
the old text in its history, as before validity intervals existed) and the old fact is kept as a **past version**: a
row of its own, inactive, with the old text and vector and an interval that ends where the news begins. So the
current memory stays the one the user and the interfaces know by its id, and ``as_of`` reads of a time before the
news find what held then (:func:`memstack.store._memory_reads.held`).

Where the interval closes (:func:`closing_time`): at the time the news **states** ("I moved to Berlin last month":
the first of last month, read against the message's time by :func:`memstack.dates.stated_start`), else at the time
the message was **said** (its ``observed_at``: an imported conversation's own times, not when it was processed), and
only then, for a write with neither, now. A stated time after the message (a plan) closes at the message instead,
and a time at or before the old memory's own start cannot close it: the past version is then not written (there is
no interval to keep) and the memory is replaced in place alone.

Two writes, the past version first: a crash between them leaves the old fact twice (the past version and the
current memory, still unchanged), never lost, and the news is judged again when the job resumes.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from memstack.store.base import Store
from memstack.types import HistoryAction, Memory, MemoryPatch, NewMemory, UserRef, Vector, utcnow

__all__ = ["closing_time", "supersede"]


def closing_time(stated: datetime | None, said: datetime | None, *, now: datetime | None = None) -> datetime:
    """Where a superseded memory stops holding and its successor starts (see the module docstring)."""
    if stated is not None and (said is None or stated <= said):
        return stated
    return said if said is not None else (now or utcnow())


async def supersede(
    store: Store,
    user: UserRef,
    old: Memory,
    patch: MemoryPatch,
    vector: Vector | None,
    *,
    at: datetime,
    actor: str,
    note: str,
) -> Memory:
    """Replace ``old`` by ``patch`` (its new text embedded as ``vector``) from ``at`` on, keeping the old fact as a
    past version ending at ``at``; the current memory as stored. A time after now (a clock running ahead, a message
    dated in the future) closes now: a past version is never current."""
    at = min(at, utcnow())
    start = old.valid_from
    past_id = ""
    if start is None or at > start:
        stored = await store.memories.get(user, old.id)  # the nearest hits may come without their vectors
        if stored.embedding is not None:
            past = NewMemory(
                content=stored.content,
                category=stored.category,
                source=stored.source,
                confidence=stored.confidence,
                agent_id=stored.agent_id,
                observed_at=stored.observed_at,
                expires_at=stored.expires_at,
                source_turn_ids=stored.source_turn_ids,
                metadata=stored.metadata,
                valid_from=start,
                valid_to=at,
            )
            past_id = (await store.memories.add(user, past, stored.embedding, actor=actor)).id
    kept = f"; what held until then is {past_id}" if past_id else ""
    return await store.memories.update(
        user,
        old.id,
        replace(patch, valid_from=at if old.valid_to is None or at < old.valid_to else None),
        vector,
        action=HistoryAction.SUPERSEDE,
        actor=actor,
        note=f"{note}{kept}",
    )
