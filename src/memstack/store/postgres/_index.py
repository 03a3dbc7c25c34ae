"""The PostgreSQL store's ``MemoryIndex`` role: listing, counting, history, full-text and vector search.

``nearest`` is one SQL statement either way (see ``_ann.py`` for which way):

- exact: the user's active rows come from the partial btree and are ranked by distance in a subquery fenced with
  ``OFFSET 0``, so no index can serve the ordering and the plan cannot drift to an HNSW scan that post-filters and
  returns fewer than k rows, prepared or not. Stored and query vectors are unit length, so the cosine distance is
  ``1 + (a <#> b)`` (one dot product instead of a dot product and two norms);
- indexed: the user's own HNSW index with ``hnsw.iterative_scan = relaxed_order``, re-sorted, and, in the same
  statement, an exact fallback that runs only if the index scan came back with fewer than k rows (filters so
  selective that the iterative scan gave up), so the answer is still ``min(k, matching)`` rows.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from memstack.store._checks import COLUMNS, check_agent, check_k, parse_category, unit_vector
from memstack.store._fulltext import BM25_PARAMS, pg_bm25, searched_terms
from memstack.store._memory_reads import MemoryReads, held
from memstack.store._sql import Row
from memstack.store.postgres._ann import AnnIndexes
from memstack.store.postgres._db import Database
from memstack.store.postgres._rows import N_COLUMNS, memory_from_row
from memstack.store.postgres._sql import PgSql
from memstack.types import Memory, MemoryFilter, ScoredMemory, UserRef, Vector
from memstack.types.memories import check_as_of

__all__ = ["PgIndex"]

_EXACT = """
WITH top AS (
    SELECT seq, distance FROM (
        SELECT seq, 1 + (embedding <#> %(v)s::vector) AS distance FROM memories
        WHERE tenant = %(tenant)s AND user_id = %(user)s {filters}
        OFFSET 0
    ) AS candidates
    ORDER BY distance, seq LIMIT %(k)s
)
SELECT {columns}, 1 - top.distance{lookup} FROM top JOIN memories AS m ON m.seq = top.seq
ORDER BY top.distance, top.seq
"""

#: Added to the exact statement when this process does not know yet whether the user has an HNSW index: the
#: answer comes back with the rows instead of costing a second round trip.
_LOOKUP = ", (SELECT index_name FROM memory_ann_indexes WHERE tenant = %(tenant)s AND user_id = %(user)s)"

_INDEXED = """
WITH ann AS MATERIALIZED (
    SELECT seq, embedding <=> %(v)s::vector AS distance FROM memories
    WHERE tenant = {tenant} AND user_id = {user} {filters}
    ORDER BY embedding <=> %(v)s::vector LIMIT %(k)s
),
found AS (SELECT count(*) AS n FROM ann),
top AS (
    SELECT seq, distance FROM ann WHERE (SELECT n FROM found) >= %(k)s
    UNION ALL
    SELECT seq, distance FROM (
        SELECT seq, 1 + (embedding <#> %(v)s::vector) AS distance FROM memories
        WHERE tenant = {tenant} AND user_id = {user} {filters}
        OFFSET 0
    ) AS exact WHERE (SELECT n FROM found) < %(k)s
    ORDER BY distance, seq LIMIT %(k)s
)
SELECT {columns}, 1 - top.distance FROM top JOIN memories AS m ON m.seq = top.seq
ORDER BY top.distance, top.seq
"""

#: ``COLUMNS`` of the joined ``memories AS m``.
_M_COLUMNS = ", ".join(f"m.{c.strip()}" for c in COLUMNS.split(","))


def _search_text(state: str) -> str:
    """BM25 of the user's memories under ``state`` (:func:`held`) that hold a query term, the best ``k`` (newest
    first among equals)."""
    return f"""
SELECT {_M_COLUMNS}, ranked.score FROM (
    {pg_bm25("memories", "seq", f"d.tenant = %(tenant)s AND d.user_id = %(user)s {state}")}
) AS ranked JOIN memories AS m ON m.seq = ranked.key
ORDER BY ranked.score DESC, m.seq DESC LIMIT %(k)s
"""


_SEARCH_TEXT = _search_text(held(None, table="d")[0])


class PgIndex(MemoryReads):
    """Reads memories back; never writes."""

    def __init__(self, db: Database, ann: AnnIndexes, dim: int) -> None:
        super().__init__(PgSql(db))
        self._db = db
        self._ann = ann
        self._dim = dim
        self._exact: dict[tuple[str, bool], str] = {}

    @staticmethod
    def _filters(flt: MemoryFilter, params: dict[str, Any], *, include_deleted: bool = False) -> str | None:
        """SQL conditions for the rows the filter sees (:func:`held`: current, or what held at ``as_of``), its
        categories, agent, text and metadata (``None``: the text has no words)."""
        check_agent(flt.agent_id)
        state, _ = held(flt.as_of, include_deleted=include_deleted, placeholder="%(as_of)s", past=flt.past)
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

    async def _rows(
        self, query: str | sql.Composed, params: dict[str, Any], *, prepare: bool | None = None, search: bool = False
    ) -> Any:
        """``search``: the statement may scan an HNSW index, so it needs the search settings (``db.searching``)."""
        async with self._db.searching() if search else self._db.connection() as conn:
            cur = await conn.execute(query, params, prepare=prepare)
            return await cur.fetchall()

    def _memory(self, row: Row) -> Memory:
        return memory_from_row(row)

    def _every_term(self, user: UserRef, terms: builtins.list[str]) -> tuple[str, Any]:
        return " AND terms @> ?::text[]", terms

    def _metadata(self, wanted: Mapping[str, Any]) -> tuple[str, builtins.list[Any]]:
        return " AND metadata @> ?", [Jsonb(wanted)]  # scalar values only: containment is equality of each key's

    async def count_active(self, user: UserRef) -> int:
        rows = await self._rows(
            "SELECT count(*) FROM memories WHERE tenant = %(tenant)s AND user_id = %(user)s AND is_active",
            {"tenant": user.tenant, "user": user.user_id},
        )
        return int(rows[0][0])

    async def search_text(
        self, user: UserRef, query: str, k: int, *, as_of: datetime | None = None
    ) -> builtins.list[ScoredMemory]:
        """Active memories (``as_of``: those that held then) holding any term of ``query``, ranked by BM25 over the
        same rows, in one statement (:func:`~memstack.store._fulltext.pg_bm25`)."""
        k = check_k(k)
        as_of = check_as_of(as_of)
        terms = searched_terms(query)
        if terms is None:
            return []
        params = {"tenant": user.tenant, "user": user.user_id, "terms": terms, "k": k, **BM25_PARAMS}
        statement = _SEARCH_TEXT
        if as_of is not None:
            statement = _search_text(held(as_of, table="d", placeholder="%(as_of)s")[0])
            params["as_of"] = as_of
        rows = await self._rows(statement, params)
        return [ScoredMemory(memory_from_row(r), float(r[N_COLUMNS])) for r in rows]

    async def nearest(
        self, user: UserRef, vector: Vector, k: int, flt: MemoryFilter | None = None
    ) -> builtins.list[ScoredMemory]:
        """Top-``k`` active memories by cosine similarity in one statement; ``flt`` may restrict categories, agent
        and text (its paging and ``include_deleted`` do not apply)."""
        k = check_k(k)
        query = unit_vector(vector, self._dim)
        params: dict[str, Any] = {"tenant": user.tenant, "user": user.user_id, "k": k}
        filters = self._filters(flt or MemoryFilter(), params)
        if filters is None:
            return []
        params["v"] = self._db.vector_param(query)
        known, index = self._ann.cached(user)
        if flt is not None and (flt.as_of is not None or flt.past):
            index = None  # a user's HNSW index holds current memories only (is_active): the exact statement
        statement, prepare = self._nearest_statement(user, filters, index, lookup=not known)
        rows = await self._rows(statement, params, prepare=prepare, search=index is not None)
        if not known and rows:
            self._ann.remember(user, rows[0][N_COLUMNS + 1])
        return [ScoredMemory(memory_from_row(r), float(r[N_COLUMNS])) for r in rows]

    def _nearest_statement(
        self, user: UserRef, filters: str, index: str | None, *, lookup: bool
    ) -> tuple[str | sql.Composed, bool | None]:
        """The statement for this user and whether to keep it prepared."""
        if index is None:
            key = (filters, lookup)
            statement = self._exact.get(key)
            if statement is None:
                statement = _EXACT.format(columns=_M_COLUMNS, filters=filters, lookup=_LOOKUP if lookup else "")
                self._exact[key] = statement
            return statement, None
        # The user's literal (tenant, user_id) lets the planner match their partial HNSW index; such a statement is
        # specific to one user, so it is not kept prepared.
        template = _INDEXED.format(columns=_M_COLUMNS, filters=filters, tenant="{tenant}", user="{user}")
        composed = sql.SQL(template).format(tenant=sql.Literal(user.tenant), user=sql.Literal(user.user_id))
        return composed, False

    async def explain_nearest(
        self, user: UserRef, vector: Vector, k: int, flt: MemoryFilter | None = None, *, analyze: bool = False
    ) -> str:
        """The plan of the statement :meth:`nearest` would run (``analyze``: run it and show actual rows/times)."""
        k = check_k(k)
        params: dict[str, Any] = {"tenant": user.tenant, "user": user.user_id, "k": k}
        filters = self._filters(flt or MemoryFilter(), params) or ""
        params["v"] = self._db.vector_param(unit_vector(vector, self._dim))
        statement, _ = self._nearest_statement(user, filters, await self._ann.lookup(user), lookup=False)
        head = sql.SQL("EXPLAIN (ANALYZE, BUFFERS) " if analyze else "EXPLAIN ")
        rows = await self._rows(
            sql.Composed([head, sql.SQL(statement) if isinstance(statement, str) else statement]), params, prepare=False
        )
        return "\n".join(str(r[0]) for r in rows)
