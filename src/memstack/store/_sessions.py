"""The half of the ``SessionStore`` role that is the same on both backends: the per-session lock (a lease,
:mod:`memstack.store.leases`), the turns still due a summary, and ending a session with its cross-session line.
Each backend's ``sessions.py`` adds ``open``, ``record`` and ``commit``, the writes it does its own way (SQLite in
one trip to its database thread, PostgreSQL in one statement or one pipelined transaction).
"""

from __future__ import annotations

import builtins
from datetime import datetime

from memstack.errors import NotFound
from memstack.store._archive import summary_columns
from memstack.store._session_rows import (
    FLAGGED,
    TURN_COLUMNS,
    check_page,
    check_session_id,
    summary_from_row,
    turn_from_row,
)
from memstack.store._sql import Sql, Tx
from memstack.store.base import HeldLock
from memstack.store.leases import SessionLeases
from memstack.types import ArchivedTurn, SessionSummary, UserRef, utcnow

__all__ = ["SessionsBase"]


class SessionsBase:
    """What :class:`~memstack.store.base.SessionStore` needs beyond a backend's own writes."""

    def __init__(self, sql: Sql, leases: SessionLeases) -> None:
        self._sql = sql
        self.leases = leases

    async def close(self) -> None:
        await self.leases.close()

    async def acquire(self, user: UserRef, session_id: str, *, timeout: float | None = None) -> HeldLock:
        check_session_id(session_id)
        return await self.leases.acquire(user, session_id, timeout=timeout)

    async def pending(self, *, limit: int = 100) -> builtins.list[ArchivedTurn]:
        check_page(limit)
        key = self._sql.key
        rows = await self._sql.all(
            f"SELECT {TURN_COLUMNS} FROM session_turns t JOIN sessions s ON s.{key} = t.session_{key} "
            f"WHERE t.status IN (?, ?) ORDER BY t.at, t.{key} LIMIT ?",
            (*FLAGGED, limit),
        )
        return [turn_from_row(r, when=self._sql.when, flags=self._sql.unjson) for r in rows]

    async def end(
        self, user: UserRef, session_id: str, line: str, *, through_turn: int, ended: bool, now: datetime | None = None
    ) -> SessionSummary:
        check_session_id(session_id)
        stamp = now or utcnow()
        where = (user.tenant, user.user_id, session_id)

        async def body(tx: Tx) -> SessionSummary:
            changed = await tx.execute(
                "UPDATE sessions SET line = ?, line_turn = ?, ended_at = CASE WHEN ? THEN ? ELSE ended_at END "
                "WHERE tenant = ? AND user_id = ? AND id = ?",
                (line, through_turn, ended, stamp, *where),
            )
            if changed != 1:
                raise NotFound("session", session_id)
            columns = summary_columns(self._sql.key)
            row = await tx.one(f"SELECT {columns} FROM sessions s WHERE tenant = ? AND user_id = ? AND id = ?", where)
            assert row is not None  # updated just now, in the same transaction
            return summary_from_row(row, when=self._sql.when)

        return await self._sql.write(body)
