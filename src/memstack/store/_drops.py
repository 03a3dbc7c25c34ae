"""The ``CaptureDrops`` role on both backends: automatic captures a full tier kept from being stored, counted per
user (table ``capture_drops``, one row per user a limit ever stopped; see
:class:`~memstack.store.base.CaptureDrops`)."""

from __future__ import annotations

from datetime import datetime

from memstack.store._sql import Sql
from memstack.types import DroppedCaptures, UserRef

__all__ = ["Drops"]


class Drops:
    """Rows of ``capture_drops``."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    async def record(self, user: UserRef, *, at: datetime) -> None:
        await self._sql.execute(
            "INSERT INTO capture_drops (tenant, user_id, count, first_at, last_at) VALUES (?, ?, 1, ?, ?) "
            "ON CONFLICT (tenant, user_id) DO UPDATE SET count = capture_drops.count + 1, last_at = excluded.last_at",
            (user.tenant, user.user_id, at, at),
        )

    async def get(self, user: UserRef) -> DroppedCaptures:
        found = await self._sql.one(
            "SELECT count, first_at, last_at FROM capture_drops WHERE tenant = ? AND user_id = ?",
            (user.tenant, user.user_id),
        )
        if found is None:
            return DroppedCaptures()
        return DroppedCaptures(int(found[0]), self._sql.when(found[1]), self._sql.when(found[2]))
