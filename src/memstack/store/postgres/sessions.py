"""The PostgreSQL store's session roles: ``SessionStore`` (state, turns, the lock) and ``SessionArchive`` (reading
back: :class:`memstack.store._archive.SessionArchive`, the tables described there, and full-text search here).

Migration ``0004_sessions`` (:data:`memstack.store._tables.SESSIONS`): base truth as ``jsonb``; the stems of both
messages, ``terms``, behind a GIN index.

The per-session lock is a lease (:mod:`memstack.store.leases`, table ``session_leases`` in
:mod:`memstack.store.postgres.leases`): no connection is held while a turn runs, so a small pool carries thousands
of concurrent turns, several processes share the database, and a transaction-pooling pooler is fine. ``record`` and
``commit`` given the turn's lease check it in the same statement or transaction as their writes (fencing).
"""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from memstack.errors import NotFound
from memstack.store._archive import SessionArchive
from memstack.store._checks import check_k, utc
from memstack.store._fulltext import BM25_PARAMS, exchange_terms, pg_bm25, searched_terms
from memstack.store._hidden import session_hidden, visible_state
from memstack.store._session_rows import (
    FLAGGED,
    check_session_id,
    check_turn,
    facts_to_data,
    log_entry,
    state_from_row,
    turn_taken,
    version_moved,
)
from memstack.store._sessions import SessionsBase, session_row
from memstack.store._sql import Row, Tx
from memstack.store.leases import DEFAULT_SESSION_LEASE_S, Lease, SessionLeases, lease_lost
from memstack.store.postgres._db import Database
from memstack.store.postgres._fence import enter_fence
from memstack.store.postgres._sql import PgSql, tx
from memstack.store.postgres.leases import FENCE, PgLeaseTable
from memstack.types import (
    ArchivedTurn,
    ArchiveHit,
    SessionState,
    TurnCommit,
    TurnStatus,
    TurnSummary,
    UserRef,
    utcnow,
)

__all__ = ["PgSessionArchive", "PgSessions"]


_SESSION = session_row("seq")
#: Record a turn as the next one of its session: the session row is locked, the turn inserted and counted only if
#: it follows on; returns the turn count found and whether the turn was recorded.
_RECORD = """
WITH held AS (
    SELECT 1 FROM session_leases WHERE tenant = %(tenant)s AND user_id = %(user)s AND session_id = %(sid)s
    AND owner = %(owner)s AND token = %(token)s FOR SHARE
), s AS (
    SELECT seq, turn_count FROM sessions WHERE tenant = %(tenant)s AND user_id = %(user)s AND id = %(sid)s FOR UPDATE
), ins AS (
    INSERT INTO session_turns (session_seq, tenant, user_id, turn, user_text, assistant_text, at, route, user_keep,
                               assistant_keep, status, terms, n_terms)
    SELECT seq, %(tenant)s, %(user)s, %(turn)s, %(u)s, %(a)s, %(at)s, %(route)s, %(uk)s, %(ak)s, %(status)s,
           %(terms)s::text[], %(n_terms)s
    FROM s WHERE turn_count = %(turn)s - 1 AND (%(owner)s::text IS NULL OR EXISTS (SELECT 1 FROM held))
    RETURNING session_seq
), counted AS (
    UPDATE sessions SET turn_count = %(turn)s, updated_at = GREATEST(updated_at, %(at)s)
    WHERE seq IN (SELECT session_seq FROM ins) RETURNING seq
)
SELECT (SELECT turn_count FROM s), (SELECT count(*) FROM counted), (SELECT count(*) FROM held)
"""
_SEQ = "SELECT seq FROM sessions WHERE tenant = %(tenant)s AND user_id = %(user)s AND id = %(sid)s"
_USER = "d.tenant = %(tenant)s AND d.user_id = %(user)s"
#: The new base truth, and after it the stored facts a forgotten memory hides (the turn never saw them; a restore
#: must find them): :func:`memstack.store._hidden.keep_hidden_facts` in SQL.
_KEEP_HIDDEN = """%(bt)s || coalesce((
    SELECT jsonb_agg(f.value ORDER BY f.n) FROM jsonb_array_elements(sessions.base_truth) WITH ORDINALITY AS f(value, n)
    WHERE EXISTS (SELECT 1 FROM hidden_items h WHERE h.tenant = %(tenant)s AND h.user_id = %(user)s
                  AND h.session_id = %(sid)s AND h.kind = 'fact' AND h.text = f.value->>'text')
    AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(%(bt)s::jsonb) AS b(value)
                    WHERE b.value->>'text' = f.value->>'text')
), '[]'::jsonb)"""
_COMMIT_SESSION = (
    f"UPDATE sessions SET base_truth = {_KEEP_HIDDEN}, version = version + 1, last_consolidated_turn = "
    "CASE WHEN %(consolidated)s THEN GREATEST(last_consolidated_turn, %(turn)s) ELSE last_consolidated_turn END "
    "WHERE tenant = %(tenant)s AND user_id = %(user)s AND id = %(sid)s AND version = %(expected)s RETURNING seq"
)
_COMMIT_TURN = (
    "UPDATE session_turns SET status = %(status)s, user_summary = %(us)s, assistant_summary = %(as)s, "
    f"outcome = %(outcome)s, attempts = %(attempts)s, error = %(error)s, flags = %(flags)s "
    f"WHERE session_seq = ({_SEQ}) AND turn = %(turn)s"
)
_INSERT_ARTIFACT = (
    "INSERT INTO session_artifacts (session_seq, turn, idx, kind, role, language, label, content, created_at) "
    f"VALUES (({_SEQ}), %(turn)s, %(idx)s, %(kind)s, %(role)s, %(lang)s, %(label)s, %(content)s, %(stamp)s)"
)
_INSERT_SNAPSHOT = (
    "INSERT INTO session_snapshots (session_seq, turn, reason, facts, at) "
    f"VALUES (({_SEQ}), %(at_turn)s, %(reason)s, %(facts)s, %(stamp)s)"
)
#: True for a row of ``session_turns d`` that a forgotten memory hides.
_HIDDEN_TURN = (
    " AND NOT EXISTS (SELECT 1 FROM hidden_items h JOIN sessions hs ON hs.tenant = h.tenant AND hs.user_id = h.user_id "
    "AND hs.id = h.session_id WHERE h.tenant = %(tenant)s AND h.user_id = %(user)s AND h.kind = 'turn' "
    "AND hs.seq = d.session_seq AND h.turn = d.turn)"
)
#: Full-text search of the archive (all sessions, one session): BM25 over the user's exchanges, the best ``k``
#: (hidden exchanges are never matched).
_SEARCH = tuple(
    f"SELECT s.id, t.turn, t.user_text, t.assistant_text, t.at, r.score "
    f"FROM ({pg_bm25('session_turns', 'seq', _USER, m + _HIDDEN_TURN)}) AS r JOIN session_turns AS t "
    "ON t.seq = r.key JOIN sessions AS s ON s.seq = t.session_seq "
    "ORDER BY r.score DESC, t.seq DESC LIMIT %(k)s"
    for m in ("", f" AND d.session_seq = ({_SEQ})")
)


