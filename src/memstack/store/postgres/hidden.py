"""The PostgreSQL store's ``HiddenStore`` role: what forgotten memories hide (:mod:`memstack.store._hidden`, where
the reads and writes both backends share are). Here: the table, and the exchanges holding a term found by the
stems' GIN index. Every statement names the tenant and the user (sharding by user).
"""

from __future__ import annotations

import builtins
from typing import Any

import psycopg

from memstack.store._hidden import HiddenReads
from memstack.store._session_rows import TURN_COLUMNS
from memstack.store.postgres._db import Database
from memstack.store.postgres._sql import PgSql
from memstack.types import UserRef

__all__ = ["PgHidden", "migrate_hidden_items"]

Conn = psycopg.AsyncConnection[Any]


async def migrate_hidden_items(conn: Conn, dim: int) -> None:
    """Migration ``0018_hidden_items``. ``seq`` is an identity, never used twice, so the user's ``(count, max
    seq)`` changes with every hide and restore (``version``)."""
    for statement in (
        b"""
        CREATE TABLE hidden_items (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant text NOT NULL,
            user_id text NOT NULL,
            memory_id text NOT NULL,
            kind text NOT NULL CHECK (kind IN ('turn', 'fact', 'line')),
            session_id text NOT NULL,
            turn integer NOT NULL DEFAULT 0,
            text text NOT NULL DEFAULT '',
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        b"CREATE INDEX hidden_items_by_session ON hidden_items (tenant, user_id, session_id, kind, turn)",
        b"CREATE INDEX hidden_items_by_memory ON hidden_items (tenant, user_id, memory_id)",
    ):
        await conn.execute(statement)


class PgHidden(HiddenReads):
    """:class:`~memstack.store._hidden.HiddenReads`, the exchanges holding a term found by the stems' GIN index."""

    def __init__(self, db: Database) -> None:
        super().__init__(PgSql(db))

    def _holding(self, user: UserRef, terms: builtins.list[str]) -> tuple[str, builtins.list[Any]]:
        return (
            f"SELECT {TURN_COLUMNS}, t.seq FROM session_turns t JOIN sessions s ON s.seq = t.session_seq "
            "WHERE t.tenant = ? AND t.user_id = ? AND t.terms && ?::text[]",
            [user.tenant, user.user_id, terms],
        )
