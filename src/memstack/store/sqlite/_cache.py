"""In-process caches of the SQLite store: each user's active vectors (LRU, byte budget) and recently read rows.

Writers (the database thread) change them right after their transaction commits; readers (the event loop, or a
worker for very large users) take the entry's lock only while they read. A change committed by another process
clears everything (see ``SQLiteStore``'s use of ``PRAGMA data_version``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memstack.types import Memory, Vector

__all__ = ["Hit", "RowCache", "UserVectors", "VectorCache"]

_ROW_OVERHEAD = 160  # bytes per row beside the vector: id string, list slot, index dict entry, codes


@dataclass(frozen=True, slots=True)
class Hit:
    pk: int
    id: str
    score: float


class UserVectors:
    """One user's active memories as a unit-row float32 matrix, plus what filtering needs (category, agent)."""

    def __init__(
        self, dim: int, pks: list[int], ids: list[str], matrix: Vector, cats: list[int], agents: list[str | None]
    ):
        self.lock = threading.Lock()
        self.dim = dim
        n = len(pks)
        capacity = max(n, 8)
        self._matrix: Vector = np.empty((capacity, dim), dtype=np.float32)
        self._matrix[:n] = matrix
        self._pks = np.empty(capacity, dtype=np.int64)
        self._pks[:n] = pks
        self._cats = np.empty(capacity, dtype=np.int8)
        self._cats[:n] = cats
        self._agent_codes: dict[str, int] = {}
        self._agents = np.empty(capacity, dtype=np.int32)
        self._agents[:n] = [self._agent_code(a) for a in agents]
        self._ids = list(ids)
        self._row_of = {pk: i for i, pk in enumerate(pks)}
        self.n = n

    @property
    def nbytes(self) -> int:
        return int(self._matrix.nbytes) + len(self._pks) * (_ROW_OVERHEAD)

    def _agent_code(self, agent_id: str | None) -> int:
        if agent_id is None:
            return -1
        return self._agent_codes.setdefault(agent_id, len(self._agent_codes))

    # -- writers (database thread, after commit) ------------------------------------------------------------------

    def append(self, pk: int, id_: str, vector: Vector, cat: int, agent_id: str | None) -> None:
        with self.lock:
            if self.n == len(self._pks):
                self._grow(max(16, self.n * 2))
            i = self.n
            self._matrix[i] = vector
            self._pks[i] = pk
            self._cats[i] = cat
            self._agents[i] = self._agent_code(agent_id)
            self._ids.append(id_)
            self._row_of[pk] = i
            self.n = i + 1

    def extend(self, pks: list[int], ids: list[str], matrix: Vector, cats: list[int], agents: list[str | None]) -> None:
        with self.lock:
            n, add = self.n, len(pks)
            if n + add > len(self._pks):
                self._grow(max(16, 2 * (n + add)))
            self._matrix[n : n + add] = matrix
            self._pks[n : n + add] = pks
            self._cats[n : n + add] = cats
            self._agents[n : n + add] = [self._agent_code(a) for a in agents]
            self._ids.extend(ids)
            self._row_of.update((pk, n + i) for i, pk in enumerate(pks))
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
            last = self.n - 1
            if i != last:
                self._matrix[i] = self._matrix[last]
                self._pks[i] = self._pks[last]
                self._cats[i] = self._cats[last]
                self._agents[i] = self._agents[last]
                self._ids[i] = self._ids[last]
                self._row_of[int(self._pks[i])] = i
            self._ids.pop()
            self.n = last

    def replace(self, pk: int, vector: Vector | None, cat: int) -> None:
        with self.lock:
            i = self._row_of.get(pk)
            if i is None:
                return
            if vector is not None:
                self._matrix[i] = vector
            self._cats[i] = cat

    # -- readers ----------------------------------------------------------------------------------------------------

    def search(
        self,
        query: Vector,
        k: int,
        *,
        categories: Iterable[int] = (),
        agent_id: str | None = None,
        only_pks: Iterable[int] | None = None,
    ) -> list[Hit]:
        """Exact top-``k`` by cosine among the rows passing the filters: ``min(k, matching)`` hits, best first."""
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
            pooled = scores[pool] if pool is not None else scores
            m = len(pooled)
            kk = min(k, m)
            if kk == 0:
                return []
            top = np.argpartition(-pooled, kk - 1)[:kk] if kk < m else np.arange(m)
            top = top[np.argsort(-pooled[top], kind="stable")]
            rows = pool[top] if pool is not None else top
            return [Hit(int(self._pks[r]), self._ids[r], float(scores[r])) for r in rows]


class VectorCache:
    """LRU of :class:`UserVectors` keyed by ``(tenant, user_id)`` within a byte budget."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, str], UserVectors] = OrderedDict()

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
        self.fit()
        return True

    def fit(self) -> None:
        """Evict least-recently used entries until the budget holds (after entries grew)."""
        with self._lock:
            total = sum(e.nbytes for e in self._entries.values())
            while total > self.budget_bytes and self._entries:
                _, evicted = self._entries.popitem(last=False)
                total -= evicted.nbytes

    def discard(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(e.nbytes for e in self._entries.values())


class RowCache:
    """The last ``capacity`` active memories read or written, by id: lets a cached search skip the database.

    Writers ``put``/``discard``; a reader that fetched rows outside the database thread adds them with
    ``fill(generation, ...)``, which does nothing if any writer changed the cache since the reader took
    ``generation``: a row read just before a commit never replaces the committed one."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._lock = threading.Lock()
        self._rows: OrderedDict[str, Memory] = OrderedDict()
        self._generation = 0

    @property
    def generation(self) -> int:
        return self._generation

    def get_many(self, ids: Iterable[str]) -> dict[str, Memory]:
        found: dict[str, Memory] = {}
        with self._lock:
            for id_ in ids:
                row = self._rows.get(id_)
                if row is not None:
                    self._rows.move_to_end(id_)
                    found[id_] = row
        return found

    def _insert(self, memory: Memory) -> None:
        self._rows[memory.id] = memory
        self._rows.move_to_end(memory.id)
        while len(self._rows) > self.capacity:
            self._rows.popitem(last=False)

    def put(self, memory: Memory) -> None:
        with self._lock:
            self._generation += 1
            if self.capacity > 0:
                self._insert(memory)

    def fill(self, generation: int, memories: Iterable[Memory]) -> None:
        with self._lock:
            if generation != self._generation or self.capacity <= 0:
                return
            for memory in memories:
                self._insert(memory)

    def discard(self, memory_id: str) -> None:
        with self._lock:
            self._generation += 1
            self._rows.pop(memory_id, None)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._rows.clear()
