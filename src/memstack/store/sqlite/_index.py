"""The SQLite store's ``MemoryIndex`` role: listing, counting, history, full-text and vector search.

``nearest`` is the hot path, answered by the vector index (:class:`~memstack.store.vectors.cache.CachedVectors`):
when the user's memories are cached and nothing was committed since the cache was last checked, a warm search reads
nothing from the database. This role is the index's :class:`~memstack.store.vectors.cache.RowSource`: it catches up
with other processes' commits, loads a user in one indexed query, and reads the keys a text or metadata filter
selects and the rows an ``as_of`` search scores.
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

import numpy as np

from memstack.errors import InputError
from memstack.store._checks import COLUMNS
from memstack.store._fulltext import fts5_match, rank, searched_terms
from memstack.store._memory_reads import MemoryReads, held
from memstack.store._sql import Row, drive
from memstack.store.sqlite._core import Core, opt_ts
from memstack.store.sqlite._db import transaction
from memstack.store.sqlite._rows import fts_owner, memory_from_row, metadata_conditions
from memstack.store.sqlite._sql import SQLiteSql, tx
from memstack.store.vectors.cache import CachedVectors, Rows
from memstack.types import Memory, MemoryFilter, ScoredMemory, UserRef, Vector
from memstack.types.memories import check_as_of

__all__ = ["SQLiteIndex"]

T = TypeVar("T")


class SQLiteIndex(MemoryReads):
    """Reads memories back; never writes."""

    def __init__(self, core: Core) -> None:
        super().__init__(SQLiteSql(core))
        self._core = core
        self.dim = core.dim
        # The vector index reads rows through this role (its RowSource); the writers reach it through the core.
        self.vectors: CachedVectors = CachedVectors(core.dim, core.cache_bytes, self)
        core.vectors = self.vectors

    def _memory(self, row: Row) -> Memory:
        return memory_from_row(row)

    def _every_term(self, user: UserRef, terms: builtins.list[str]) -> tuple[str, Any]:
        return " AND pk IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)", fts5_match(
            fts_owner(user), terms, any_word=False
        )

    def _metadata(self, wanted: Mapping[str, Any]) -> tuple[str, builtins.list[Any]]:
        return metadata_conditions(wanted)

    async def count_active(self, user: UserRef) -> int:
        return await self._core.run(lambda conn: self._core.count(conn, user))

    async def search_text(
        self, user: UserRef, query: str, k: int, *, as_of: datetime | None = None
    ) -> builtins.list[ScoredMemory]:
        """Active memories (``as_of``: those that held then) holding any term of ``query``, ranked by BM25 over the
        same rows."""
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        terms = searched_terms(query)
        if terms is None:
            return []
        match = fts5_match(fts_owner(user), terms, any_word=True)
        state, state_args = held(opt_ts(check_as_of(as_of)), table="m")
        scope = (user.tenant, user.user_id, *state_args)

        def run(conn: sqlite3.Connection) -> builtins.list[ScoredMemory]:
            with transaction(conn, write=False):
                matches = conn.execute(
                    "SELECT m.pk, m.terms FROM memories_fts JOIN memories m ON m.pk = memories_fts.rowid "
                    f"WHERE memories_fts MATCH ? AND m.tenant = ? AND m.user_id = ? {state} ORDER BY m.pk",
                    (match, *scope),
                ).fetchall()
                if not matches:
                    return []
                n_docs, total = conn.execute(
                    f"SELECT COUNT(*), TOTAL(n_terms) FROM memories AS m WHERE tenant = ? AND user_id = ? {state}",
                    scope,
                ).fetchone()
                best = rank(matches, terms, int(n_docs), int(total), k)
                found = {
                    int(r[0]): memory_from_row(r[1:])
                    for r in conn.execute(
                        f"SELECT pk, {COLUMNS} FROM memories WHERE pk IN ({', '.join('?' * len(best))})",
                        [pk for pk, _ in best],
                    )
                }
            return [ScoredMemory(found[pk], score) for pk, score in best]

        return await self._core.run(run)

    # -- the vector index's RowSource -----------------------------------------------------------------------------

    async def catch_up(self) -> None:
        if not self._core.is_fresh():  # something was committed: catch up on the database thread first
            await self._core.run(self._core.sync)

    async def held(self, user: UserRef, flt: MemoryFilter) -> tuple[builtins.list[Memory], Vector]:
        """The rows that held at ``flt.as_of`` (current memories and superseded past versions alike), read from the
        table: an ``as_of`` search is rare, the cache stays lean."""

        def run(conn: sqlite3.Connection) -> tuple[builtins.list[Memory], Vector]:
            where = self._where(user, flt)
            rows = []
            if where is not None:
                with transaction(conn, write=False):
                    rows = drive(tx(conn).all(f"SELECT {COLUMNS}, embedding FROM memories WHERE {where[0]}", where[1]))
            return [memory_from_row(r[:-1]) for r in rows], self._matrix(rows)

        return await self._core.run(run)

    def _matrix(self, rows: builtins.list[Any]) -> Vector:
        return np.frombuffer(b"".join(r[-1] for r in rows), dtype="<f4").reshape(len(rows), self._core.dim)

    async def load(self, user: UserRef, hold: Callable[[Callable[[], Rows]], T]) -> T:
        def run(conn: sqlite3.Connection) -> T:
            with transaction(conn, write=False):
                self._core.note_foreign(conn)
                return hold(partial(self._current, conn, user))

        return await self._core.run(run)

    def _current(self, conn: sqlite3.Connection, user: UserRef) -> Rows:
        """Database thread: the user's active memories and vectors (one indexed query)."""
        rows = conn.execute(
            f"SELECT pk, {COLUMNS}, embedding FROM memories WHERE tenant = ? AND user_id = ? AND is_active = 1",
            (user.tenant, user.user_id),
        ).fetchall()
        return [r[0] for r in rows], [memory_from_row(r[1:-1]) for r in rows], self._matrix(rows)

    async def matching(self, user: UserRef, flt: MemoryFilter) -> set[int] | None:
        only: set[int] | None = None
        if flt.text is not None:
            only = await self._core.run(partial(self._text_pks, user, flt.text))
        if flt.metadata:  # the rows whose metadata matches, by the same SQL as list's; scored from the cache
            matching = await self._core.run(partial(self._metadata_pks, user, flt.metadata))
            only = matching if only is None else only & matching
        return only

    def _metadata_pks(self, user: UserRef, wanted: Mapping[str, Any], conn: sqlite3.Connection) -> set[int]:
        conditions, values = metadata_conditions(wanted)
        rows = conn.execute(
            f"SELECT pk FROM memories WHERE tenant = ? AND user_id = ? AND is_active = 1{conditions}",
            [user.tenant, user.user_id, *values],
        ).fetchall()
        return {int(r[0]) for r in rows}

    def _text_pks(self, user: UserRef, text: str, conn: sqlite3.Connection) -> set[int]:
        terms = searched_terms(text)
        if terms is None:
            return set()
        match = fts5_match(fts_owner(user), terms, any_word=False)
        rows = conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (match,)).fetchall()
        return {int(r[0]) for r in rows}
