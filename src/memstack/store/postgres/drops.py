"""The PostgreSQL store's ``CaptureDrops`` role: automatic captures a full tier kept from being stored, counted per
user (see :class:`~memstack.store.base.CaptureDrops`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from memstack.store.postgres._db import Database
from memstack.types import DroppedCaptures, UserRef

__all__ = ["PgDrops", "migrate_capture_drops"]

Conn = psycopg.AsyncConnection[Any]


async def migrate_capture_drops(conn: Conn, dim: int) -> None:
    """Migration ``0018_capture_drops``."""
    await conn.execute(
        b"""
        CREATE TABLE capture_drops (
            tenant text NOT NULL,
            user_id text NOT NULL,
            count bigint NOT NULL,
            first_at timestamptz NOT NULL,
            last_at timestamptz NOT NULL,
            PRIMARY KEY (tenant, user_id)
        )
        """
    )


class PgDrops:
    """Rows of ``capture_drops``, one per user a limit ever stopped."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(self, user: UserRef, *, at: datetime) -> None:
        async with self._db.writing(single=True) as conn:
            await conn.execute(
                "INSERT INTO capture_drops (tenant, user_id, count, first_at, last_at) VALUES (%s, %s, 1, %s, %s) "
                "ON CONFLICT (tenant, user_id) DO UPDATE SET count = capture_drops.count + 1, "
                "last_at = excluded.last_at",
                (user.tenant, user.user_id, at, at),
            )

    async def get(self, user: UserRef) -> DroppedCaptures:
        async with self._db.connection() as conn:
            cur = await conn.execute(
                "SELECT count, first_at, last_at FROM capture_drops WHERE tenant = %s AND user_id = %s",
                (user.tenant, user.user_id),
            )
            found = await cur.fetchone()
        if found is None:
            return DroppedCaptures()
        return DroppedCaptures(int(found[0]), found[1], found[2])
