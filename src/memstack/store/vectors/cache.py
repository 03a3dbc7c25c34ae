"""The SQLite store's vector index: each user's current memories as a unit-row float32 matrix beside the
:class:`Memory` values (without vectors) it returns, in an in-process LRU bounded by a byte budget, scored exactly.

Exact, not approximate: a user of a few thousand memories is scored in well under a millisecond by one matrix
product, and even 100,000 memories (a few milliseconds, on a worker thread) are not worth an approximate graph whose
upkeep every write would pay. SQLite's file is served by one process at a time in practice, so the index can live
in that process; PostgreSQL's, shared by many, lives in the database (:mod:`memstack.store.vectors.pgvector`).

Holding the rows next to the vectors is what lets a warm search answer without any database read: measured on
500-memory users, fetching and converting ten rows per search cost about twice the numpy scoring itself. It costs
roughly 500 bytes per memory on top of the vector's ``4 * dim``, counted in the budget.

Writers (the database thread) change an entry right after their transaction commits
(:meth:`CachedVectors.committed`); readers (the event loop, or a worker for very large users) hold the entry's lock
while they score it. What the cache cannot see for itself (another process's commits, the rows a filter's text or
metadata selects, a user's rows when they are not held) it asks of its :class:`RowSource`, the store.
"""

from __future__ import annotations

import asyncio
import builtins
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from typing import Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from memstack.store._checks import parse_category
from memstack.store.vectors.base import IndexedRow, VectorWrite
from memstack.store.vectors.exact import top_k
from memstack.types import Category, Memory, MemoryFilter, ScoredMemory, UserRef, Vector

__all__ = ["CachedVectors", "RowSource", "UserVectors", "VectorCache"]

T = TypeVar("T")

#: A memory's category as the cache's int8 code.
CATEGORY_CODES: dict[Category, int] = {c: i for i, c in enumerate(Category)}

#: Floats scored per search above which scoring leaves the event loop (~1 ms of work).
LARGE_SCAN = 2_000_000

#: A user's current memories as read from the store: keys, memories (without vectors), their vectors.
Rows = tuple[list[int], list[Memory], Vector]

_ROW_BYTES = 420  # a Memory without its vector, its id string, list slots, index dict entry, codes


def _row_bytes(memory: Memory) -> int:
    return _ROW_BYTES + sys.getsizeof(memory.content)


