"""The ``ChatThreads`` role on both backends: where a conversation a client keeps continues (table
``chat_threads``, one row per conversation state a client may send back; see
:class:`~memstack.store.base.ChatThreads`)."""

from __future__ import annotations

from memstack.store._sql import Sql
from memstack.types import UserRef, utcnow

__all__ = ["Threads"]


class Threads:
    """Rows of ``chat_threads``."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    async def mark(self, user: UserRef, digest: str, session_id: str, turn: int) -> None:
        await self._sql.execute(
            "INSERT INTO chat_threads (tenant, user_id, digest, session_id, turn, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, user_id, digest) DO UPDATE SET "
            "session_id = excluded.session_id, turn = excluded.turn, created_at = excluded.created_at",
            (user.tenant, user.user_id, digest, session_id, turn, utcnow()),
        )

    async def find(self, user: UserRef, digest: str) -> tuple[str, int] | None:
        found = await self._sql.one(
            "SELECT session_id, turn FROM chat_threads WHERE tenant = ? AND user_id = ? AND digest = ?",
            (user.tenant, user.user_id, digest),
        )
        return None if found is None else (str(found[0]), int(found[1]))
