"""The PostgreSQL store's ``ChatThreads`` role: where a conversation a client keeps continues (see
:class:`~memstack.store.base.ChatThreads`)."""

from __future__ import annotations

from typing import Any

import psycopg

from memstack.store.postgres._db import Database
from memstack.types import UserRef

__all__ = ["PgThreads", "migrate_chat_threads"]

Conn = psycopg.AsyncConnection[Any]


async def migrate_chat_threads(conn: Conn, dim: int) -> None:
    """Migration ``0016_chat_threads``."""
    await conn.execute(
        b"""
        CREATE TABLE chat_threads (
            tenant text NOT NULL,
            user_id text NOT NULL,
            digest text NOT NULL,
            session_id text NOT NULL,
            turn integer NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (tenant, user_id, digest)
        )
        """
    )


class PgThreads:
    """Rows of ``chat_threads``, one per conversation state a client may send back."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def mark(self, user: UserRef, digest: str, session_id: str, turn: int) -> None:
        async with self._db.writing(single=True) as conn:
            await conn.execute(
                "INSERT INTO chat_threads (tenant, user_id, digest, session_id, turn) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (tenant, user_id, digest) DO UPDATE SET session_id = excluded.session_id, "
                "turn = excluded.turn, created_at = now()",
                (user.tenant, user.user_id, digest, session_id, turn),
            )

    async def find(self, user: UserRef, digest: str) -> tuple[str, int] | None:
        async with self._db.connection() as conn:
            cur = await conn.execute(
                "SELECT session_id, turn FROM chat_threads WHERE tenant = %s AND user_id = %s AND digest = %s",
                (user.tenant, user.user_id, digest),
            )
            found = await cur.fetchone()
        return None if found is None else (str(found[0]), int(found[1]))
