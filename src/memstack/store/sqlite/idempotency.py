"""The SQLite store's ``IdempotencyStore`` role: responses kept under an HTTP write's ``Idempotency-Key`` (see
:class:`~memstack.store.base.IdempotencyStore`). A claim is one write transaction (read the record, take the key
or answer the record), so two processes sharing the file cannot both take a key."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from typing import Any

from memstack.store.sqlite._core import Core, user_key
from memstack.store.sqlite._rows import to_ts
from memstack.types import StoredResponse, UserRef

__all__ = ["SQLiteIdempotency", "migrate_idempotency_keys"]


def migrate_idempotency_keys(conn: sqlite3.Connection) -> None:
    """Migration ``016_idempotency_keys``."""
    conn.execute(
        """
        CREATE TABLE idempotency_keys (
            tenant TEXT NOT NULL,
            key TEXT NOT NULL,
            user_id TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            status INTEGER,
            body BLOB,
            content_type TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            PRIMARY KEY (tenant, key)
        )
        """
    )
    conn.execute("CREATE INDEX idempotency_keys_by_user ON idempotency_keys (tenant, user_id)")
    conn.execute("CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at)")


_COLUMNS = "tenant, key, user_id, fingerprint, created_at, expires_at, status, body, content_type"


def _record(row: tuple[Any, ...]) -> StoredResponse:
    tenant, key, user_id, fingerprint, created, expires, status, body, content_type = row
    return StoredResponse(
        tenant, key, user_id, fingerprint, datetime.fromisoformat(created), datetime.fromisoformat(expires),
        None if status is None else int(status), bytes(body or b""), content_type,
    )  # fmt: skip


class SQLiteIdempotency:
    """Rows of ``idempotency_keys``, one per ``(tenant, key)``."""

    def __init__(self, core: Core) -> None:
        self._core = core

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
        tenant, user_id = user_key(user)
        stamp, stale = to_ts(now), to_ts(now - timedelta(seconds=stale_s))

        def body(conn: sqlite3.Connection) -> StoredResponse | None:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM idempotency_keys WHERE tenant = ? AND key = ?", (tenant, key)
            ).fetchone()
            if row is not None:
                found = _record(row)
                abandoned = found.pending and found.fingerprint == fingerprint and row[4] <= stale
                if row[5] > stamp and not abandoned and not (take_answered and not found.pending):
                    return found
            conn.execute(
                "INSERT OR REPLACE INTO idempotency_keys (tenant, key, user_id, fingerprint, created_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (tenant, key, user_id, fingerprint, stamp, to_ts(now + timedelta(seconds=ttl_s))),
            )
            return None

        return await self._core.run(lambda conn: self._core.write(conn, body))

    async def complete(
        self, user: UserRef, key: str, fingerprint: str, status: int, body: bytes, content_type: str
    ) -> None:
        args = (status, body, content_type, *user_key(user), key, fingerprint)

        def run(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE idempotency_keys SET status = ?, body = ?, content_type = ? "
                "WHERE tenant = ? AND user_id = ? AND key = ? AND fingerprint = ? AND status IS NULL",
                args,
            )

        await self._core.run(lambda conn: self._core.write(conn, run))

    async def release(self, user: UserRef, key: str, fingerprint: str) -> None:
        args = (*user_key(user), key, fingerprint)

        def run(conn: sqlite3.Connection) -> None:
            conn.execute(
                "DELETE FROM idempotency_keys "
                "WHERE tenant = ? AND user_id = ? AND key = ? AND fingerprint = ? AND status IS NULL",
                args,
            )

        await self._core.run(lambda conn: self._core.write(conn, run))

    async def sweep(self, *, now: datetime) -> int:
        stamp = to_ts(now)

        def run(conn: sqlite3.Connection) -> int:
            return conn.execute("DELETE FROM idempotency_keys WHERE expires_at <= ?", (stamp,)).rowcount

        return await self._core.run(lambda conn: self._core.write(conn, run))
