"""The SQLite store's ``UserData`` role: export one user's rows, or erase them in one write transaction.

Erasure runs with ``PRAGMA secure_delete`` on, so the pages the rows leave are overwritten with zeros rather than
left in the file's free list; the full-text tables (FTS5) are kept in step by their delete triggers. The user's
entry in the vector cache is dropped after the commit (other processes drop theirs on seeing the commit).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Sequence
from typing import Any

from memstack.store._users import ExportSql, export_user
from memstack.store.sqlite._core import Core, user_key
from memstack.types import ErasureReport, UserRecord, UserRef, check_id

__all__ = ["SQLiteUserData"]

_MINE = "tenant = ? AND user_id = ?"
_SESSIONS = f"SELECT pk FROM sessions WHERE {_MINE}"

_SQL = ExportSql(
    memories=(
        "SELECT pk, id, agent_id, content, category, source, confidence, is_active, deleted_by, created_at, "
        "updated_at, observed_at, expires_at, merged_into, source_turn_ids "
        f"FROM memories WHERE {_MINE} AND pk > ? ORDER BY pk LIMIT ?"
    ),
    history=(
        "SELECT memory_id, action, before, after, at, actor, note FROM memory_history "
        f"WHERE {_MINE} AND memory_id IN (SELECT value FROM json_each(?)) ORDER BY id"
    ),
    hides=(
        "SELECT memory_id, kind, session_id, turn, text FROM hidden_items "
        f"WHERE {_MINE} AND memory_id IN (SELECT value FROM json_each(?)) ORDER BY pk"
    ),
    orphans=(
        f"SELECT DISTINCT h.memory_id FROM memory_history h WHERE h.{_MINE.replace(' AND ', ' AND h.')} "
        "AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = h.memory_id AND m.tenant = h.tenant "
        "AND m.user_id = h.user_id) ORDER BY h.memory_id"
    ),
    sessions=(
        "SELECT pk, id, agent, turn_count, version, base_truth, last_consolidated_turn, line, line_turn, "
        f"created_at, updated_at, ended_at FROM sessions WHERE {_MINE} AND pk > ? ORDER BY pk LIMIT ?"
    ),
    turns=(
        "SELECT turn, at, route, status, user_text, assistant_text, user_summary, assistant_summary, outcome, "
        f"flags, attempts, error, user_keep, assistant_keep FROM session_turns WHERE {_MINE} AND session_pk = ? "
        "ORDER BY turn"
    ),
    messages=(
        "SELECT v.seq, t.turn, v.side, v.speaker, CASE v.side WHEN 0 THEN t.user_text ELSE t.assistant_text END "
        "FROM archive_vectors v JOIN session_turns t ON t.pk = v.turn_pk "
        "WHERE v.tenant = ? AND v.user_id = ? AND t.session_pk = ? ORDER BY t.turn, v.side"
    ),
    artifacts=(
        "SELECT turn, idx, kind, role, language, label, content, created_at FROM session_artifacts "
        f"WHERE session_pk IN ({_SESSIONS}) AND session_pk = ? ORDER BY turn, idx"
    ),
    snapshots=(
        f"SELECT turn, reason, facts, at FROM session_snapshots WHERE session_pk IN ({_SESSIONS}) "
        "AND session_pk = ? ORDER BY pk"
    ),
    contexts=(
        "SELECT rowid, context_id, session_id, created_at, manifest FROM context_manifests "
        f"WHERE {_MINE} AND rowid > ? ORDER BY rowid LIMIT ?"
    ),
    jobs=(
        "SELECT id, id, kind, status, attempts, created_at, updated_at, payload, result, error FROM jobs "
        f"WHERE {_MINE} AND id > ? ORDER BY id LIMIT ?"
    ),
    dropped=f"SELECT count, first_at, last_at FROM capture_drops WHERE {_MINE}",
    ids=lambda ids: json.dumps(ids),
)

#: (table, statement) in the order an erasure runs them (children before parents); every one names the user.
ERASE: tuple[tuple[str, str], ...] = (
    (
        "reembed_vectors",
        "DELETE FROM reembed_vectors WHERE (tbl = 'memories' AND row_id IN "
        f"(SELECT pk FROM memories WHERE {_MINE})) OR (tbl = 'archive_vectors' AND row_id IN "
        f"(SELECT seq FROM archive_vectors WHERE {_MINE}))",
    ),
    ("archive_vectors", f"DELETE FROM archive_vectors WHERE {_MINE}"),
    ("session_snapshots", f"DELETE FROM session_snapshots WHERE session_pk IN ({_SESSIONS})"),
    ("session_artifacts", f"DELETE FROM session_artifacts WHERE session_pk IN ({_SESSIONS})"),
    ("session_turns", f"DELETE FROM session_turns WHERE {_MINE}"),
    ("sessions", f"DELETE FROM sessions WHERE {_MINE}"),
    ("session_leases", f"DELETE FROM session_leases WHERE {_MINE}"),
    ("chat_threads", f"DELETE FROM chat_threads WHERE {_MINE}"),
    ("hidden_items", f"DELETE FROM hidden_items WHERE {_MINE}"),
    ("memory_history", f"DELETE FROM memory_history WHERE {_MINE}"),
    ("memories", f"DELETE FROM memories WHERE {_MINE}"),
    ("context_manifests", f"DELETE FROM context_manifests WHERE {_MINE}"),
    ("jobs", f"DELETE FROM jobs WHERE {_MINE}"),
    ("idempotency_keys", f"DELETE FROM idempotency_keys WHERE {_MINE}"),
    ("capture_drops", f"DELETE FROM capture_drops WHERE {_MINE}"),
)


class SQLiteUserData:
    """One user's rows in the store's SQLite file; see :class:`~memstack.store.base.UserData`."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def _rows(self, query: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return await self._core.run(lambda conn: conn.execute(query, tuple(params)).fetchall())

    async def export(self, user: UserRef) -> AsyncIterator[UserRecord]:
        check_id(user.user_id, "user_id")
        async for item in export_user(self._rows, _SQL, user):
            yield item

    async def erase(self, user: UserRef) -> ErasureReport:
        check_id(user.user_id, "user_id")
        who = user_key(user)

        def body(conn: sqlite3.Connection) -> dict[str, int]:
            removed: dict[str, int] = {}
            for table, statement in ERASE:
                params = who * statement.count(_MINE)
                removed[table] = conn.execute(statement, params).rowcount
            return removed

        def run(conn: sqlite3.Connection) -> dict[str, int]:
            conn.execute("PRAGMA secure_delete = ON")
            try:
                removed = self._core.write(conn, body)
            finally:
                conn.execute("PRAGMA secure_delete = OFF")
            self._core.vectors.discard(who)
            return removed

        removed = await self._core.run(run)
        return ErasureReport(user.tenant, user.user_id, removed)
