"""The memory roles of the storage contract (:mod:`memstack.store.base`, which exports them): ``MemoryStore`` (the
writes) and ``MemoryIndex`` (the reads)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from memstack.types import (
    DeletedBy,
    HiddenItem,
    HistoryAction,
    Memory,
    MemoryEvent,
    MemoryFilter,
    MemoryPatch,
    NewMemory,
    ScoredMemory,
    UserRef,
    Vector,
)

__all__ = ["MemoryIndex", "MemoryStore"]


@runtime_checkable
class MemoryStore(Protocol):
    """Long-term memories and their append-only history."""

    async def add(
        self, user: UserRef, memory: NewMemory, embedding: Vector, *, limit: int | None = None, actor: str = "user"
    ) -> Memory:
        """Insert one memory. With ``limit``, raise ``LimitReached`` if the user already has that many active
        memories; the count and the insert are one transaction."""
        ...

    async def add_many(
        self, user: UserRef, memories: Sequence[NewMemory], embeddings: Vector, *, actor: str = "system"
    ) -> builtins.list[Memory]:
        """Bulk insert (imports, benchmarks, re-embedding): one transaction, no tier limit, history recorded."""
        ...

    async def get(self, user: UserRef, memory_id: str) -> Memory:
        """One memory, active or not (``NotFound`` if it is not this user's)."""
        ...

    async def update(
        self,
        user: UserRef,
        memory_id: str,
        patch: MemoryPatch,
        embedding: Vector | None = None,
        *,
        action: HistoryAction = HistoryAction.UPDATE,
        actor: str = "user",
        note: str = "",
    ) -> Memory:
        """Change fields (``embedding`` must accompany a content change) and record before/after."""
        ...

    async def forget(
        self,
        user: UserRef,
        memory_id: str,
        *,
        by: DeletedBy,
        merged_into: str | None = None,
        note: str = "",
        hide: Sequence[HiddenItem] = (),
    ) -> Memory:
        """Soft delete: inactive, restorable, history kept. ``merged_into`` records a consolidation. ``hide``: what
        the forget keeps from the model besides the memory (:class:`HiddenStore`), written in the same
        transaction, each item recorded as hidden by this memory."""
        ...

    async def restore(self, user: UserRef, memory_id: str, *, limit: int | None = None) -> Memory:
        """Make a soft-deleted memory active again (tier limit applies); in the same transaction, what its forget
        hid is shown again (unless another forgotten memory hides it too)."""
        ...

    async def delete(self, user: UserRef, memory_id: str, *, hide: Sequence[HiddenItem] = ()) -> None:
        """Permanent delete: the row and its vector are gone; a ``delete`` history row remains. What the memory's
        forget hid (and ``hide``, written in the same transaction) stays hidden for good: no restore can show it
        again; it goes when the user is erased."""
        ...


@runtime_checkable
class MemoryIndex(Protocol):
    """Reading memories back: listing, counting, nearest-neighbour and full-text search."""

    async def list(self, user: UserRef, flt: MemoryFilter | None = None) -> builtins.list[Memory]:
        """Newest first, filtered by category / text / agent / deleted, paged by limit and offset."""
        ...

    async def count_active(self, user: UserRef) -> int: ...

    async def history(self, user: UserRef, memory_id: str) -> builtins.list[MemoryEvent]:
        """Every create/update/forget/restore/merge/delete of one memory, oldest first."""
        ...

    async def nearest(
        self, user: UserRef, vector: Vector, k: int, flt: MemoryFilter | None = None
    ) -> builtins.list[ScoredMemory]:
        """The ``k`` active memories closest to ``vector`` by cosine similarity, best first, in one call
        (``flt.as_of``: among what held then, superseded past versions included; see ``_memory_reads.held``).

        Exactly ``min(k, matching memories)`` results: never fewer because of index post-filtering."""
        ...

    async def search_text(
        self, user: UserRef, query: str, k: int, *, as_of: datetime | None = None
    ) -> builtins.list[ScoredMemory]:
        """Active memories holding any stem of ``query`` (:mod:`memstack.text`: "running" finds "run"), ranked by
        BM25 over the user's active memories, best first (:mod:`memstack.store._fulltext`: the same order and
        scores on every backend). ``MemoryFilter.text`` of ``list`` and ``nearest`` needs every stem instead.
        ``as_of``: over what held then instead (as ``MemoryFilter.as_of``)."""
        ...
