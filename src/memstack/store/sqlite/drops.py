"""The SQLite store's ``CaptureDrops`` role: automatic captures a full tier kept from being stored, counted per
user (see :class:`~memstack.store.base.CaptureDrops`)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from memstack.store.sqlite._core import Core, user_key
from memstack.store.sqlite._rows import from_ts, to_ts
from memstack.types import DroppedCaptures, UserRef

__all__ = ["SQLiteDrops", "migrate_capture_drops"]


def migrate_capture_drops(conn: sqlite3.Connection) -> None:
    """Migration ``017_capture_drops``."""
    conn.execute(
        """
        CREATE TABLE capture_drops (
            tenant TEXT NOT NULL,
            user_id TEXT NOT NULL,
            count INTEGER NOT NULL,
            first_at TEXT NOT NULL,
            last_at TEXT NOT NULL,
            PRIMARY KEY (tenant, user_id)
        ) WITHOUT ROWID
        """
    )


class SQLiteDrops:
    """Rows of ``capture_drops``, one per user a limit ever stopped."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def record(self, user: UserRef, *, at: datetime) -> None:
        when = to_ts(at)
        row = (*user_key(user), when, when)

        def body(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO capture_drops (tenant, user_id, count, first_at, last_at) VALUES (?, ?, 1, ?, ?) "
                "ON CONFLICT (tenant, user_id) DO UPDATE SET count = count + 1, last_at = excluded.last_at",
                row,
            )

        await self._core.run(lambda conn: self._core.write(conn, body))

    async def get(self, user: UserRef) -> DroppedCaptures:
        query = "SELECT count, first_at, last_at FROM capture_drops WHERE tenant = ? AND user_id = ?"
        found = await self._core.run(lambda conn: conn.execute(query, user_key(user)).fetchone())
        if found is None:
            return DroppedCaptures()
        return DroppedCaptures(int(found[0]), from_ts(found[1]), from_ts(found[2]))
