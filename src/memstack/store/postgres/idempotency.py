"""The PostgreSQL store's ``IdempotencyStore`` role: responses kept under an HTTP write's ``Idempotency-Key`` (see
:class:`~memstack.store.base.IdempotencyStore`). A claim is one upsert that takes the key only when it is free
(no record, an expired one, or an abandoned claim of the same request); when it is not, the row it conflicted with
stays locked until the same transaction has read it, so every server process sharing the database agrees on who
holds a key."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import psycopg

from memstack.store.postgres._db import Database
from memstack.types import StoredResponse, UserRef

__all__ = ["PgIdempotency", "migrate_idempotency_keys"]

Conn = psycopg.AsyncConnection[Any]


async def migrate_idempotency_keys(conn: Conn, dim: int) -> None:
    """Migration ``0017_idempotency_keys``."""
    await conn.execute(
        b"""
        CREATE TABLE idempotency_keys (
            tenant text NOT NULL,
            key text NOT NULL,
            user_id text NOT NULL,
            fingerprint text NOT NULL,
            status integer,
            body bytea,
            content_type text NOT NULL DEFAULT '',
            created_at timestamptz NOT NULL,
            expires_at timestamptz NOT NULL,
            PRIMARY KEY (tenant, key)
        )
        """
    )
    await conn.execute(b"CREATE INDEX idempotency_keys_by_user ON idempotency_keys (tenant, user_id)")
    await conn.execute(b"CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at)")


_CLAIM = """
INSERT INTO idempotency_keys AS k (tenant, key, user_id, fingerprint, created_at, expires_at)
VALUES (%(tenant)s, %(key)s, %(user)s, %(fp)s, %(now)s, %(expires)s)
ON CONFLICT (tenant, key) DO UPDATE SET user_id = excluded.user_id, fingerprint = excluded.fingerprint,
    created_at = excluded.created_at, expires_at = excluded.expires_at, status = NULL, body = NULL, content_type = ''
WHERE k.expires_at <= %(now)s
    OR (k.status IS NULL AND k.fingerprint = excluded.fingerprint AND k.created_at <= %(stale)s)
    OR (%(take)s AND k.status IS NOT NULL)
RETURNING 1
"""
_READ = (
    "SELECT tenant, key, user_id, fingerprint, created_at, expires_at, status, body, content_type "
    "FROM idempotency_keys WHERE tenant = %(tenant)s AND key = %(key)s"
)


class PgIdempotency:
    """Rows of ``idempotency_keys``, one per ``(tenant, key)``."""

    def __init__(self, db: Database) -> None:
        self._db = db

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
        args = {
            "tenant": user.tenant, "key": key, "user": user.user_id, "fp": fingerprint, "now": now,
            "expires": now + timedelta(seconds=ttl_s), "stale": now - timedelta(seconds=stale_s),
            "take": take_answered,
        }  # fmt: skip
        async with self._db.connection() as conn, conn.transaction():
            if await (await conn.execute(_CLAIM, args)).fetchone() is not None:
                return None
            row = await (await conn.execute(_READ, args)).fetchone()
        if row is None:  # pragma: no cover - the conflicting row is locked until the transaction ends
            return None
        tenant, key, user_id, fp, created, expires, status, body, content_type = row
        return StoredResponse(
            tenant, key, user_id, fp, created, expires, None if status is None else int(status), bytes(body or b""),
            content_type,
        )  # fmt: skip

    async def complete(
        self, user: UserRef, key: str, fingerprint: str, status: int, body: bytes, content_type: str
    ) -> None:
        async with self._db.connection() as conn:
            await conn.execute(
                "UPDATE idempotency_keys SET status = %s, body = %s, content_type = %s WHERE tenant = %s "
                "AND user_id = %s AND key = %s AND fingerprint = %s AND status IS NULL",
                (status, body, content_type, user.tenant, user.user_id, key, fingerprint),
            )

    async def release(self, user: UserRef, key: str, fingerprint: str) -> None:
        async with self._db.connection() as conn:
            await conn.execute(
                "DELETE FROM idempotency_keys WHERE tenant = %s AND user_id = %s AND key = %s AND fingerprint = %s "
                "AND status IS NULL",
                (user.tenant, user.user_id, key, fingerprint),
            )

    async def sweep(self, *, now: datetime) -> int:
        async with self._db.connection() as conn:
            cur = await conn.execute("DELETE FROM idempotency_keys WHERE expires_at <= %s", (now,))
            return cur.rowcount
