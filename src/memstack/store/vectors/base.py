"""The vector-index role: what a store calls to find a user's nearest memories and to keep that search current.

Both backends answer ``MemoryIndex.nearest`` through a :class:`VectorIndex` and tell it about their committed
writes; which structure stands behind it is the backend's choice (:mod:`memstack.store.vectors`):

- SQLite: :class:`~memstack.store.vectors.cache.CachedVectors`, each user's current memories as a float32 matrix
  in an in-process LRU, scored exactly with numpy (no other process serves SQLite's file, so the process can hold
  the index);
- PostgreSQL: :class:`~memstack.store.vectors.pgvector.PgVectors`, one SQL statement per search: exact below a
  size, through the user's own HNSW index above it (many processes share the database, so the index lives there).

The Protocol is drawn from what the stores call, not from what the structures can do. ``search`` returns the
memories with their scores rather than ids: both structures have the rows in hand when they score (the cache keeps
them beside the vectors, the statement joins them), and a second read for the rows is what the cache exists to
avoid. The write side is one synchronous hook, :meth:`VectorIndex.committed`, called after each commit on the
writer's own thread, in commit order (a cache must never apply an older write after a newer one), with what
changed; :meth:`VectorIndex.settle` then lets a bulk writer wait for the maintenance a write made due (an HNSW
build), so an import is searchable at full speed when it returns.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from memstack.types import Memory, MemoryFilter, ScoredMemory, UserRef, Vector

__all__ = ["IndexedRow", "VectorIndex", "VectorWrite"]


@dataclass(frozen=True, slots=True)
class IndexedRow:
    """One current memory as a write hands it to the index: the backend's key for the row (its primary key), the
    memory (its ``embedding`` is not read) and its unit vector (``None`` in :attr:`VectorWrite.changed`: the content
    did not change, nor the vector)."""

    key: int
    memory: Memory
    vector: Vector | None


@dataclass(frozen=True, slots=True)
class VectorWrite:
    """What one committed write did to a user's current memories.

    ``added``: rows that became current (inserted, restored); ``changed``: current rows whose fields (and maybe
    vector) changed; ``removed``: keys of rows that stopped being current (forgotten, deleted, superseded).
    ``active``: the user's current memories after the write, when the writer counted them (an index decides from it
    whether the user became large). ``complete``: ``added`` is every current memory of the user (their first write),
    so an index that holds users in memory may take them as they are instead of reading them again.
    ``stale``: the user's rows changed in ways this write does not list (an import): whatever is held of the user
    must be read again. An index that reads the store's own table (PostgreSQL's) is told only ``active``: the rows
    are already where it looks, and a writer that does not hold its rows' keys does not invent them.
    """

    added: Sequence[IndexedRow] = ()
    changed: Sequence[IndexedRow] = ()
    removed: Sequence[int] = ()
    active: int | None = None
    complete: bool = False
    stale: bool = False

    @classmethod
    def of_change(cls, key: int, was_active: bool, after: Memory | None, vector: Vector | None) -> VectorWrite:
        """One row changed (update, forget, restore, delete: ``after`` ``None`` when the row is gone): which of
        ``added``, ``changed`` or ``removed`` it is, from whether it was and is current. The same rule for every
        backend, written once."""
        now_active = after is not None and after.is_active
        if was_active and not now_active:
            return cls(removed=(key,))
        if after is None or not now_active:
            return cls()
        if not was_active:
            return cls(added=(IndexedRow(key, after, vector),), stale=vector is None)
        return cls(changed=(IndexedRow(key, after, vector),))


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest-neighbour search over each user's memories, kept current by the store's writes."""

    async def search(self, user: UserRef, query: Vector, k: int, flt: MemoryFilter) -> builtins.list[ScoredMemory]:
        """The ``min(k, matching)`` memories of ``user`` most similar to ``query`` (unit length, the store's
        dimension, checked by the caller) by cosine, best first, that pass ``flt``'s categories, agent, text and
        metadata; its ``as_of`` or ``past`` searches what held then instead of the current memories (its paging and
        ``include_deleted`` do not apply). Never fewer than asked for because of the index's structure: an
        approximate structure falls back to an exact scan when it comes back short."""
        ...

    def at_hand(self, user: UserRef, memory_ids: Sequence[str]) -> dict[str, Vector]:
        """The vectors this index holds in the process for those of ``memory_ids`` it holds (current memories of
        ``user``), without reading anything: an index that keeps its vectors elsewhere answers ``{}``. For a reader
        that would otherwise embed the memories' texts again (the guard, reading memories found by their words)."""
        ...

    async def stored(self, user: UserRef, memory_ids: Sequence[str]) -> dict[str, Vector]:
        """The stored vectors of those of ``memory_ids`` that are ``user``'s current memories: what :meth:`at_hand`
        gives, else one read of them (for a turn's guard, about to embed the texts of memories it has not read)."""
        ...

    def committed(self, user: UserRef, write: VectorWrite) -> None:
        """After a write of ``user``'s memories committed: on the writer's thread, before any later write."""
        ...

    def counts(self, user: UserRef) -> bool:
        """Whether a writer adding memories should count the user's current memories for
        :attr:`VectorWrite.active` (a count costs a read; an index that needs none, or already knows, says no)."""
        ...

    async def settle(self, user: UserRef) -> None:
        """Wait for the maintenance :meth:`committed` made due for ``user`` (a bulk writer, before it returns)."""
        ...

    async def forget(self, user: UserRef) -> None:
        """``user`` is being erased: stop any work on them and drop whatever is held of them (called before the
        erasure, so nothing of theirs holds a lock it needs, and again after it)."""
        ...

    def invalidate(self, user: UserRef | None = None) -> None:
        """What is held of ``user`` (``None``: of everyone) may be stale: another process wrote."""
        ...

    async def close(self) -> None:
        """Stop work in flight and drop what is held."""
        ...
