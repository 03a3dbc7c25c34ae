"""The PostgreSQL store's ``HiddenStore`` role: what forgotten memories hide (:mod:`memstack.store._hidden`).

The writes are helpers the memory writes call inside their own transaction (:func:`hide_rows`,
:func:`unhide_rows`), so a forget and what it hides are one commit. The reads of other roles call
:func:`session_hidden` (one session's items) or embed the fragments below in their SQL. Every statement names the
tenant and the user (sharding by user).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from memstack.store._hidden import HIDDEN_COLUMNS, hidden_from_row, hidden_rows, parse_turn_ids
from memstack.store._session_rows import TURN_COLUMNS, check_page, facts_from_json, turn_from_row
from memstack.store.postgres._db import Database
from memstack.store.postgres._rows import utc
from memstack.types import ArchivedTurn, Fact, HiddenItem, UserRef

__all__ = ["PgHidden", "hide_rows", "migrate_hidden_items", "session_hidden", "unhide_rows"]

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


async def hide_rows(conn: Conn, user: UserRef, memory_id: str, items: Sequence[HiddenItem]) -> int:
    """Inside the caller's transaction: record ``items`` as hidden by ``memory_id``."""
    rows = hidden_rows(memory_id, items)
    if rows:
        async with conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO hidden_items (tenant, user_id, memory_id, kind, session_id, turn, text) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                [(user.tenant, user.user_id, *row) for row in rows],
            )
    return len(rows)


async def unhide_rows(conn: Conn, user: UserRef, memory_id: str) -> int:
    """Inside the caller's transaction: show again what ``memory_id`` hid."""
    cur = await conn.execute(
        "DELETE FROM hidden_items WHERE tenant = %s AND user_id = %s AND memory_id = %s",
        (user.tenant, user.user_id, memory_id),
    )
    return max(cur.rowcount, 0)


async def session_hidden(conn: Conn, user: UserRef, session_id: str) -> list[HiddenItem]:
    """What is hidden of one session."""
    cur = await conn.execute(
        f"SELECT {HIDDEN_COLUMNS} FROM hidden_items WHERE tenant = %s AND user_id = %s AND session_id = %s".encode(),
        (user.tenant, user.user_id, session_id),
    )
    return [hidden_from_row(r) for r in await cur.fetchall()]


class PgHidden:
    """Reads of ``hidden_items`` and of what a forget looks at."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def _rows(self, sql: str, params: Any) -> builtins.list[tuple[Any, ...]]:
        async with self._db.connection() as conn:
            cur = await conn.execute(sql.encode(), params)
            return await cur.fetchall()

    async def hidden(self, user: UserRef, *, memory_id: str | None = None) -> builtins.list[HiddenItem]:
        sql = f"SELECT {HIDDEN_COLUMNS} FROM hidden_items WHERE tenant = %s AND user_id = %s"
        params: builtins.list[Any] = [user.tenant, user.user_id]
        if memory_id is not None:
            sql += " AND memory_id = %s"
            params.append(memory_id)
        return [hidden_from_row(r) for r in await self._rows(sql + " ORDER BY seq", params)]

    async def version(self, user: UserRef) -> tuple[int, int]:
        rows = await self._rows(
            "SELECT count(*), coalesce(max(seq), 0) FROM hidden_items WHERE tenant = %s AND user_id = %s",
            (user.tenant, user.user_id),
        )
        return (int(rows[0][0]), int(rows[0][1]))

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

    async def session_texts(
        self, user: UserRef, session_ids: Sequence[str]
    ) -> builtins.list[tuple[str, str, tuple[Fact, ...]]]:
        wanted = sorted(set(session_ids))
        if not wanted:
            return []
        rows = await self._rows(
            "SELECT id, line, base_truth FROM sessions WHERE tenant = %s AND user_id = %s AND id = ANY(%s) "
            "ORDER BY seq",
            (user.tenant, user.user_id, wanted),
        )
        return [(str(sid), str(line), facts_from_json(facts)) for sid, line, facts in rows]


def _same(value: Any) -> Any:
    return value