class UserVectors:
    """One user's active memories: vectors (for scoring), category and agent codes (for filtering), the rows."""

    def __init__(self, dim: int, pks: list[int], memories: list[Memory], matrix: Vector) -> None:
        self.lock = threading.Lock()
        self.dim = dim
        n = len(pks)
        capacity = max(n, 8)
        self._matrix: Vector = np.empty((capacity, dim), dtype=np.float32)
        self._matrix[:n] = matrix
        self._pks = np.empty(capacity, dtype=np.int64)
        self._pks[:n] = pks
        self._cats = np.empty(capacity, dtype=np.int8)
        self._cats[:n] = [CATEGORY_CODES[m.category] for m in memories]
        self._agent_codes: dict[str, int] = {}
        self._agents = np.empty(capacity, dtype=np.int32)
        self._agents[:n] = [self._agent_code(m.agent_id) for m in memories]
        self._memories = list(memories)
        self._row_of = {pk: i for i, pk in enumerate(pks)}
        self._rows_bytes = sum(_row_bytes(m) for m in memories)
        self.n = n

    @property
    def nbytes(self) -> int:
        return int(self._matrix.nbytes) + self._rows_bytes

    def _agent_code(self, agent_id: str | None) -> int:
        if agent_id is None:
            return -1
        return self._agent_codes.setdefault(agent_id, len(self._agent_codes))

    # -- writers (database thread, after commit) ------------------------------------------------------------------

    def extend(self, pks: list[int], memories: list[Memory], matrix: Vector) -> None:
        with self.lock:
            n, add = self.n, len(pks)
            if n + add > len(self._pks):
                self._grow(max(16, 2 * (n + add)))
            self._matrix[n : n + add] = matrix
            self._pks[n : n + add] = pks
            self._cats[n : n + add] = [CATEGORY_CODES[m.category] for m in memories]
            self._agents[n : n + add] = [self._agent_code(m.agent_id) for m in memories]
            self._memories.extend(memories)
            self._row_of.update((pk, n + i) for i, pk in enumerate(pks))
            self._rows_bytes += sum(_row_bytes(m) for m in memories)
            self.n = n + add

    def _grow(self, capacity: int) -> None:
        matrix = np.empty((capacity, self.dim), dtype=np.float32)
        matrix[: self.n] = self._matrix[: self.n]
        self._matrix = matrix
        for name, dtype in (("_pks", np.int64), ("_cats", np.int8), ("_agents", np.int32)):
            old = getattr(self, name)
            new = np.empty(capacity, dtype=dtype)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)

    def remove(self, pk: int) -> None:
        """Drop a row (forget, delete): the last row moves into its place."""
        with self.lock:
            i = self._row_of.pop(pk, None)
            if i is None:
                return
            self._rows_bytes -= _row_bytes(self._memories[i])
            last = self.n - 1
            if i != last:
                self._matrix[i] = self._matrix[last]
                self._pks[i] = self._pks[last]
                self._cats[i] = self._cats[last]
                self._agents[i] = self._agents[last]
                self._memories[i] = self._memories[last]
                self._row_of[int(self._pks[i])] = i
            self._memories.pop()
            self.n = last

    def replace(self, pk: int, memory: Memory, vector: Vector | None) -> None:
        """A changed row (update): new fields, and a new vector when the content changed."""
        with self.lock:
            i = self._row_of.get(pk)
            if i is None:
                return
            self._rows_bytes += _row_bytes(memory) - _row_bytes(self._memories[i])
            self._memories[i] = memory
            if vector is not None:
                self._matrix[i] = vector
            self._cats[i] = CATEGORY_CODES[memory.category]
            self._agents[i] = self._agent_code(memory.agent_id)

    # -- readers ----------------------------------------------------------------------------------------------------

    def search(
        self,
        query: Vector,
        k: int,
        *,
        categories: Iterable[int] = (),
        agent_id: str | None = None,
        only_pks: Iterable[int] | None = None,
    ) -> list[ScoredMemory]:
        """Exact top-``k`` by cosine among the rows passing the filters: ``min(k, matching)`` of them, best first."""
        with self.lock:
            n = self.n
            if n == 0 or k <= 0:
                return []
            scores: npt.NDArray[np.float32] = self._matrix[:n] @ query
            mask: npt.NDArray[np.bool_] | None = None
            cats = list(categories)
            if cats:
                mask = np.isin(self._cats[:n], np.asarray(cats, dtype=np.int8))
            if agent_id is not None:
                codes = self._agents[:n]
                code = self._agent_codes.get(agent_id)
                agent_mask = codes == -1 if code is None else (codes == -1) | (codes == code)
                mask = agent_mask if mask is None else mask & agent_mask
            if only_pks is not None:
                pk_mask = np.isin(self._pks[:n], np.fromiter(only_pks, dtype=np.int64))
                mask = pk_mask if mask is None else mask & pk_mask
            pool = np.flatnonzero(mask) if mask is not None else None
            top = top_k(scores[pool] if pool is not None else scores, k)
            rows = pool[top] if pool is not None else top
            memories, vectors = self._memories, self._matrix[rows]  # a copy: later writes change the matrix in place
            return [ScoredMemory(memories[r], float(scores[r]), vectors[i]) for i, r in enumerate(rows.tolist())]

    def vectors_of(self, memory_ids: Sequence[str]) -> dict[str, Vector]:
        """Copies of the vectors of those of ``memory_ids`` held here."""
        wanted = set(memory_ids)
        with self.lock:
            return {m.id: self._matrix[i].copy() for i, m in enumerate(self._memories[: self.n]) if m.id in wanted}


class VectorCache:
    """LRU of :class:`UserVectors` keyed by ``(tenant, user_id)`` within a byte budget."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, str], UserVectors] = OrderedDict()
        self._sizes: dict[tuple[str, str], int] = {}
        self._total = 0

    def get(self, key: tuple[str, str]) -> UserVectors | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def peek(self, key: tuple[str, str]) -> UserVectors | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: tuple[str, str], entry: UserVectors) -> bool:
        """Cache ``entry`` as most recent, evicting the least recent; ``False`` if it alone exceeds the budget."""
        if entry.nbytes > self.budget_bytes:
            self.discard(key)
            return False
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            self._account(key, entry.nbytes)
        return True

    def resized(self, key: tuple[str, str]) -> None:
        """An entry grew or shrank (writes): account for it, evicting least-recently used entries if needed."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._account(key, entry.nbytes)

    def _account(self, key: tuple[str, str], size: int) -> None:
        self._total += size - self._sizes.get(key, 0)
        self._sizes[key] = size
        while self._total > self.budget_bytes and len(self._entries) > 1:
            evicted, _ = self._entries.popitem(last=False)
            self._total -= self._sizes.pop(evicted)
        if self._total > self.budget_bytes:  # the one left outgrew the budget by itself
            self._entries.clear()
            self._sizes.clear()
            self._total = 0

    def discard(self, key: tuple[str, str]) -> None:
        with self._lock:
            if self._entries.pop(key, None) is not None:
                self._total -= self._sizes.pop(key)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._sizes.clear()
            self._total = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return self._total


