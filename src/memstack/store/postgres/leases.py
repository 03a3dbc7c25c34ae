"""The PostgreSQL store's session leases (:mod:`memstack.store.leases`): the ``session_leases`` table.

One row per session ever held: ``owner`` (``NULL`` when free), the fencing ``token`` (bumped by every take, never
reset) and ``expires_at``. Times are the server's (``clock_timestamp()``), so leases do not depend on the clocks of
the machines running the turns. Every statement stands alone (autocommit), so a transaction-pooling pooler is fine.
The row is keyed like every per-user table, ``(tenant, user_id, …)``: it lives on the user's shard.
"""

from __future__ import annotations

from collections.abc import Sequence

from memstack.store.leases import LeaseKey, LeaseRows
from memstack.store.postgres._db import Database
from memstack.store.postgres._sql import PgSql

__all__ = ["FENCE", "PgLeaseTable"]


#: A statement's check that a turn's hold still has its session: ``%(owner)s`` NULL (no lease given) passes; the
#: row is share-locked until the statement's transaction ends, so no take can slip in before the write commits.
FENCE = (
    "SELECT count(*) FROM (SELECT 1 FROM session_leases WHERE tenant = %(tenant)s AND user_id = %(user)s "
    "AND session_id = %(sid)s AND owner = %(owner)s AND token = %(token)s FOR SHARE) AS held"
)


_RENEW = (
    "UPDATE session_leases SET expires_at = clock_timestamp() + make_interval(secs => %(ttl)s) "
    "WHERE owner = %(owner)s AND (tenant, user_id, session_id) IN "
    "(SELECT * FROM unnest(%(tenants)s::text[], %(users)s::text[], %(sids)s::text[])) "
    "RETURNING tenant, user_id, session_id"
)


class PgLeaseTable(LeaseRows):
    """:class:`~memstack.store.leases.LeaseTable` on PostgreSQL."""

    _later = "clock_timestamp() + make_interval(secs => ?)"
    _free = "'-infinity'"

    def __init__(self, db: Database) -> None:
        super().__init__(PgSql(db))
        self._db = db

    def _after(self, seconds: float) -> float:
        return seconds

    async def renew(self, owner: str, keys: Sequence[LeaseKey], ttl_s: float) -> set[LeaseKey]:
        params = {
            "ttl": ttl_s,
            "owner": owner,
            "tenants": [k[0] for k in keys],
            "users": [k[1] for k in keys],
            "sids": [k[2] for k in keys],
        }
        async with self._db.connection() as conn:
            rows = await (await conn.execute(_RENEW, params)).fetchall()
        return {(str(t), str(u), str(s)) for t, u, s in rows}