def _count(row: tuple[Any, ...] | None) -> int:
    return int(row[0]) if row is not None else 0


def _same(value: Any) -> Any:
    return value


class PgSessions(SessionsBase):
    """Session state and the life of a turn; each write is one transaction. ``lease_s``: how long a session stays
    held without renewal (a crashed process on another machine blocks its sessions that long)."""

    def __init__(self, db: Database, *, lease_s: float = DEFAULT_SESSION_LEASE_S) -> None:
        super().__init__(PgSql(db), SessionLeases(PgLeaseTable(db), ttl_s=lease_s))
        self._db = db

    async def _state(self, tx: Tx, user: UserRef, session_id: str, row: Row, window_turns: int) -> SessionState:
        """The state in one more statement: every turn's log entry and status, raw texts of the last few only."""
        seq, turn_count = row[0], row[2]
        cut = int(turn_count) - window_turns
        rows = await tx.all(
            "SELECT turn, status, user_summary, assistant_summary, at, user_keep, assistant_keep, "
            "CASE WHEN turn > ? THEN user_text END, CASE WHEN turn > ? THEN assistant_text END "
            "FROM session_turns WHERE tenant = ? AND user_id = ? AND session_seq = ? ORDER BY turn",
            (cut, cut, user.tenant, user.user_id, seq),
        )
        log: list[TurnSummary] = []
        flagged: list[int] = []
        recent: list[ArchivedTurn] = []
        for turn, status, us, asum, at, ukeep, akeep, user_text, assistant_text in rows:
            if status != TurnStatus.PENDING.value:
                log.append(log_entry(turn, us, asum, status))
            if status in FLAGGED:
                flagged.append(int(turn))
            if int(turn) > cut:
                recent.append(
                    ArchivedTurn(session_id, int(turn), user_text, assistant_text, at, keep_extra=(ukeep, akeep))
                )
        state = state_from_row(user, session_id, row, log=log, recent=recent, flagged=flagged, when=_same)
        return visible_state(state, await session_hidden(tx, user, session_id))

    async def record(self, user: UserRef, turn: ArchivedTurn, *, lease: Lease | None = None) -> None:
        check_turn(turn)
        params = {
            "tenant": user.tenant, "user": user.user_id, "sid": turn.session_id, "turn": turn.turn,
            "u": turn.user, "a": turn.assistant, "at": utc(turn.at), "route": turn.route,
            "uk": turn.keep_extra[0], "ak": turn.keep_extra[1], "status": TurnStatus.PENDING.value,
            "owner": lease.owner if lease else None, "token": lease.token if lease else 0,
        }  # fmt: skip
        terms = exchange_terms(turn.user, turn.assistant)
        params.update(terms=terms, n_terms=len(terms))
        async with self._db.writing(single=True) as conn:  # one statement: one round trip (and one WAL flush)
            row = await (await conn.execute(_RECORD, params)).fetchone()
        turn_count, recorded, held = row if row is not None else (None, 0, 0)
        if turn_count is None:
            raise NotFound("session", turn.session_id)
        if lease is not None and not held:
            raise lease_lost(turn.session_id, turn.turn, "recorded")
        if not recorded:
            raise turn_taken(turn.session_id, turn_count, turn.turn)

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
        s = commit.summary
        p = {
            "tenant": user.tenant, "user": user.user_id, "sid": session_id, "turn": commit.turn,
            "expected": commit.expected_version, "bt": Jsonb(facts_to_data(commit.base_truth)),
            "consolidated": commit.consolidated, "stamp": stamp, "status": commit.status.value,
            "us": s.user_summary, "as": s.assistant_summary, "outcome": commit.outcome, "attempts": commit.attempts,
            "error": commit.error, "flags": list(commit.flags),
            "owner": lease.owner if lease else None, "token": lease.token if lease else 0,
        }  # fmt: skip
        artifacts = [
            {**p, "idx": i, "kind": a.kind, "role": a.role, "lang": a.language, "label": a.label, "content": a.content}
            for i, a in enumerate(commit.artifacts)
        ]
        snapshots = [
            {**p, "at_turn": x.turn, "reason": x.reason, "facts": Jsonb(facts_to_data(x.facts))}
            for x in commit.snapshots
        ]
        # Pipelined: every statement goes out at once and the checks read their results at the end; a failed check
        # raises, and the transaction is rolled back whole.
        async with self._db.connection() as conn, conn.pipeline(), conn.transaction():
            # The record of the turn is durable already; if a crash loses this commit, the turn is pending again
            # and is summarized on restart. So it need not wait for its WAL flush (the next durable commit flushes it).
            await enter_fence(conn)  # first: the erasure fence, then the lease's (both held until the end)
            await conn.execute("SET LOCAL synchronous_commit = off")
            fence = await conn.execute(FENCE, p) if lease is not None else None
            session = await conn.execute(_COMMIT_SESSION, p)
            turn = await conn.execute(_COMMIT_TURN, p)
            await conn.execute(f"DELETE FROM session_artifacts WHERE session_seq = ({_SEQ}) AND turn = %(turn)s", p)
            async with conn.cursor() as c:
                if artifacts:
                    await c.executemany(_INSERT_ARTIFACT, artifacts)
                if snapshots:
                    await c.executemany(_INSERT_SNAPSHOT, snapshots)
            if fence is not None and not _count(await fence.fetchone()):
                raise lease_lost(session_id, commit.turn, "committed")
            if await session.fetchone() is None:
                found = await tx(conn).one(_SESSION, (user.tenant, user.user_id, session_id))
                if found is None:
                    raise NotFound("session", session_id)
                raise version_moved(session_id, commit.turn, found[3], commit.expected_version)
            if turn.rowcount != 1:
                raise NotFound("turn", f"{session_id}:{commit.turn}")


class PgSessionArchive(SessionArchive):
    """Reads sessions back (:class:`~memstack.store._archive.SessionArchive`), and searches them in one statement."""

    def __init__(self, db: Database) -> None:
        super().__init__(PgSql(db))
        self._db = db

    async def _rows(self, sql: str, params: Any) -> builtins.list[tuple[Any, ...]]:
        async with self._db.connection() as conn:
            cur = await conn.execute(sql.encode(), params)
            return await cur.fetchall()

    async def search(
        self, user: UserRef, query: str, k: int, *, session_id: str | None = None
    ) -> builtins.list[ArchiveHit]:
        """BM25 over the user's exchanges in one statement (:func:`~memstack.store._fulltext.pg_bm25`)."""
        k = check_k(k)
        terms = searched_terms(query)
        if terms is None:
            return []
        params: dict[str, Any] = {"tenant": user.tenant, "user": user.user_id, "terms": terms, "k": k, **BM25_PARAMS}
        if session_id is not None:
            params["sid"] = check_session_id(session_id)
        return [
            ArchiveHit(f"{sid}:{turn}", sid, int(turn), u, a, at, float(score))
            for sid, turn, u, a, at, score in await self._rows(_SEARCH[session_id is not None], params)
        ]
