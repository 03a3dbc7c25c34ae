"""PostgreSQL's vector index: one SQL statement per search, over pgvector, exact or through an HNSW index.

``search`` is one statement either way (:mod:`memstack.store.vectors.hnsw` says which way, and builds the indexes):

- exact: the user's rows come from the partial btree and are ranked by distance in a subquery fenced with
  ``OFFSET 0``, so no index can serve the ordering and the plan cannot drift to an HNSW scan that post-filters and
  returns fewer than k rows, prepared or not. Stored and query vectors are unit length, so the cosine distance is
  ``1 + (a <#> b)`` (one dot product instead of a dot product and two norms);
- indexed: the HNSW index with ``hnsw.iterative_scan = relaxed_order``, and, in the same statement, the exact scan
  again, run only if the index scan came back with fewer than asked for (filters so selective that the iterative
  scan gave up), so the answer is still ``min(k, matching)`` rows.

:func:`nearest` writes that rule once; the memories' search here and the archive's candidates
(:mod:`memstack.store.vectors.archive`) both use it, the one over a user's own partial index, the other over the
index of every archived message. The written hooks only count: the rows are in the table the index reads, so a
write tells this index nothing but whether the user became large enough for an index of their own.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
from psycopg import sql
from psycopg.types.json import Jsonb

from memstack.store._checks import COLUMNS, check_agent, parse_category
from memstack.store._fulltext import searched_terms
from memstack.store._memory_reads import held
from memstack.store.vectors._pg import Conn, Pool
from memstack.store.vectors.base import VectorWrite
from memstack.store.vectors.hnsw import AnnIndexes
from memstack.types import Memory, MemoryFilter, ScoredMemory, UserRef, Vector

__all__ = ["M_COLUMNS", "PgVectors", "nearest", "searching"]


def nearest(name: str, table: str, where: str, limit: str, *, indexed: bool) -> str:
    """Common table expressions ending in ``name`` (``seq``, ``distance``): the ``limit`` rows of ``table`` that
    pass ``where`` nearest to ``%(v)s`` by cosine, exactly, or (``indexed``) through the HNSW index (the CTE ``ann``,
    the name plans show it by) and exactly again if it came back short (see the module docstring)."""
    exact = f"""SELECT seq, distance FROM (
        SELECT seq, 1 + (embedding <#> %(v)s::vector) AS distance FROM {table} WHERE {where} OFFSET 0
    ) AS exact ORDER BY distance, seq LIMIT {limit}"""
    if not indexed:
        return f"{name} AS ({exact})"
    return f"""ann AS MATERIALIZED (
    SELECT seq, embedding <=> %(v)s::vector AS distance FROM {table} WHERE {where}
    ORDER BY embedding <=> %(v)s::vector LIMIT {limit}
), {name} AS (
    SELECT seq, distance FROM ann WHERE (SELECT count(*) FROM ann) >= {limit}
    UNION ALL
    (SELECT seq, distance FROM ({exact}) AS fallback WHERE (SELECT count(*) FROM ann) < {limit})
)"""


N_COLUMNS = len(COLUMNS.split(","))

#: ``COLUMNS`` of the joined ``memories AS m``.
M_COLUMNS = ", ".join(f"m.{c.strip()}" for c in COLUMNS.split(","))

#: The memories of ``top``, best first; ``{lookup}``: :data:`_LOOKUP` or nothing.
_SELECT = """
SELECT {columns}, 1 - top.distance{lookup} FROM top JOIN memories AS m ON m.seq = top.seq
ORDER BY top.distance, top.seq
"""

#: Added to the exact statement when this process does not know yet whether the user has an HNSW index: the
#: answer comes back with the rows instead of costing a second round trip.
_LOOKUP = ", (SELECT index_name FROM memory_ann_indexes WHERE tenant = %(tenant)s AND user_id = %(user)s)"


@asynccontextmanager
async def searching(db: Pool, ef_search: int) -> AsyncIterator[Conn]:
    """A connection for a search that may use an HNSW index: its settings hold for the statements in the block
    (behind a transaction pooler, a transaction that sets them with ``SET LOCAL`` first; else the connection's, set
    when the pool opened it: :mod:`memstack.store.postgres._db`)."""
    if db.pooler == "none":
        async with db.connection() as conn:
            yield conn
        return
    local = "SET LOCAL jit = off; SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = "
    async with db.connection() as conn, conn.transaction():
        await conn.execute(f"{local}{int(ef_search)}".encode())
        yield conn


def _filters(flt: MemoryFilter, params: dict[str, Any]) -> str | None:
    """SQL conditions for the rows the filter sees (:func:`held`: current, or what held at ``as_of``), its
    categories, agent, text and metadata (``None``: the text has no words)."""
    check_agent(flt.agent_id)
    state, _ = held(flt.as_of, placeholder="%(as_of)s", past=flt.past)
    if flt.as_of is not None:
        params["as_of"] = flt.as_of
    parts = [state]
    if flt.categories:
        params["categories"] = [parse_category(c).value for c in flt.categories]
        parts.append(" AND category = ANY(%(categories)s)")
    if flt.agent_id is not None:
        params["agent"] = flt.agent_id
        parts.append(" AND (agent_id IS NULL OR agent_id = %(agent)s)")
    if flt.text is not None:
        terms = searched_terms(flt.text)
        if terms is None:
            return None
        params["every_term"] = terms
        parts.append(" AND terms @> %(every_term)s::text[]")
    if flt.metadata:  # scalar values only (check_metadata_filter): containment is equality of each key's value
        params["metadata"] = Jsonb(flt.metadata)
        parts.append(" AND metadata @> %(metadata)s")
    return "".join(parts)


#: The vectors of some of a user's current memories, by id.
_STORED = "SELECT id, embedding FROM memories WHERE tenant = %s AND user_id = %s AND id = ANY(%s) AND is_active"


class PgVectors:
    """The :class:`~memstack.store.vectors.base.VectorIndex` of a PostgreSQL store over ``db`` (the primary, or a
    read replica's pool for the searches it answers), sharing the store's :class:`AnnIndexes`; ``memory`` makes a
    memory of the first ``len(COLUMNS)`` values of a row, as the store reads them."""

    def __init__(self, db: Pool, indexes: AnnIndexes, memory: Callable[[Any], Memory]) -> None:
        self._db = db
        self.indexes = indexes
        self._memory = memory
        self._exact: dict[tuple[str, bool], str] = {}

    async def search(self, user: UserRef, query: Vector, k: int, flt: MemoryFilter) -> builtins.list[ScoredMemory]:
        params: dict[str, Any] = {"tenant": user.tenant, "user": user.user_id, "k": k}
        filters = _filters(flt, params)
        if filters is None:
            return []
        params["v"] = self._db.vector_param(query)
        known, index = self.indexes.cached(user)
        if flt.as_of is not None or flt.past:
            index = None  # a user's HNSW index holds current memories only (is_active): the exact statement
        statement, prepare = self._statement(user, filters, index, lookup=not known)
        ef_search = self.indexes.settings.ef_search
        async with searching(self._db, ef_search) if index is not None else self._db.connection() as conn:
            cur = await conn.execute(statement, params, prepare=prepare)
            rows = await cur.fetchall()
        if not known and rows:
            self.indexes.remember(user, rows[0][N_COLUMNS + 1])
        return [ScoredMemory(self._memory(r), float(r[N_COLUMNS])) for r in rows]

    def _statement(
        self, user: UserRef, filters: str, index: str | None, *, lookup: bool
    ) -> tuple[str | sql.Composed, bool | None]:
        """The statement for this user and whether to keep it prepared."""
        where = f"tenant = {{tenant}} AND user_id = {{user}} {filters}"
        if index is None:
            key = (filters, lookup)
            statement = self._exact.get(key)
            if statement is None:
                scope = where.format(tenant="%(tenant)s", user="%(user)s")
                top = nearest("top", "memories", scope, "%(k)s", indexed=False)
                statement = f"WITH {top}" + _SELECT.format(columns=M_COLUMNS, lookup=_LOOKUP if lookup else "")
                self._exact[key] = statement
            return statement, None
        # The user's literal (tenant, user_id) lets the planner match their partial HNSW index; such a statement is
        # specific to one user, so it is not kept prepared.
        top = nearest("top", "memories", where, "%(k)s", indexed=True)
        template = f"WITH {top}" + _SELECT.format(columns=M_COLUMNS, lookup="")
        composed = sql.SQL(template).format(tenant=sql.Literal(user.tenant), user=sql.Literal(user.user_id))
        return composed, False

    async def explain(self, user: UserRef, query: Vector, k: int, flt: MemoryFilter, *, analyze: bool) -> str:
        """The plan of the statement :meth:`search` would run (``analyze``: run it and show actual rows/times)."""
        params: dict[str, Any] = {"tenant": user.tenant, "user": user.user_id, "k": k}
        filters = _filters(flt, params) or ""
        params["v"] = self._db.vector_param(query)
        statement, _ = self._statement(user, filters, await self.indexes.lookup(user), lookup=False)
        head = sql.SQL("EXPLAIN (ANALYZE, BUFFERS) " if analyze else "EXPLAIN ")
        body = sql.SQL(statement) if isinstance(statement, str) else statement
        async with self._db.connection() as conn:
            cur = await conn.execute(sql.Composed([head, body]), params, prepare=False)
            rows = await cur.fetchall()
        return "\n".join(str(r[0]) for r in rows)

    def committed(self, user: UserRef, write: VectorWrite) -> None:
        """A user who just became large gets their index built in the background (a request that crossed the
        threshold does not wait; :meth:`settle` does)."""
        if write.active is not None and self.indexes.note_active(user, write.active):
            self.indexes.schedule(user)

    def counts(self, user: UserRef) -> bool:
        return not self.indexes.indexed(user)  # a user known to have an index is past every decision a count makes

    async def settle(self, user: UserRef) -> None:
        await self.indexes.wait(user)

    async def forget(self, user: UserRef) -> None:
        await self.indexes.forget(user)

    def at_hand(self, user: UserRef, memory_ids: Sequence[str]) -> dict[str, Vector]:
        return {}  # the vectors live in the database: none is held here

    async def stored(self, user: UserRef, memory_ids: Sequence[str]) -> dict[str, Vector]:
        if not memory_ids:
            return {}
        async with self._db.connection() as conn:
            cur = await conn.execute(_STORED, (user.tenant, user.user_id, list(memory_ids)))
            rows = await cur.fetchall()
        return {r[0]: np.asarray(r[1].to_numpy() if hasattr(r[1], "to_numpy") else r[1], np.float32) for r in rows}

    def invalidate(self, user: UserRef | None = None) -> None:
        self.indexes.invalidate(user)

    async def close(self) -> None:
        await self.indexes.close()
