"""The PostgreSQL store's ``UserData`` role: export one user's rows, or erase them in one transaction.

The erasure's first statements take the user's erasure lock exclusively and give the user a new epoch
(:mod:`memstack.store.postgres._fence`): it waits for the user's fenced writes in flight, so its deletes see (and
remove) what they wrote, and every fenced write after its commit is refused.

What PostgreSQL keeps after the commit: the deleted rows stay in their pages as dead tuples (and their index entries)
until (auto)vacuum reclaims the space, and even then the bytes may stay in free space until it is reused; the
write-ahead log keeps them until its segments are recycled, and so do replicas, WAL archives and backups. memstack
does not run ``VACUUM`` after an erasure: it cannot run inside a transaction, it scans every index of each table in
full (on a store in use that costs far more than the erasure), and it would not clear the log or the copies
anyway. Where the law asks for the bytes to go, rely on autovacuum and the retention of WAL archives and backups.

Every statement names the tenant and the user (sharding by user, docs/scaling.md; ``tests/store/test_shard_keys.py``).
A very large user's own HNSW index (:mod:`memstack.store.vectors.hnsw`) is dropped in the same transaction
(``DROP INDEX`` is transactional; it locks ``memories`` until the commit, which comes right after), and this
process forgets it; another process's cache of it lapses harmlessly (a search of a missing index falls back to the
exact statement once its lookup expires, and an erased user has no rows to find either way).
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any

from memstack.store._checks import unit_vector
from memstack.store._fulltext import exchange_terms, text_terms
from memstack.store._outbox import user_erased
from memstack.store._users import erase_plan, erase_rows
from memstack.store._users_load import Columns, LoadHooks, UserRows
from memstack.store.postgres._db import Database
from memstack.store.postgres._fence import erasure_epoch, record_erasure
from memstack.store.postgres._sql import PgSql, tx
from memstack.store.vectors.base import VectorIndex, VectorWrite
from memstack.store.vectors.hnsw import drop_index
from memstack.types import ErasureReport, UserRef, Vector, check_id, utcnow

__all__ = ["PgUserData"]

#: The tables an erasure empties (:func:`~memstack.store._users.erase_plan`), with PostgreSQL's own: the archive's
#: statistics and the user's HNSW index's row.
ERASE = erase_plan("seq", {"archive_vectors": ["archive_stats"], "memory_history": ["memory_ann_indexes"]})


def _terms(terms: builtins.list[str]) -> Columns:
    return {"terms": ("?::text[]", terms), "n_terms": ("?", len(terms))}


class PgUserData(UserRows):
    """One user's rows in PostgreSQL; see :class:`~memstack.store.base.UserData` (``export``, ``list`` and
    ``load``: :class:`~memstack.store._users_load.UserRows`)."""

    def __init__(self, db: Database, vectors: VectorIndex, dim: int) -> None:
        super().__init__(PgSql(db))
        self._db = db
        self._vectors = vectors
        self._dim = dim
        self._hooks = LoadHooks(
            memory=self._memory_columns,
            turn=lambda user, u, a: _terms(exchange_terms(u, a)),
            array=lambda items: list(items),
        )

    def _memory_columns(self, user: UserRef, content: str, vector: Vector) -> Columns:
        embedding = self._db.vector_param(unit_vector(vector, self._dim))
        return {"embedding": ("?::vector", embedding)} | _terms(text_terms(content))

    async def _loaded(self, user: UserRef, document: Mapping[str, builtins.list[dict[str, Any]]]) -> None:
        """A user who became large gets their HNSW index, as after ``add_many``."""
        active = sum(1 for m in document["memories"] if m.get("stored") and m.get("is_active"))
        self._vectors.committed(user, VectorWrite(active=active or None, stale=True))
        await self._vectors.settle(user)

    async def epoch(self, user: UserRef) -> int:
        check_id(user.user_id, "user_id")
        async with self._db.connection() as conn:
            return await erasure_epoch(conn, user)

    async def erase(self, user: UserRef) -> ErasureReport:
        check_id(user.user_id, "user_id")
        await self._vectors.forget(user)  # a build of their index in flight would hold the lock DROP INDEX needs
        async with self._db.connection() as conn, conn.transaction():
            await record_erasure(conn, user)  # first: waits for the user's fenced writes in flight
            dropped = await drop_index(conn, user)
            removed = await erase_rows(tx(conn), ERASE, user)
            await user_erased(tx(conn), self._sql, user, at=utcnow(), removed=sum(removed.values()))
        await self._vectors.forget(user)
        return ErasureReport(user.tenant, user.user_id, removed, indexes_dropped=dropped)
