"""The PostgreSQL store's ``UserData`` role: export one user's rows, or erase them in one transaction.

The erasure's first statements take the user's erasure lock exclusively and give the user a new epoch
(:mod:`memstack.store.postgres._fence`): it waits for the user's fenced writes in flight, so its deletes see (and
remove) what they wrote, and every fenced write after its commit is refused.

What PostgreSQL keeps after the commit: the deleted rows stay in their pages as dead tuples (and their index entries)
until (auto)vacuum reclaims the space, and even then the bytes may stay in free space until it is reused; the
write-ahead log keeps them until its segments are recycled, and so do replicas, WAL archives and backups. memstack
does not run ``VACUUM`` after an erasure: it cannot run inside a transaction, it scans every index of each table in
full (on a store in use that costs far more than the erasure), and it would not clear the log or the copies
anyway. Where the law asks for the bytes to go, rely on autovacuum and the retention of WAL archives and backups.

Every statement names the tenant and the user (sharding by user, docs/scaling.md; ``tests/store/test_shard_keys.py``).
A very large user's own HNSW index (:mod:`memstack.store.postgres._ann`) is dropped in the same transaction
(``DROP INDEX`` is transactional; it locks ``memories`` until the commit, which comes right after), and this
process forgets it; another process's cache of it lapses harmlessly (a search of a missing index falls back to the
exact statement once its lookup expires, and an erased user has no rows to find either way).
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any

from psycopg import sql

from memstack.store._users import ExportSql, UserListSql, export_user, list_users
from memstack.store.postgres._ann import AnnIndexes, index_name
from memstack.store.postgres._db import Database
from memstack.store.postgres._fence import erasure_epoch, record_erasure
from memstack.types import ErasureReport, UserRecord, UserRef, UserSummary, check_id

__all__ = ["PgUserData"]

_MINE = "tenant = %(tenant)s AND user_id = %(user)s"
_SESSIONS = f"SELECT seq FROM sessions WHERE {_MINE}"

_SQL = ExportSql(
    memories=(
        "SELECT seq, id, agent_id, content, category, source, confidence, is_active, deleted_by, created_at, "
        "updated_at, observed_at, expires_at, merged_into, source_turn_ids, metadata "
        "FROM memories WHERE tenant = %s AND user_id = %s AND seq > %s ORDER BY seq LIMIT %s"
    ),
    history=(
        "SELECT memory_id, action, before, after, at, actor, note FROM memory_history "
        "WHERE tenant = %s AND user_id = %s AND memory_id = ANY(%s) ORDER BY id"
    ),
    hides=(
        "SELECT memory_id, kind, session_id, turn, text FROM hidden_items "
        "WHERE tenant = %s AND user_id = %s AND memory_id = ANY(%s) ORDER BY seq"
    ),
    orphans=(
        "SELECT DISTINCT h.memory_id FROM memory_history h WHERE h.tenant = %s AND h.user_id = %s "
        "AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = h.memory_id AND m.tenant = h.tenant "
        "AND m.user_id = h.user_id) ORDER BY h.memory_id"
    ),
    sessions=(
        "SELECT seq, id, agent, turn_count, version, base_truth, last_consolidated_turn, line, line_turn, "
        "created_at, updated_at, ended_at FROM sessions WHERE tenant = %s AND user_id = %s AND seq > %s "
        "ORDER BY seq LIMIT %s"
    ),
    turns=(
        "SELECT turn, at, route, status, user_text, assistant_text, user_summary, assistant_summary, outcome, "
        "flags, attempts, error, user_keep, assistant_keep FROM session_turns "
        "WHERE tenant = %s AND user_id = %s AND session_seq = %s ORDER BY turn"
    ),
    messages=(
        "SELECT v.seq, t.turn, v.side, v.speaker, CASE v.side WHEN 0 THEN t.user_text ELSE t.assistant_text END "
        "FROM archive_vectors v JOIN session_turns t ON t.seq = v.turn_seq "
        "WHERE v.tenant = %s AND v.user_id = %s AND t.session_seq = %s ORDER BY t.turn, v.side"
    ),
    artifacts=(
        "SELECT a.turn, a.idx, a.kind, a.role, a.language, a.label, a.content, a.created_at "
        "FROM session_artifacts a JOIN sessions s ON s.seq = a.session_seq "
        "WHERE s.tenant = %s AND s.user_id = %s AND a.session_seq = %s ORDER BY a.turn, a.idx"
    ),
    snapshots=(
        "SELECT n.turn, n.reason, n.facts, n.at FROM session_snapshots n JOIN sessions s ON s.seq = n.session_seq "
        "WHERE s.tenant = %s AND s.user_id = %s AND n.session_seq = %s ORDER BY n.seq"
    ),
    contexts=(
        "SELECT seq, context_id, session_id, created_at, manifest FROM context_manifests "
        "WHERE tenant = %s AND user_id = %s AND seq > %s ORDER BY seq LIMIT %s"
    ),
    jobs=(
        "SELECT id, id, kind, status, attempts, created_at, updated_at, payload, result, error FROM jobs "
        "WHERE tenant = %s AND user_id = %s AND id > %s ORDER BY id LIMIT %s"
    ),
    dropped="SELECT count, first_at, last_at FROM capture_drops WHERE tenant = %s AND user_id = %s",
    ids=list,
)

#: (table, statement) in the order an erasure runs them (children before parents); every one names the user.
ERASE: tuple[tuple[str, str], ...] = (
    (
        "reembed_vectors",
        "DELETE FROM reembed_vectors WHERE (tbl = 'memories' AND row_id IN "
        f"(SELECT seq FROM memories WHERE {_MINE})) OR (tbl = 'archive_vectors' AND row_id IN "
        f"(SELECT seq FROM archive_vectors WHERE {_MINE}))",
    ),
    ("archive_vectors", f"DELETE FROM archive_vectors WHERE {_MINE}"),
    ("archive_stats", f"DELETE FROM archive_stats WHERE {_MINE}"),
    ("session_snapshots", f"DELETE FROM session_snapshots WHERE session_seq IN ({_SESSIONS})"),
    ("session_artifacts", f"DELETE FROM session_artifacts WHERE session_seq IN ({_SESSIONS})"),
    ("session_turns", f"DELETE FROM session_turns WHERE {_MINE}"),
    ("sessions", f"DELETE FROM sessions WHERE {_MINE}"),
    ("session_leases", f"DELETE FROM session_leases WHERE {_MINE}"),
    ("chat_threads", f"DELETE FROM chat_threads WHERE {_MINE}"),
    ("hidden_items", f"DELETE FROM hidden_items WHERE {_MINE}"),
    ("memory_history", f"DELETE FROM memory_history WHERE {_MINE}"),
    ("memory_ann_indexes", f"DELETE FROM memory_ann_indexes WHERE {_MINE}"),
    ("memories", f"DELETE FROM memories WHERE {_MINE}"),
    ("context_manifests", f"DELETE FROM context_manifests WHERE {_MINE}"),
    ("jobs", f"DELETE FROM jobs WHERE {_MINE}"),
    ("idempotency_keys", f"DELETE FROM idempotency_keys WHERE {_MINE}"),
    ("capture_drops", f"DELETE FROM capture_drops WHERE {_MINE}"),
)

_INDEX = "SELECT count(*) FROM pg_class WHERE relname = %(name)s AND relkind = 'i'"


def _when(value: datetime | None) -> datetime | None:
    return value


_LIST = UserListSql(
    ids=(
        # Byte order ("C"), the cursor's and SQLite's, whatever the database's collation.
        'SELECT user_id FROM (SELECT DISTINCT user_id FROM memories WHERE tenant = %s AND user_id COLLATE "C" > %s '
        'UNION SELECT DISTINCT user_id FROM sessions WHERE tenant = %s AND user_id COLLATE "C" > %s) AS u '
        'ORDER BY user_id COLLATE "C" LIMIT %s'
    ),
    memories=(
        "SELECT user_id, count(*) FILTER (WHERE is_active), max(updated_at) FROM memories WHERE tenant = %s "
        "AND user_id = ANY(%s) GROUP BY user_id"
    ),
    sessions=(
        "SELECT user_id, count(*), max(updated_at) FROM sessions WHERE tenant = %s AND user_id = ANY(%s) "
        "GROUP BY user_id"
    ),
    page=list,
    when=_when,
)


class PgUserData:
    """One user's rows in PostgreSQL; see :class:`~memstack.store.base.UserData`."""

    def __init__(self, db: Database, ann: AnnIndexes) -> None:
        self._db = db
        self._ann = ann

    async def _rows(self, query: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        async with self._db.connection() as conn:
            cur = await conn.execute(query.encode(), tuple(params))
            return await cur.fetchall()

    async def export(self, user: UserRef) -> AsyncIterator[UserRecord]:
        check_id(user.user_id, "user_id")
        async for item in export_user(self._rows, _SQL, user):
            yield item

    async def list(self, tenant: str, *, after: str | None = None, limit: int = 100) -> builtins.list[UserSummary]:
        return await list_users(self._rows, _LIST, tenant, after=after, limit=limit)

    async def epoch(self, user: UserRef) -> int:
        check_id(user.user_id, "user_id")
        async with self._db.connection() as conn:
            return await erasure_epoch(conn, user)

    async def erase(self, user: UserRef) -> ErasureReport:
        check_id(user.user_id, "user_id")
        await self._ann.forget(user)  # a build of their index in flight would hold the lock DROP INDEX needs
        params = {"tenant": user.tenant, "user": user.user_id}
        name = index_name(user)
        removed: dict[str, int] = {}
        async with self._db.connection() as conn, conn.transaction():
            await record_erasure(conn, user)  # first: waits for the user's fenced writes in flight
            row = await (await conn.execute(_INDEX.encode(), {"name": name})).fetchone()
            dropped = int(row[0]) if row else 0
            if dropped:
                await conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))
            for table, statement in ERASE:
                cur = await conn.execute(statement.encode(), params)
                removed[table] = max(cur.rowcount, 0)
        await self._ann.forget(user)
        return ErasureReport(user.tenant, user.user_id, removed, indexes_dropped=dropped)
