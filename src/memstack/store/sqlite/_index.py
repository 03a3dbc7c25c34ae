"""The SQLite store's ``MemoryIndex`` role: listing, counting, history, full-text and vector search.

``nearest`` is the hot path. When the user's memories are cached and nothing was committed since the cache was
last checked, it scores them on the calling thread (a worker thread for very large users) and returns the cached
rows: a warm search reads nothing from the database. Otherwise it loads the user in one indexed query.
"""

from __future__ import annotations

import asyncio
import builtins
import sqlite3
from collections.abc import Mapping
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np

from memstack.errors import InputError
from memstack.store._checks import COLUMNS, check_agent, parse_category, unit_vector
from memstack.store._fulltext import fts5_match, rank, searched_terms
from memstack.store._memory_reads import MemoryReads, held
from memstack.store._sql import Row, drive
from memstack.store.sqlite._cache import UserVectors
from memstack.store.sqlite._core import Core, opt_ts, user_key
from memstack.store.sqlite._db import transaction
from memstack.store.sqlite._rows import CATEGORY_CODES, fts_owner, memory_from_row, metadata_conditions
from memstack.store.sqlite._sql import SQLiteSql, tx
from memstack.types import Memory, MemoryFilter, ScoredMemory, UserRef, Vector
from memstack.types.memories import check_as_of

__all__ = ["SQLiteIndex"]

_LARGE_SCAN = 2_000_000  # floats scored per search above which scoring leaves the event loop (~1 ms of work)


class SQLiteIndex(MemoryReads):
    """Reads memories back; never writes."""

    def __init__(self, core: Core) -> None:
        super().__init__(SQLiteSql(core))
        self._core = core

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

    async def nearest(
        self, user: UserRef, vector: Vector, k: int, flt: MemoryFilter | None = None
    ) -> builtins.list[ScoredMemory]:
        """Exact cosine top-``k`` of the user's active memories; ``flt`` may restrict categories, agent and text
        (its paging and ``include_deleted`` do not apply)."""
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        query = unit_vector(vector, self._core.dim)
        flt = flt or MemoryFilter()
        check_agent(flt.agent_id)
        if flt.as_of is not None or flt.past:  # past versions are not in the cache (current memories only): read rows
            return await self._core.run(partial(self._nearest_as_of, user, query, k, flt))
        cats = [CATEGORY_CODES[parse_category(c)] for c in flt.categories]
        if not self._core.is_fresh():  # something was committed: catch up on the database thread first
            await self._core.run(self._core.sync)
        entry = self._core.vectors.get(user_key(user))
        if entry is None:
            entry = await self._core.run(partial(self._load, user))
        only: set[int] | None = None
        if flt.text is not None:
            only = await self._core.run(partial(self._text_pks, user, flt.text))
        if flt.metadata:  # the rows whose metadata matches, by the same SQL as list's; scored from the cache
            matching = await self._core.run(partial(self._metadata_pks, user, flt.metadata))
            only = matching if only is None else only & matching
        search = partial(entry.search, query, k, categories=cats, agent_id=flt.agent_id, only_pks=only)
        if entry.n * self._core.dim > _LARGE_SCAN:
            return await asyncio.to_thread(search)
        return search()

    def _nearest_as_of(
        self, user: UserRef, query: Vector, k: int, flt: MemoryFilter, conn: sqlite3.Connection
    ) -> builtins.list[ScoredMemory]:
        """Database thread: exact cosine top-``k`` of the rows that held at ``flt.as_of`` (current memories and
        superseded past versions alike), read from the table: an ``as_of`` search is rare, the cache stays lean."""
        where = self._where(user, flt)
        if where is None:
            return []
        conditions, args = where
        with transaction(conn, write=False):
            rows = drive(tx(conn).all(f"SELECT {COLUMNS}, embedding FROM memories WHERE {conditions}", args))
        if not rows:
            return []
        matrix = np.frombuffer(b"".join(r[-1] for r in rows), dtype="<f4").reshape(len(rows), self._core.dim)
        scores = matrix @ np.asarray(query, dtype=np.float32)
        order = sorted(range(len(rows)), key=lambda i: (-float(scores[i]), i))[:k]
        return [ScoredMemory(memory_from_row(rows[i][:-1]), float(scores[i])) for i in order]

    def _load(self, user: UserRef, conn: sqlite3.Connection) -> UserVectors:
        """Database thread: read the user's active memories and vectors (one indexed query) and cache them."""
        key = user_key(user)
        with transaction(conn, write=False):
            self._core.note_foreign(conn)
            cached = self._core.vectors.peek(key)
            if cached is not None:  # another search loaded it while this one waited
                return cached
            rows = conn.execute(
                f"SELECT pk, {COLUMNS}, embedding FROM memories WHERE tenant = ? AND user_id = ? AND is_active = 1",
                (user.tenant, user.user_id),
            ).fetchall()
        matrix = np.frombuffer(b"".join(r[-1] for r in rows), dtype="<f4").reshape(len(rows), self._core.dim)
        memories = [memory_from_row(r[1:-1]) for r in rows]
        cats = [CATEGORY_CODES[m.category] for m in memories]
        entry = UserVectors(self._core.dim, [r[0] for r in rows], memories, matrix, cats)
        self._core.vectors.put(key, entry)
        return entry

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
