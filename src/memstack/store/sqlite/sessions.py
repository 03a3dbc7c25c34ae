"""The SQLite store's session roles: ``SessionStore`` (state, turns, the lock) and ``SessionArchive`` (reading
back: :class:`memstack.store._archive.SessionArchive`, the tables described there, and full-text search here).

Migration ``007_sessions`` (the tables: :data:`memstack.store._tables.SESSIONS`); ``session_turns_fts`` indexes the
exchanges' stems (FTS5, like memories: one owner token per user narrows a search to that user's postings;
:mod:`memstack.store._fulltext`). The raw window is not stored twice: it is the tail of the archive, read with each
state (see ``_state``).

The per-session lock is a lease (:mod:`memstack.store.leases`, table ``session_leases`` in
:mod:`memstack.store.sqlite.leases`), so processes sharing the file keep a session's turns in order; ``record`` and
``commit`` (:class:`memstack.store._sessions.SessionsBase`'s) given the turn's lease check it inside their write
transaction (fencing). Independently, ``record`` refuses a turn number that is taken and ``commit`` one built on an
older version (``SessionConflict``).
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from datetime import datetime
from typing import Any

from memstack.errors import InputError
from memstack.store._archive import SessionArchive
from memstack.store._fulltext import fts5_match, rank, searched_terms
from memstack.store._hidden import session_hidden, visible_state
from memstack.store._session_rows import (
    FLAGGED,
    TURN_COLUMNS,
    check_session_id,
    log_entry,
    state_from_row,
    turn_from_row,
)
from memstack.store._sessions import SessionsBase
from memstack.store._sql import Row, Tx
from memstack.store.leases import DEFAULT_SESSION_LEASE_S, SessionLeases
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._db import transaction
from memstack.store.sqlite._rows import from_ts, fts_owner
from memstack.store.sqlite._sql import SQLiteSql
from memstack.store.sqlite.hidden import HIDDEN_TURN
from memstack.store.sqlite.leases import SQLiteLeaseTable
from memstack.types import ArchivedTurn, ArchiveHit, SessionState, UserRef

__all__ = ["SQLiteSessionArchive", "SQLiteSessions"]


def _turn(row: tuple[Any, ...]) -> ArchivedTurn:
    return turn_from_row(row, when=datetime.fromisoformat, flags=json.loads)


class SQLiteSessions(SessionsBase):
    """Session state and the life of a turn; every statement on the database thread, each write one transaction."""

    def __init__(self, core: Core, *, lease_s: float = DEFAULT_SESSION_LEASE_S) -> None:
        super().__init__(SQLiteSql(core), SessionLeases(SQLiteLeaseTable(core), ttl_s=lease_s))

    async def _state(self, tx: Tx, user: UserRef, session_id: str, row: Row, window_turns: int) -> SessionState:
        pk = row[0]
        where = "FROM session_turns t JOIN sessions s ON s.pk = t.session_pk WHERE t.session_pk = ?"
        recent = [
            _turn(r)
            for r in await tx.all(f"SELECT {TURN_COLUMNS} {where} ORDER BY t.turn DESC LIMIT ?", (pk, window_turns))
        ]
        log = [
            log_entry(turn, us, asum, status)
            for turn, us, asum, status in await tx.all(
                "SELECT turn, user_summary, assistant_summary, status FROM session_turns "
                "WHERE session_pk = ? AND status != 'pending' ORDER BY turn",
                (pk,),
            )
        ]
        flagged = [
            int(r[0])
            for r in await tx.all(
                "SELECT turn FROM session_turns WHERE session_pk = ? AND status IN (?, ?) ORDER BY turn", (pk, *FLAGGED)
            )
        ]
        state = state_from_row(user, session_id, row, log=log, recent=recent, flagged=flagged, when=from_ts)
        return visible_state(state, await session_hidden(tx, user, session_id))

    def _turn_columns(self, user: UserRef) -> dict[str, Any]:
        return {"fts_owner": fts_owner(user)}


class SQLiteSessionArchive(SessionArchive):
    """Reads sessions back (:class:`~memstack.store._archive.SessionArchive`), and searches them with FTS5."""

    def __init__(self, core: Core) -> None:
        super().__init__(SQLiteSql(core))
        self._core = core

    async def search(
        self, user: UserRef, query: str, k: int, *, session_id: str | None = None
    ) -> builtins.list[ArchiveHit]:
        """Exchanges holding any term of ``query``, ranked by BM25 over the user's archive (both messages of an
        exchange are one document; :mod:`memstack.store._fulltext`)."""
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        terms = searched_terms(query)
        if terms is None:
            return []
        sql = (
            "SELECT t.pk, t.terms FROM session_turns_fts JOIN session_turns t ON t.pk = session_turns_fts.rowid "
            f"WHERE session_turns_fts MATCH ? AND t.tenant = ? AND t.user_id = ? AND NOT {HIDDEN_TURN} "
        )
        args: builtins.list[Any] = [fts5_match(fts_owner(user), terms, any_word=True), user.tenant, user.user_id]
        if session_id is not None:
            sql += "AND t.session_pk = (SELECT pk FROM sessions WHERE tenant = ? AND user_id = ? AND id = ?) "
            args += [user.tenant, user.user_id, check_session_id(session_id)]
        sql += "ORDER BY t.pk"

        def run(conn: sqlite3.Connection) -> builtins.list[ArchiveHit]:
            with transaction(conn, write=False):
                matches = conn.execute(sql, args).fetchall()
                if not matches:
                    return []
                n_docs, total = conn.execute(
                    "SELECT COUNT(*), TOTAL(n_terms) FROM session_turns WHERE tenant = ? AND user_id = ?",
                    (user.tenant, user.user_id),
                ).fetchone()
                best = rank(matches, terms, int(n_docs), int(total), k)
                rows = conn.execute(
                    "SELECT t.pk, s.id, t.turn, t.user_text, t.assistant_text, t.at FROM session_turns t "
                    f"JOIN sessions s ON s.pk = t.session_pk WHERE t.pk IN ({', '.join('?' * len(best))})",
                    [pk for pk, _ in best],
                )
                found = {int(r[0]): r[1:] for r in rows}
            hits = []
            for pk, score in best:
                sid, turn, u, a, at = found[pk]
                hits.append(ArchiveHit(f"{sid}:{turn}", sid, int(turn), u, a, datetime.fromisoformat(at), score))
            return hits

        return await self._core.run(run)