class RowSource(Protocol):
    """What :class:`CachedVectors` asks of its store (SQLite: :class:`~memstack.store.sqlite._index.SQLiteIndex`)."""

    async def catch_up(self) -> None:
        """Apply what other processes committed since the last call (clearing what it made stale)."""
        ...

    async def load(self, user: UserRef, hold: Callable[[Callable[[], Rows]], T]) -> T:
        """Call ``hold`` on the writers' thread, before any later write, with a function that reads ``user``'s
        current memories: an entry made there misses no write that commits after it."""
        ...

    async def matching(self, user: UserRef, flt: MemoryFilter) -> set[int] | None:
        """The keys of ``user``'s current memories that ``flt``'s text and metadata select (``None``: it has
        neither)."""
        ...

    async def held(self, user: UserRef, flt: MemoryFilter) -> tuple[builtins.list[Memory], Vector]:
        """The memories that pass ``flt`` at its ``as_of`` (or its past versions), with their vectors."""
        ...


class CachedVectors:
    """The :class:`~memstack.store.vectors.base.VectorIndex` over a :class:`VectorCache` of ``budget_bytes``."""

    def __init__(self, dim: int, budget_bytes: int, rows: RowSource) -> None:
        self.dim = dim
        self.cache = VectorCache(budget_bytes)
        self._rows = rows

    async def search(self, user: UserRef, query: Vector, k: int, flt: MemoryFilter) -> builtins.list[ScoredMemory]:
        if flt.as_of is not None or flt.past:  # past versions are not held (current memories only): read the rows
            memories, matrix = await self._rows.held(user, flt)
            scores = matrix @ np.asarray(query, dtype=np.float32)
            return [ScoredMemory(memories[i], float(scores[i])) for i in top_k(scores, k).tolist()]
        cats = [CATEGORY_CODES[parse_category(c)] for c in flt.categories]
        await self._rows.catch_up()
        key = (user.tenant, user.user_id)
        entry = self.cache.get(key)
        if entry is None:
            entry = await self._rows.load(user, partial(self._hold, key))
        only = await self._rows.matching(user, flt)
        search = partial(entry.search, query, k, categories=cats, agent_id=flt.agent_id, only_pks=only)
        if entry.n * self.dim > LARGE_SCAN:
            return await asyncio.to_thread(search)
        return search()

    def _hold(self, key: tuple[str, str], read: Callable[[], Rows]) -> UserVectors:
        """Writers' thread: the entry another search loaded while this one waited, else a new one, cached."""
        cached = self.cache.peek(key)
        if cached is not None:
            return cached
        entry = UserVectors(self.dim, *read())
        self.cache.put(key, entry)
        return entry

    def at_hand(self, user: UserRef, memory_ids: Sequence[str]) -> dict[str, Vector]:
        entry = self.cache.get((user.tenant, user.user_id)) if memory_ids else None
        return entry.vectors_of(memory_ids) if entry is not None else {}

    async def stored(self, user: UserRef, memory_ids: Sequence[str]) -> dict[str, Vector]:
        return self.at_hand(user, memory_ids)  # a user searched moments ago is held; one that is not, is not read

    def committed(self, user: UserRef, write: VectorWrite) -> None:
        key = (user.tenant, user.user_id)
        entry = self.cache.peek(key)
        if write.stale:
            self.cache.discard(key)
            return
        if entry is None:
            if write.complete and write.added:  # write-through: a new user's memories and vectors are all in hand
                self.cache.put(key, UserVectors(self.dim, *_rows(write.added)))
            return
        for pk in write.removed:
            entry.remove(pk)
        for row in write.changed:
            entry.replace(row.key, _bare(row.memory), row.vector)
        if write.added:
            entry.extend(*_rows(write.added))
        self.cache.resized(key)

    def counts(self, user: UserRef) -> bool:
        return False  # exact at every size: nothing is decided from a count

    async def settle(self, user: UserRef) -> None:
        return None  # every change is applied in committed()

    async def forget(self, user: UserRef) -> None:
        self.invalidate(user)

    def invalidate(self, user: UserRef | None = None) -> None:
        if user is None:
            self.cache.clear()
        else:
            self.cache.discard((user.tenant, user.user_id))

    async def close(self) -> None:
        self.cache.clear()


def _bare(memory: Memory) -> Memory:
    """The memory as held: its vector is in the matrix, not on the row."""
    return replace(memory, embedding=None) if memory.embedding is not None else memory


def _rows(added: Iterable[IndexedRow]) -> Rows:
    rows = list(added)
    vectors = [r.vector for r in rows]
    if any(v is None for v in vectors):  # VectorWrite.of_change marks a row without its vector stale instead
        raise ValueError("a row added to the vector cache came without its vector")
    matrix = np.stack([np.asarray(v, dtype=np.float32) for v in vectors]).reshape(len(rows), -1)
    return [r.key for r in rows], [_bare(r.memory) for r in rows], matrix
