"""The half of the ``SessionStore`` role that is the same on both backends: a session's ``open`` (its row created
or resumed by :func:`create_or_resume`), the per-session lock (a lease, :mod:`memstack.store.leases`), the turns
still due a summary, ending a session with its cross-session line, and a turn's ``record`` and ``commit``, each one
write transaction (on SQLite one trip to its database thread). PostgreSQL runs those two its own way
(``postgres/sessions.py``: the record in one statement, the commit in one pipelined transaction, the hidden facts
kept in SQL), to save round trips. Each backend reads a session's state its own way (:meth:`SessionsBase._state`):
SQLite in three indexed statements, which beat PostgreSQL's one statement there (it reads every turn's columns past
the long texts), PostgreSQL in one.
"""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Any

from memstack.errors import NotFound
from memstack.store._archive import summary_columns
from memstack.store._checks import utc
from memstack.store._fulltext import exchange_terms
from memstack.store._hidden import keep_hidden_facts, session_hidden
from memstack.store._outbox import session_ended
from memstack.store._session_rows import (
    FLAGGED,
    SESSION_COLUMNS,
    TURN_COLUMNS,
    check_page,
    check_same_agent,
    check_session_agent,
    check_session_id,
    check_turn,
    facts_from_json,
    facts_to_json,
    needs_write,
    summary_from_row,
    turn_from_row,
    turn_taken,
    version_moved,
)
from memstack.store._sql import Row, Sql, Tx
from memstack.store.base import HeldLock
from memstack.store.leases import Lease, SessionLeases, lease_lost
from memstack.types import (
    ArchivedTurn,
    HiddenKind,
    SessionState,
    SessionSummary,
    TurnCommit,
    TurnStatus,
    UserRef,
    utcnow,
)

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


async def lease_held(sql: Sql, tx: Tx, user: UserRef, session_id: str, lease: Lease | None) -> bool:
    """Inside a turn's write: does ``lease`` still hold the session (``True`` when none is given)? The lease's row
    stays locked until the write commits, so no take slips in before it."""
    if lease is None:
        return True
    row = await tx.one(
        "SELECT 1 FROM session_leases WHERE tenant = ? AND user_id = ? AND session_id = ? AND owner = ? AND token = ?"
        + sql.for_update,
        (user.tenant, user.user_id, session_id, lease.owner, lease.token),
    )
    return row is not None


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

    def _turn_columns(self, user: UserRef) -> dict[str, Any]:
        """The backend's hook: columns of its own a recorded turn fills (SQLite's FTS5 owner token)."""
        return {}

    async def record(self, user: UserRef, turn: ArchivedTurn, *, lease: Lease | None = None) -> None:
        check_turn(turn)
        terms = exchange_terms(turn.user, turn.assistant)
        sql, key = self._sql, self._sql.key
        extra = self._turn_columns(user)

        async def body(tx: Tx) -> None:
            row = await tx.one(session_row(key) + sql.for_update, (user.tenant, user.user_id, turn.session_id))
            if row is None:
                raise NotFound("session", turn.session_id)
            if not await lease_held(sql, tx, user, turn.session_id, lease):
                raise lease_lost(turn.session_id, turn.turn, "recorded")
            turn_count = int(row[2])
            if turn.turn != turn_count + 1:
                raise turn_taken(turn.session_id, turn_count, turn.turn)
            await tx.execute(
                f"INSERT INTO session_turns (session_{key}, tenant, user_id, turn, user_text, assistant_text, at, "
                f"route, user_keep, assistant_keep, status, terms, n_terms{''.join(', ' + c for c in extra)}) "
                f"VALUES ({', '.join('?' * (13 + len(extra)))})",
                (
                    row[0], user.tenant, user.user_id, turn.turn, turn.user, turn.assistant, turn.at, turn.route,
                    turn.keep_extra[0], turn.keep_extra[1], TurnStatus.PENDING.value, sql.terms(terms), len(terms),
                    *extra.values(),
                ),
            )  # fmt: skip
            await tx.execute(
                "UPDATE sessions SET turn_count = ?, updated_at = CASE WHEN updated_at > ? THEN updated_at ELSE ? END "
                f"WHERE {key} = ?",
                (turn.turn, turn.at, turn.at, row[0]),
            )

        await sql.write(body)

    async def commit(
        self,
        user: UserRef,
        session_id: str,
        commit: TurnCommit,
        *,
        now: datetime | None = None,
        lease: Lease | None = None,
    ) -> None:
        check_session_id(session_id)
        stamp = utc(now) or utcnow()
        sql, key = self._sql, self._sql.key

        async def body(tx: Tx) -> None:
            row = await tx.one(session_row(key) + sql.for_update, (user.tenant, user.user_id, session_id))
            if row is None:
                raise NotFound("session", session_id)
            if not await lease_held(sql, tx, user, session_id, lease):
                raise lease_lost(session_id, commit.turn, "committed")
            pk, version, last_consolidated = row[0], int(row[3]), int(row[5])
            if version != commit.expected_version:
                raise version_moved(session_id, commit.turn, version, commit.expected_version)
            s = commit.summary
            changed = await tx.execute(
                "UPDATE session_turns SET status = ?, user_summary = ?, assistant_summary = ?, outcome = ?, "
                f"attempts = ?, error = ?, flags = ? WHERE session_{key} = ? AND turn = ?",
                (
                    commit.status.value, s.user_summary, s.assistant_summary, commit.outcome, commit.attempts,
                    commit.error, sql.texts(commit.flags), pk, commit.turn,
                ),
            )  # fmt: skip
            if changed != 1:
                raise NotFound("turn", f"{session_id}:{commit.turn}")
            await tx.execute(f"DELETE FROM session_artifacts WHERE session_{key} = ? AND turn = ?", (pk, commit.turn))
            await tx.many(
                f"INSERT INTO session_artifacts (session_{key}, turn, idx, kind, role, language, label, content, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (pk, commit.turn, i, a.kind, a.role, a.language, a.label, a.content, stamp)
                    for i, a in enumerate(commit.artifacts)
                ],
            )
            await tx.many(
                f"INSERT INTO session_snapshots (session_{key}, turn, reason, facts, at) VALUES (?, ?, ?, ?, ?)",
                [(pk, x.turn, x.reason, sql.json_text(facts_to_json(x.facts)), stamp) for x in commit.snapshots],
            )
            consolidated = max(last_consolidated, commit.turn) if commit.consolidated else last_consolidated
            hidden = [i.text for i in await session_hidden(tx, user, session_id) if i.kind is HiddenKind.FACT]
            facts = keep_hidden_facts(commit.base_truth, facts_from_json(row[4]), hidden)
            await tx.execute(
                "UPDATE sessions SET base_truth = ?, version = version + 1, last_consolidated_turn = ? "
                f"WHERE {key} = ?",
                (sql.json_text(facts_to_json(facts)), consolidated, pk),
            )

        await sql.write(body)

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
