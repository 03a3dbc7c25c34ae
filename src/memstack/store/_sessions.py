"""The half of the ``SessionStore`` role that is the same on both backends: a session's ``open`` (its row created
or resumed by :func:`create_or_resume`), the per-session lock (a lease, :mod:`memstack.store.leases`), the turns
still due a summary, and ending a session with its cross-session line. Each backend's ``sessions.py`` adds
``record`` and ``commit``, the way it runs them (SQLite in one trip to its database thread, PostgreSQL recording in
one statement and committing in one pipelined transaction), and reads a session's state its own way
(:meth:`SessionsBase._state`): SQLite in three indexed statements, which beat PostgreSQL's one statement there (it
reads every turn's columns past the long texts), PostgreSQL in one.
"""

from __future__ import annotations

import builtins
from datetime import datetime

from memstack.errors import NotFound
from memstack.store._archive import summary_columns
from memstack.store._checks import utc
from memstack.store._outbox import session_ended
from memstack.store._session_rows import (
    FLAGGED,
    SESSION_COLUMNS,
    TURN_COLUMNS,
    check_page,
    check_same_agent,
    check_session_agent,
    check_session_id,
    needs_write,
    summary_from_row,
    turn_from_row,
)
from memstack.store._sql import Row, Sql, Tx
from memstack.store.base import HeldLock
from memstack.store.leases import SessionLeases
from memstack.types import ArchivedTurn, SessionState, SessionSummary, UserRef, utcnow

__all__ = ["SessionsBase", "create_or_resume", "session_row"]


def session_row(key: str) -> str:
    """The statement that reads a session's row as ``open`` uses it (its ``key``, then ``SESSION_COLUMNS``), by
    tenant, user and id."""
    return f"SELECT {key}, {SESSION_COLUMNS} FROM sessions WHERE tenant = ? AND user_id = ? AND id = ?"


async def create_or_resume(sql: Sql, tx: Tx, user: UserRef, session_id: str, agent: str | None, stamp: datetime) -> Row:
    """Inside a write: the session's row, created if it is new, resumed if it ended, with ``agent`` learnt
    (``InputError`` if it belongs to another agent)."""
    where = (user.tenant, user.user_id, session_id)
    await tx.execute(
        "INSERT INTO sessions (tenant, user_id, id, agent, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (tenant, user_id, id) DO NOTHING",
        (*where, agent, stamp, stamp),
    )
    row = await tx.one(session_row(sql.key) + sql.for_update, where)
    assert row is not None  # inserted or found just now, in the same transaction
    check_same_agent(session_id, row, agent)
    if needs_write(row, agent):  # learn the agent; resume if ended
        await tx.execute(
            f"UPDATE sessions SET agent = ?, ended_at = NULL WHERE {sql.key} = ?", (agent or row[1], row[0])
        )
        row = await tx.one(session_row(sql.key), where)
        assert row is not None
    return tuple(row)


class SessionsBase:
    """What :class:`~memstack.store.base.SessionStore` needs beyond a backend's own writes."""

    def __init__(self, sql: Sql, leases: SessionLeases) -> None:
        self._sql = sql
        self.leases = leases

    async def close(self) -> None:
        await self.leases.close()

    async def open(
        self,
        user: UserRef,
        session_id: str,
        *,
        agent: str | None = None,
        create: bool = True,
        window_turns: int = 5,
        now: datetime | None = None,
    ) -> SessionState:
        """The common case reads without a snapshot: under the session lock nothing else writes the session, and
        without it (listings, monitoring) a read between two commits is as good as any. A session to create,
        resume or give its agent is written (under the caller's erasure fence) and read in one transaction."""
        check_session_id(session_id)
        check_session_agent(agent)
        stamp = utc(now) or utcnow()

        async def read(tx: Tx) -> tuple[Row | None, SessionState | None]:
            row = await tx.one(session_row(self._sql.key), (user.tenant, user.user_id, session_id))
            if row is None or (create and needs_write(row, agent)):
                return row, None
            return row, await self._state(tx, user, session_id, row, window_turns)

        row, state = await self._sql.read(read, snapshot=False)
        if state is not None:
            return state
        if row is None and not create:
            raise NotFound("session", session_id)

        async def write(tx: Tx) -> SessionState:
            row = await create_or_resume(self._sql, tx, user, session_id, agent, stamp)
            return await self._state(tx, user, session_id, row, window_turns)

        return await self._sql.write(write)

    async def _state(self, tx: Tx, user: UserRef, session_id: str, row: Row, window_turns: int) -> SessionState:
        """The backend's hook: the state of the session of ``row`` (its key, then ``SESSION_COLUMNS``), hidden
        exchanges and facts left out (:func:`~memstack.store._hidden.visible_state`)."""
        raise NotImplementedError

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
            was = await tx.one("SELECT ended_at FROM sessions WHERE tenant = ? AND user_id = ? AND id = ?", where)
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
            if ended and was is not None and was[0] is None:  # its first end: the one webhook event
                await session_ended(tx, self._sql, user, session_id, line, at=stamp)
            return summary_from_row(row, when=self._sql.when)

        return await self._sql.write(body)
