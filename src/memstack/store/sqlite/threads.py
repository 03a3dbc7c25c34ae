"""The SQLite store's ``ChatThreads`` role: where a conversation a client keeps continues (see
:class:`~memstack.store.base.ChatThreads`)."""

from __future__ import annotations

import sqlite3

from memstack.store.sqlite._core import Core, user_key
from memstack.store.sqlite._rows import to_ts
from memstack.types import UserRef, utcnow

__all__ = ["SQLiteThreads", "migrate_chat_threads"]


def migrate_chat_threads(conn: sqlite3.Connection) -> None:
    """Migration ``015_chat_threads``."""
    conn.execute(
        """
        CREATE TABLE chat_threads (
            tenant TEXT NOT NULL,
            user_id TEXT NOT NULL,
            digest TEXT NOT NULL,
            session_id TEXT NOT NULL,
            turn INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (tenant, user_id, digest)
        ) WITHOUT ROWID
        """
    )


class SQLiteThreads:
    """Rows of ``chat_threads``, one per conversation state a client may send back."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def mark(self, user: UserRef, digest: str, session_id: str, turn: int) -> None:
        row = (*user_key(user), digest, session_id, turn, to_ts(utcnow()))

        def body(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO chat_threads (tenant, user_id, digest, session_id, turn, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, user_id, digest) DO UPDATE SET "
                "session_id = excluded.session_id, turn = excluded.turn, created_at = excluded.created_at",
                row,
            )

        await self._core.run(lambda conn: self._core.write(conn, body))

    async def find(self, user: UserRef, digest: str) -> tuple[str, int] | None:
        query = "SELECT session_id, turn FROM chat_threads WHERE tenant = ? AND user_id = ? AND digest = ?"
        found = await self._core.run(lambda conn: conn.execute(query, (*user_key(user), digest)).fetchone())
        return None if found is None else (str(found[0]), int(found[1]))
