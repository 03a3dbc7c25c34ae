"""The ``IdempotencyStore`` role on both backends: responses kept under an HTTP write's ``Idempotency-Key`` (see
:class:`~memstack.store.base.IdempotencyStore`), one row of ``idempotency_keys`` per ``(tenant, key)`` (each
backend's migration ``idempotency_keys``).

A claim is one upsert that takes the key only when it is free (no record, an expired one, an abandoned claim of the
same request, or an answered one the caller means to replace); when it is not, the same transaction reads the row
it conflicted with and answers it. On PostgreSQL that row stays locked until the read, on SQLite the write
transaction holds the file, so every process sharing the store agrees on who holds a key.

Every write is under the caller's erasure fence (:mod:`memstack.store.fence`), on both backends: a request that
began before its user was erased cannot leave a key (and the response it kept) behind the erasure.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from memstack.store._sql import Row, Sql, Tx
from memstack.types import StoredResponse, UserRef

__all__ = ["Idempotency"]

_CLAIM = (
    "INSERT INTO idempotency_keys AS k (tenant, key, user_id, fingerprint, created_at, expires_at) "
    "VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (tenant, key) DO UPDATE SET user_id = excluded.user_id, fingerprint = excluded.fingerprint, "
    "created_at = excluded.created_at, expires_at = excluded.expires_at, status = NULL, body = NULL, "
    "content_type = '' "
    "WHERE k.expires_at <= ? OR (k.status IS NULL AND k.fingerprint = excluded.fingerprint AND k.created_at <= ?) "
    "OR (? AND k.status IS NOT NULL) "
    "RETURNING 1"
)
_READ = (
    "SELECT tenant, key, user_id, fingerprint, created_at, expires_at, status, body, content_type "
    "FROM idempotency_keys WHERE tenant = ? AND key = ?"
)


class Idempotency:
    """Rows of ``idempotency_keys``, one per ``(tenant, key)``."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    def _record(self, row: Row) -> StoredResponse:
        tenant, key, user_id, fingerprint, created, expires, status, body, content_type = row
        when = self._sql.when
        return StoredResponse(
            tenant, key, user_id, fingerprint, when(created), when(expires), None if status is None else int(status),
            bytes(body or b""), content_type,
        )  # fmt: skip

    async def claim(
        self,
        user: UserRef,
        key: str,
        fingerprint: str,
        *,
        now: datetime,
        ttl_s: float,
        stale_s: float,
        take_answered: bool = False,
    ) -> StoredResponse | None:
        expires, stale = now + timedelta(seconds=ttl_s), now - timedelta(seconds=stale_s)
        claim = (user.tenant, key, user.user_id, fingerprint, now, expires, now, stale, take_answered)

        async def body(tx: Tx) -> Row | None:
            if await tx.one(_CLAIM, claim) is not None:
                return None
            return await tx.one(_READ, (user.tenant, key))

        row = await self._sql.write(body)
        return None if row is None else self._record(row)

    async def complete(
        self, user: UserRef, key: str, fingerprint: str, status: int, body: bytes, content_type: str
    ) -> None:
        await self._sql.execute(
            "UPDATE idempotency_keys SET status = ?, body = ?, content_type = ? "
            "WHERE tenant = ? AND user_id = ? AND key = ? AND fingerprint = ? AND status IS NULL",
            (status, body, content_type, user.tenant, user.user_id, key, fingerprint),
        )

    async def release(self, user: UserRef, key: str, fingerprint: str) -> None:
        await self._sql.execute(
            "DELETE FROM idempotency_keys "
            "WHERE tenant = ? AND user_id = ? AND key = ? AND fingerprint = ? AND status IS NULL",
            (user.tenant, user.user_id, key, fingerprint),
        )

    async def sweep(self, *, now: datetime) -> int:
        return await self._sql.execute("DELETE FROM idempotency_keys WHERE expires_at <= ?", (now,))
