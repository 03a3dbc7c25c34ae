"""The PostgreSQL store's ``HiddenStore`` role: what forgotten memories hide (:mod:`memstack.store._hidden`, where
the reads and writes both backends share are). Here: the table and ``mentions`` by the stems' GIN index. Every
statement names the tenant and the user (sharding by user).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from memstack.store._hidden import HiddenReads, parse_turn_ids
from memstack.store._session_rows import TURN_COLUMNS, check_page, turn_from_row
from memstack.store.postgres._db import Database
from memstack.store.postgres._rows import utc
from memstack.store.postgres._sql import PgSql
from memstack.types import ArchivedTurn, UserRef

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
    """:class:`~memstack.store._hidden.HiddenReads`, and what a forget looks at found by the stems' GIN index."""

    def __init__(self, db: Database) -> None:
        super().__init__(PgSql(db))
        self._db = db

    async def _rows(self, sql: str, params: Any) -> builtins.list[tuple[Any, ...]]:
        async with self._db.connection() as conn:
            cur = await conn.execute(sql.encode(), params)
            return await cur.fetchall()

    async def mentions(
        self,
        user: UserRef,
        terms: Sequence[str],
        *,
        turn_ids: Sequence[str] = (),
        said_at: Sequence[datetime] = (),
        limit: int = 1000,
    ) -> builtins.list[ArchivedTurn]:
        check_page(limit)
        named = parse_turn_ids(turn_ids)
        base = f"SELECT {TURN_COLUMNS}, t.seq FROM session_turns t JOIN sessions s ON s.seq = t.session_seq "
        found: dict[int, tuple[Any, ...]] = {}
        if terms:
            rows = await self._rows(
                base + "WHERE t.tenant = %s AND t.user_id = %s AND t.terms && %s::text[] ORDER BY t.seq DESC LIMIT %s",
                (user.tenant, user.user_id, list(terms), limit),
            )
            found.update((int(r[-1]), r) for r in rows)
        if named:
            rows = await self._rows(
                base + "JOIN unnest(%s::text[], %s::int[]) AS n(sid, turn) ON s.id = n.sid AND t.turn = n.turn "
                "WHERE t.tenant = %s AND t.user_id = %s AND s.tenant = %s AND s.user_id = %s",
                (
                    [sid for sid, _ in named], [turn for _, turn in named],
                    user.tenant, user.user_id, user.tenant, user.user_id,
                ),
            )  # fmt: skip
            found.update((int(r[-1]), r) for r in rows)
        if said_at:
            rows = await self._rows(
                base + "WHERE t.tenant = %s AND t.user_id = %s AND t.at = ANY(%s::timestamptz[])",
                (user.tenant, user.user_id, [utc(when) for when in said_at]),
            )
            found.update((int(r[-1]), r) for r in rows)
        return [turn_from_row(found[seq][:-1], when=_same, flags=_same) for seq in sorted(found, reverse=True)]


def _same(value: Any) -> Any:
    return value
