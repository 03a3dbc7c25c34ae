"""Reading sessions back (the ``SessionArchive`` role) on both backends: listings, archived exchanges, artifacts
and snapshots. Full-text ``search`` is each backend's own (SQLite ranks FTS5 matches in Python, PostgreSQL in one
statement: :mod:`memstack.store._fulltext`); a backend's archive is this class plus its ``search``.

Tables (each backend's migration ``sessions``): ``sessions`` (one row per ``(tenant, user_id, id)``: agent,
``turn_count``, ``version`` bumped by each commit, base truth as JSON, the last consolidated turn, the
cross-session line and the turn it was written after), ``session_turns`` (the archive, one row per exchange, never
deleted while the session exists: raw texts, route, how long each message stays in the raw window, status
pending → summarized / unsummarized / fallback, the turn-log entry, outcome, attempts, error, flags, and the
exchange's stems, ``terms``, for full-text search), ``session_artifacts`` (code blocks and drafts keyed by turn)
and ``session_snapshots`` (base truth over time). A line a forgotten memory hides reads as empty
(:mod:`memstack.store._hidden`).
"""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Any

from memstack.store._checks import utc
from memstack.store._session_rows import (
    TURN_COLUMNS,
    artifact_from_row,
    check_page,
    check_session_id,
    snapshot_from_row,
    summary_from_row,
    turn_from_row,
)
from memstack.store._sql import Row, Sql
from memstack.types import ArchivedTurn, Artifact, BaseTruthSnapshot, SessionSummary, UserRef

__all__ = ["HIDDEN_LINE", "SessionArchive", "summary_columns"]

#: True when the line of ``sessions s`` is hidden by a forgotten memory.
HIDDEN_LINE = (
    "EXISTS (SELECT 1 FROM hidden_items h WHERE h.tenant = s.tenant AND h.user_id = s.user_id "
    "AND h.session_id = s.id AND h.kind = 'line' AND h.text = s.line)"
)


def summary_columns(key: str) -> str:
    """The columns of ``sessions s`` that make a :class:`SessionSummary` (``summary_from_row``); ``key``: the
    backend's key column (:attr:`Sql.key <memstack.store._sql.Sql.key>`)."""
    return (
        f"s.id, s.user_id, s.tenant, s.agent, s.turn_count, CASE WHEN {HIDDEN_LINE} THEN '' ELSE s.line END, "
        f"s.line_turn, (SELECT count(*) FROM session_turns f WHERE f.session_{key} = s.{key} "
        "AND f.status IN ('pending', 'unsummarized')), s.created_at, s.updated_at, s.ended_at"
    )


class SessionArchive:
    """Reads sessions back: listings, archived exchanges, artifacts, snapshots."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql
        key = sql.key
        self._summary = summary_columns(key)
        self._turns = f"SELECT {TURN_COLUMNS} FROM session_turns t JOIN sessions s ON s.{key} = t.session_{key}"

    def turn(self, row: Row) -> ArchivedTurn:
        return turn_from_row(row, when=self._sql.when, flags=self._sql.unjson)

    def summary(self, row: Row) -> SessionSummary:
        return summary_from_row(row, when=self._sql.when)

    async def sessions(
        self, user: UserRef, *, limit: int = 50, offset: int = 0, with_line: bool = False, session_id: str | None = None
    ) -> builtins.list[SessionSummary]:
        check_page(limit, offset)
        named = [check_session_id(session_id)] if session_id is not None else []
        one = "AND s.id = ?" if named else ""
        lined = f"AND s.line <> '' AND NOT {HIDDEN_LINE}" if with_line else ""
        rows = await self._sql.all(
            f"SELECT {self._summary} FROM sessions s WHERE s.tenant = ? AND s.user_id = ? {one} {lined} "
            f"ORDER BY s.updated_at DESC, s.{self._sql.key} DESC LIMIT ? OFFSET ?",
            (user.tenant, user.user_id, *named, limit, offset),
        )
        return [self.summary(r) for r in rows]

    async def turns(
        self,
        user: UserRef,
        *,
        session_id: str | None = None,
        since: datetime | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> builtins.list[ArchivedTurn]:
        check_page(limit, offset)
        sql = [self._turns, "WHERE t.tenant = ? AND t.user_id = ?"]
        args: builtins.list[Any] = [user.tenant, user.user_id]
        if session_id is not None:
            sql.append("AND s.id = ?")
            args.append(check_session_id(session_id))
        if since is not None:
            sql.append("AND t.at >= ?")
            args.append(utc(since))
        key = self._sql.key
        sql.append(f"ORDER BY t.turn, t.{key}" if session_id is not None else f"ORDER BY t.at, t.{key}")
        sql.append("LIMIT ? OFFSET ?")
        args += [limit, offset]
        return [self.turn(r) for r in await self._sql.all(" ".join(sql), args)]

    async def artifacts(self, user: UserRef, session_id: str, *, turn: int | None = None) -> builtins.list[Artifact]:
        check_session_id(session_id)
        key = self._sql.key
        sql = (
            "SELECT a.turn, a.kind, a.content, a.role, a.language, a.label, a.idx, a.created_at "
            f"FROM session_artifacts a JOIN sessions s ON s.{key} = a.session_{key} "
            "WHERE s.tenant = ? AND s.user_id = ? AND s.id = ?"
        )
        args: builtins.list[Any] = [user.tenant, user.user_id, session_id]
        if turn is not None:
            sql += " AND a.turn = ?"
            args.append(turn)
        rows = await self._sql.all(sql + " ORDER BY a.turn, a.idx", args)
        return [artifact_from_row(r, session_id, when=self._sql.when) for r in rows]

    async def snapshots(self, user: UserRef, session_id: str, *, limit: int = 20) -> builtins.list[BaseTruthSnapshot]:
        check_session_id(session_id)
        check_page(limit)
        key = self._sql.key
        rows = await self._sql.all(
            f"SELECT turn, reason, facts, at FROM (SELECT p.{key}, p.turn, p.reason, p.facts, p.at "
            f"FROM session_snapshots p JOIN sessions s ON s.{key} = p.session_{key} "
            f"WHERE s.tenant = ? AND s.user_id = ? AND s.id = ? ORDER BY p.{key} DESC LIMIT ?) AS latest "
            f"ORDER BY {key}",
            (user.tenant, user.user_id, session_id, limit),
        )
        return [snapshot_from_row(r, session_id, when=self._sql.when) for r in rows]
