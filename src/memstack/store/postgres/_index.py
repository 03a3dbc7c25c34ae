"""The PostgreSQL store's ``MemoryIndex`` role: listing, counting, history, full-text and vector search.

``nearest`` is answered by the store's vector index (:class:`~memstack.store.vectors.pgvector.PgVectors`): one
statement, exact or through the user's own HNSW index.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from memstack.store._checks import check_k, unit_vector
from memstack.store._fulltext import BM25_PARAMS, pg_bm25, searched_terms
from memstack.store._memory_reads import MemoryReads, held
from memstack.store._sql import Row
from memstack.store.postgres._db import Database
from memstack.store.postgres._rows import N_COLUMNS, memory_from_row
from memstack.store.postgres._sql import PgSql
from memstack.store.vectors.pgvector import M_COLUMNS, PgVectors
from memstack.types import Memory, MemoryFilter, ScoredMemory, UserRef, Vector
from memstack.types.memories import check_as_of

__all__ = ["PgIndex"]


def _search_text(state: str) -> str:
    """BM25 of the user's memories under ``state`` (:func:`held`) that hold a query term, the best ``k`` (newest
    first among equals)."""
    return f"""
SELECT {M_COLUMNS}, ranked.score FROM (
    {pg_bm25("memories", "seq", f"d.tenant = %(tenant)s AND d.user_id = %(user)s {state}")}
) AS ranked JOIN memories AS m ON m.seq = ranked.key
ORDER BY ranked.score DESC, m.seq DESC LIMIT %(k)s
"""


_SEARCH_TEXT = _search_text(held(None, table="d")[0])


class PgIndex(MemoryReads):
    """Reads memories back; never writes."""

    def __init__(self, db: Database, vectors: PgVectors, dim: int) -> None:
        super().__init__(PgSql(db))
        self._db = db
        self.vectors: PgVectors = vectors
        self.dim = dim

    async def _rows(self, query: str, params: dict[str, Any]) -> Any:
        async with self._db.connection() as conn:
            cur = await conn.execute(query, params)
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

    async def explain_nearest(
        self, user: UserRef, vector: Vector, k: int, flt: MemoryFilter | None = None, *, analyze: bool = False
    ) -> str:
        """The plan of the statement :meth:`nearest` would run (``analyze``: run it and show actual rows/times)."""
        k = check_k(k)
        query = unit_vector(vector, self.dim)
        return await self.vectors.explain(user, query, k, flt or MemoryFilter(), analyze=analyze)
