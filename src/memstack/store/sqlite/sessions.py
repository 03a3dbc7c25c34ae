"""The SQLite store's session roles: ``SessionStore`` (state, turns, the lock) and ``SessionArchive`` (reading
back: :class:`memstack.store._archive.SessionArchive`, the tables described there, and full-text search here).

Migration ``007_sessions`` (the tables: :data:`memstack.store._tables.SESSIONS`); ``session_turns_fts`` indexes the
exchanges' stems (FTS5, like memories: one owner token per user narrows a search to that user's postings;
:mod:`memstack.store._fulltext`). The raw window is not stored twice: it is the tail of the archive, read with each
state (see ``_state``).

The per-session lock is a lease (:mod:`memstack.store.leases`, table ``session_leases`` in
:mod:`memstack.store.sqlite.leases`), so processes sharing the file keep a session's turns in order; ``record`` and
``commit`` given the turn's lease check it inside their write transaction (fencing). Independently, ``record``
refuses a turn number that is taken and ``commit`` one built on an older version (``SessionConflict``).
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from datetime import datetime
from typing import Any

from memstack.errors import InputError, NotFound
from memstack.store._archive import SessionArchive
from memstack.store._fulltext import exchange_terms, fts5_match, rank, searched_terms
from memstack.store._hidden import keep_hidden_facts, session_hidden, visible_state
from memstack.store._session_rows import (
    FLAGGED,
    TURN_COLUMNS,
    check_session_id,
    check_turn,
    facts_from_json,
    facts_to_json,
    log_entry,
    state_from_row,
    turn_from_row,
    turn_taken,
    version_moved,
)
from memstack.store._sessions import SessionsBase, session_row
from memstack.store._sql import Row, Tx, drive
from memstack.store.leases import DEFAULT_SESSION_LEASE_S, Lease, SessionLeases, lease_lost
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._db import transaction
from memstack.store.sqlite._rows import from_ts, fts_owner, to_ts
from memstack.store.sqlite._sql import SQLiteSql, tx
from memstack.store.sqlite.hidden import HIDDEN_TURN
from memstack.store.sqlite.leases import SQLiteLeaseTable, fenced
from memstack.types import (
    ArchivedTurn,
    ArchiveHit,
    HiddenKind,
    SessionState,
    TurnCommit,
    TurnStatus,
    UserRef,
    utcnow,
)

__all__ = ["SQLiteSessionArchive", "SQLiteSessions"]


_SESSION = session_row("pk")


def _turn(row: tuple[Any, ...]) -> ArchivedTurn:
    return turn_from_row(row, when=datetime.fromisoformat, flags=json.loads)


class SQLiteSessions(SessionsBase):
    """Session state and the life of a turn; every statement on the database thread, each write one transaction."""

    def __init__(self, core: Core, *, lease_s: float = DEFAULT_SESSION_LEASE_S) -> None:
        super().__init__(SQLiteSql(core), SessionLeases(SQLiteLeaseTable(core), ttl_s=lease_s))
        self._core = core

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

    async def record(self, user: UserRef, turn: ArchivedTurn, *, lease: Lease | None = None) -> None:
        check_turn(turn)
        terms = exchange_terms(turn.user, turn.assistant)

        def body(conn: sqlite3.Connection) -> None:
            row = conn.execute(_SESSION, (user.tenant, user.user_id, turn.session_id)).fetchone()
            if row is None:
                raise NotFound("session", turn.session_id)
            if not fenced(conn, (user.tenant, user.user_id, turn.session_id), lease):
                raise lease_lost(turn.session_id, turn.turn, "recorded")
            pk, turn_count = row[0], int(row[2])
            if turn.turn != turn_count + 1:
                raise turn_taken(turn.session_id, turn_count, turn.turn)
            conn.execute(
                "INSERT INTO session_turns (session_pk, tenant, user_id, turn, user_text, assistant_text, at, route, "
                "user_keep, assistant_keep, status, fts_owner, terms, n_terms) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    pk, user.tenant, user.user_id, turn.turn, turn.user, turn.assistant, to_ts(turn.at), turn.route,
                    turn.keep_extra[0], turn.keep_extra[1], TurnStatus.PENDING.value, fts_owner(user),
                    " ".join(terms), len(terms),
                ),
            )  # fmt: skip
            conn.execute(
                "UPDATE sessions SET turn_count = ?, updated_at = MAX(updated_at, ?) WHERE pk = ?",
                (turn.turn, to_ts(turn.at), pk),
            )

        await self._core.run(lambda conn: self._core.write(conn, body))

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
        stamp = to_ts(now or utcnow())

        def body(conn: sqlite3.Connection) -> None:
            row = conn.execute(_SESSION, (user.tenant, user.user_id, session_id)).fetchone()
            if row is None:
                raise NotFound("session", session_id)
            if not fenced(conn, (user.tenant, user.user_id, session_id), lease):
                raise lease_lost(session_id, commit.turn, "committed")
            pk, version, last_consolidated = row[0], int(row[3]), int(row[5])
            if version != commit.expected_version:
                raise version_moved(session_id, commit.turn, version, commit.expected_version)
            s = commit.summary
            cur = conn.execute(
                "UPDATE session_turns SET status = ?, user_summary = ?, assistant_summary = ?, outcome = ?, "
                "attempts = ?, error = ?, flags = ? WHERE session_pk = ? AND turn = ?",
                (
                    commit.status.value, s.user_summary, s.assistant_summary, commit.outcome, commit.attempts,
                    commit.error, json.dumps(list(commit.flags)), pk, commit.turn,
                ),
            )  # fmt: skip
            if cur.rowcount != 1:
                raise NotFound("turn", f"{session_id}:{commit.turn}")
            conn.execute("DELETE FROM session_artifacts WHERE session_pk = ? AND turn = ?", (pk, commit.turn))
            conn.executemany(
                "INSERT INTO session_artifacts (session_pk, turn, idx, kind, role, language, label, content, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (pk, commit.turn, i, a.kind, a.role, a.language, a.label, a.content, stamp)
                    for i, a in enumerate(commit.artifacts)
                ],
            )
            conn.executemany(
                "INSERT INTO session_snapshots (session_pk, turn, reason, facts, at) VALUES (?, ?, ?, ?, ?)",
                [(pk, snap.turn, snap.reason, facts_to_json(snap.facts), stamp) for snap in commit.snapshots],
            )
            consolidated = max(last_consolidated, commit.turn) if commit.consolidated else last_consolidated
            items = drive(session_hidden(tx(conn), user, session_id))
            hidden = [i.text for i in items if i.kind is HiddenKind.FACT]
            facts = keep_hidden_facts(commit.base_truth, facts_from_json(row[4]), hidden)
            conn.execute(
                "UPDATE sessions SET base_truth = ?, version = version + 1, last_consolidated_turn = ? WHERE pk = ?",
                (facts_to_json(facts), consolidated, pk),
            )

        await self._core.run(lambda conn: self._core.write(conn, body))


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
