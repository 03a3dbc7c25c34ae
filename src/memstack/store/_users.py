"""What the backends share for :class:`~memstack.store.base.UserData`: the shape of every exported record, the
order a user's rows are read in, and the statements that read them (:class:`ExportSql`, :class:`UserListSql`, made
for a backend's :class:`~memstack.store._sql.Sql` by :func:`export_sql` and :func:`user_list_sql`), and the tables an
erasure empties (:func:`erase_plan`, run by :func:`erase_rows` inside the erasure's transaction). A backend's
``UserData`` is :class:`UserReads` (``export``, ``list``) and ``load`` (:class:`~memstack.store._users_load.UserRows`)
plus its own ``epoch`` and ``erase``: how an erasure fences the user's writes in flight and makes sure nothing is
left is each backend's, and so are the tables only it has (``own`` of :func:`erase_plan`).

The reading is paged (``PAGE`` memories, ``SESSION_PAGE`` sessions at a time): a user with a million memories is
exported in constant memory. Every statement names the tenant and the user (sharding by user, docs/scaling.md).
"""

from __future__ import annotations

import builtins
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memstack.errors import InputError
from memstack.store._sql import Row, Sql, Tx
from memstack.types import MESSAGE_ROLES, RecordKind, UserRecord, UserRef, UserSummary, check_id

__all__ = [
    "ARTIFACT",
    "CONTEXT",
    "DROPPED",
    "HIDES",
    "HISTORY",
    "JOB",
    "MEMORY",
    "MESSAGE",
    "PAGE",
    "SESSION",
    "SNAPSHOT",
    "TURN",
    "USERS_PAGE",
    "ExportSql",
    "UserListSql",
    "UserReads",
    "erase_plan",
    "erase_rows",
    "export_sql",
    "export_user",
    "list_users",
    "user_list_sql",
]

#: Memories (and context manifests, jobs) read per statement.
PAGE = 500
#: Sessions read per statement (each then reads its turn log, messages, artifacts and snapshots).
SESSION_PAGE = 50

# The columns each statement of :class:`ExportSql` returns, in order; they are the exported field names.
MEMORY = (
    "id",
    "agent_id",
    "content",
    "category",
    "source",
    "confidence",
    "is_active",
    "deleted_by",
    "created_at",
    "updated_at",
    "observed_at",
    "expires_at",
    "merged_into",
    "source_turn_ids",
    "metadata",
    "valid_from",
    "valid_to",
)
HISTORY = ("memory_id", "action", "before", "after", "at", "actor", "note")
HIDES = ("memory_id", "kind", "session_id", "turn", "text")
SESSION = (
    "id",
    "agent",
    "turn_count",
    "version",
    "facts",
    "last_consolidated_turn",
    "line",
    "line_turn",
    "created_at",
    "updated_at",
    "ended_at",
)
TURN = (
    "turn",
    "at",
    "route",
    "status",
    "user_text",
    "assistant_text",
    "user_summary",
    "assistant_summary",
    "outcome",
    "flags",
    "attempts",
    "error",
    "user_keep",
    "assistant_keep",
)
MESSAGE = ("turn", "side", "speaker", "text")
ARTIFACT = ("turn", "idx", "kind", "role", "language", "label", "content", "created_at")
SNAPSHOT = ("turn", "reason", "facts", "at")
CONTEXT = ("context_id", "session_id", "created_at", "manifest")
JOB = ("id", "kind", "key", "status", "attempts", "created_at", "updated_at", "payload", "result", "error")
DROPPED = ("count", "first_at", "last_at")

#: Columns a backend may hand over as JSON text (SQLite) rather than parsed (PostgreSQL's jsonb and arrays).
_JSON = frozenset({"source_turn_ids", "metadata", "before", "after", "facts", "flags", "manifest", "payload", "result"})

#: Runs one statement with its parameters and returns every row.
Rows = Callable[[str, Sequence[Any]], Awaitable[list[tuple[Any, ...]]]]


@dataclass(frozen=True, slots=True)
class ExportSql:
    """A backend's statements. Parameters, in order: ``memories``: tenant, user, after key, limit (rows: the key,
    then :data:`MEMORY`); ``history``: tenant, user, memory ids (:data:`HISTORY`, oldest first); ``orphans``:
    tenant, user (ids of memories permanently deleted whose history remains); ``hides``: tenant, user, memory ids
    (:data:`HIDES`, what each memory's forget hides, in the order hidden); ``sessions``: tenant, user, after
    key, limit (the key, then :data:`SESSION`); ``turns``, ``messages``, ``artifacts``, ``snapshots``: tenant, user,
    session key; ``contexts`` and ``jobs``: tenant, user, after key, limit (the key, then :data:`CONTEXT` or
    :data:`JOB`; a job's key is its id); ``dropped``: tenant, user (at most one row, :data:`DROPPED`: automatic
    captures a full tier kept out). ``ids`` turns a list of ids into the parameter ``history`` expects."""

    memories: str
    history: str
    hides: str
    orphans: str
    sessions: str
    turns: str
    messages: str
    artifacts: str
    snapshots: str
    contexts: str
    jobs: str
    dropped: str
    ids: Callable[[list[str]], Any]


def _plain(name: str, value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if name in _JSON and isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    if name == "is_active":
        return bool(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def record(columns: Sequence[str], row: Sequence[Any]) -> dict[str, Any]:
    """One row as the exported JSON object."""
    return {name: _plain(name, value) for name, value in zip(columns, row, strict=True)}


def _grouped(columns: Sequence[str], rows: list[tuple[Any, ...]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        item = record(columns, row)
        grouped.setdefault(str(item.pop("memory_id")), []).append(item)
    return grouped


async def export_user(rows: Rows, sql: ExportSql, user: UserRef) -> AsyncIterator[UserRecord]:
    """Every record of ``user``, section by section (memories, sessions, contexts, jobs, dropped captures), read a
    page at a time."""
    who = (user.tenant, user.user_id)
    after: Any = 0
    while page := await rows(sql.memories, (*who, after, PAGE)):
        after = page[-1][0]
        ids = sql.ids([str(r[1]) for r in page])
        history = _grouped(HISTORY, await rows(sql.history, (*who, ids)))
        hides = _grouped(HIDES, await rows(sql.hides, (*who, ids)))
        for row in page:
            memory = record(MEMORY, row[1:])
            extra = {"history": history.get(memory["id"], []), "hides": hides.get(memory["id"], [])}
            yield UserRecord("memory", {**memory, "stored": True, **extra})
    orphans = [str(r[0]) for r in await rows(sql.orphans, who)]
    for start in range(0, len(orphans), PAGE):
        ids = sql.ids(orphans[start : start + PAGE])
        history = _grouped(HISTORY, await rows(sql.history, (*who, ids)))
        hides = _grouped(HIDES, await rows(sql.hides, (*who, ids)))
        for memory_id, events in history.items():
            yield UserRecord(
                "memory", {"id": memory_id, "stored": False, "history": events, "hides": hides.get(memory_id, [])}
            )
    after = 0
    while page := await rows(sql.sessions, (*who, after, SESSION_PAGE)):
        after = page[-1][0]
        for row in page:
            key = row[0]
            session = record(SESSION, row[1:])
            session["turns"] = [record(TURN, r) for r in await rows(sql.turns, (*who, key))]
            messages = []
            for r in await rows(sql.messages, (*who, key)):
                message = record(MESSAGE, r)
                message["role"] = MESSAGE_ROLES[int(message.pop("side"))]
                messages.append(message)
            session["messages"] = messages
            session["artifacts"] = [record(ARTIFACT, r) for r in await rows(sql.artifacts, (*who, key))]
            session["snapshots"] = [record(SNAPSHOT, r) for r in await rows(sql.snapshots, (*who, key))]
            yield UserRecord("session", session)
    tail: tuple[tuple[RecordKind, str, tuple[str, ...]], ...] = (
        ("context", sql.contexts, CONTEXT),
        ("job", sql.jobs, JOB),
    )
    for kind, statement, columns in tail:
        after = "" if kind == "job" else 0  # jobs are paged by id
        while page := await rows(statement, (*who, after, PAGE)):
            after = page[-1][0]
            for row in page:
                yield UserRecord(kind, record(columns, row[1:]))
    for row in await rows(sql.dropped, who):
        yield UserRecord("dropped", record(DROPPED, row))


#: Most users one call of :func:`list_users` returns.
USERS_PAGE = 1000


@dataclass(frozen=True, slots=True)
class UserListSql:
    """A backend's statements for :func:`list_users`. ``ids``: tenant, after, tenant, after, limit: the next user
    ids of the tenant that hold a memory (active or not) or a session, in order, each once; ``memories`` and
    ``sessions``: tenant, the page's ids (through ``page``): rows ``(user_id, count, last change)`` with the active
    memories, or the sessions. ``when`` reads a stored time."""

    ids: str
    memories: str
    sessions: str
    page: Callable[[list[str]], Any]
    when: Callable[[Any], datetime | None]


async def list_users(
    rows: Rows, sql: UserListSql, tenant: str, *, after: str | None = None, limit: int = 100
) -> list[UserSummary]:
    """The tenant's users in user-id order, after ``after`` (a cursor: the last id of the previous page), at most
    ``limit``. Three statements whatever the page's size: the ids, then the counts of those users only.

    A user is anyone with a memory (forgotten ones count) or a session; one whose data was erased is gone from it.
    It is the one read that spans a tenant's users (docs/scaling.md: a sharded deployment asks every shard)."""
    check_id(tenant, "tenant")
    if after is not None:
        check_id(after, "after")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= USERS_PAGE:
        raise InputError(f"limit must be a whole number from 1 to {USERS_PAGE}, got {limit!r}")
    start = after if after is not None else ""
    ids = [str(r[0]) for r in await rows(sql.ids, (tenant, start, tenant, start, limit))]
    if not ids:
        return []
    page = sql.page(ids)
    memories = {str(r[0]): (int(r[1] or 0), sql.when(r[2])) for r in await rows(sql.memories, (tenant, page))}
    sessions = {str(r[0]): (int(r[1] or 0), sql.when(r[2])) for r in await rows(sql.sessions, (tenant, page))}
    out = []
    for user_id in ids:
        active, memory_at = memories.get(user_id, (0, None))
        count, session_at = sessions.get(user_id, (0, None))
        times = [t for t in (memory_at, session_at) if t is not None]
        out.append(UserSummary(user_id, active, count, max(times) if times else None))
    return out


def export_sql(sql: Sql) -> ExportSql:
    """The export's statements on ``sql``'s backend."""
    key, mine = sql.key, "tenant = ? AND user_id = ?"
    return ExportSql(
        memories=(
            f"SELECT {key}, id, agent_id, content, category, source, confidence, is_active, deleted_by, created_at, "
            "updated_at, observed_at, expires_at, merged_into, source_turn_ids, metadata, valid_from, valid_to "
            f"FROM memories WHERE {mine} AND {key} > ? ORDER BY {key} LIMIT ?"
        ),
        history=(
            "SELECT memory_id, action, before, after, at, actor, note FROM memory_history "
            f"WHERE {mine} AND {sql.among('memory_id')} ORDER BY id"
        ),
        hides=(
            "SELECT memory_id, kind, session_id, turn, text FROM hidden_items "
            f"WHERE {mine} AND {sql.among('memory_id')} ORDER BY {key}"
        ),
        orphans=(
            "SELECT DISTINCT h.memory_id FROM memory_history h WHERE h.tenant = ? AND h.user_id = ? "
            "AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = h.memory_id AND m.tenant = h.tenant "
            "AND m.user_id = h.user_id) ORDER BY h.memory_id"
        ),
        sessions=(
            f"SELECT {key}, id, agent, turn_count, version, base_truth, last_consolidated_turn, line, line_turn, "
            f"created_at, updated_at, ended_at FROM sessions WHERE {mine} AND {key} > ? ORDER BY {key} LIMIT ?"
        ),
        turns=(
            "SELECT turn, at, route, status, user_text, assistant_text, user_summary, assistant_summary, outcome, "
            f"flags, attempts, error, user_keep, assistant_keep FROM session_turns WHERE {mine} "
            f"AND session_{key} = ? ORDER BY turn"
        ),
        messages=(
            "SELECT t.turn, v.side, v.speaker, CASE v.side WHEN 0 THEN t.user_text ELSE t.assistant_text END "
            f"FROM archive_vectors v JOIN session_turns t ON t.{key} = v.turn_{key} "
            f"WHERE v.tenant = ? AND v.user_id = ? AND t.session_{key} = ? ORDER BY t.turn, v.side"
        ),
        artifacts=(
            "SELECT a.turn, a.idx, a.kind, a.role, a.language, a.label, a.content, a.created_at "
            f"FROM session_artifacts a JOIN sessions s ON s.{key} = a.session_{key} "
            f"WHERE s.tenant = ? AND s.user_id = ? AND a.session_{key} = ? ORDER BY a.turn, a.idx"
        ),
        snapshots=(
            f"SELECT n.turn, n.reason, n.facts, n.at FROM session_snapshots n JOIN sessions s ON s.{key} = "
            f"n.session_{key} WHERE s.tenant = ? AND s.user_id = ? AND n.session_{key} = ? ORDER BY n.{key}"
        ),
        contexts=(
            f"SELECT {sql.rowid}, context_id, session_id, created_at, manifest FROM context_manifests "
            f"WHERE {mine} AND {sql.rowid} > ? ORDER BY {sql.rowid} LIMIT ?"
        ),
        jobs=(
            "SELECT id, id, kind, key, status, attempts, created_at, updated_at, payload, result, error FROM jobs "
            f"WHERE {mine} AND id > ? ORDER BY id LIMIT ?"
        ),
        dropped=f"SELECT count, first_at, last_at FROM capture_drops WHERE {mine}",
        ids=sql.values,
    )


def user_list_sql(sql: Sql) -> UserListSql:
    """The statements of :func:`list_users` on ``sql``'s backend: user ids compared and ordered byte by byte
    (:attr:`Sql.binary <memstack.store._sql.Sql.binary>`), the cursor's order whatever the database's collation."""
    user = f"user_id{sql.binary}"
    return UserListSql(
        ids=(
            f"SELECT user_id FROM (SELECT DISTINCT user_id FROM memories WHERE tenant = ? AND {user} > ? "
            f"UNION SELECT DISTINCT user_id FROM sessions WHERE tenant = ? AND {user} > ?) AS u "
            f"ORDER BY {user} LIMIT ?"
        ),
        memories=(
            "SELECT user_id, sum(CASE WHEN is_active THEN 1 ELSE 0 END), max(updated_at) FROM memories "
            f"WHERE tenant = ? AND {sql.among('user_id')} GROUP BY user_id"
        ),
        sessions=(
            "SELECT user_id, count(*), max(updated_at) FROM sessions "
            f"WHERE tenant = ? AND {sql.among('user_id')} GROUP BY user_id"
        ),
        page=sql.values,
        when=sql.when,
    )


_MINE = "tenant = ? AND user_id = ?"


def erase_plan(key: str, own: Mapping[str, Sequence[str]] | None = None) -> tuple[tuple[str, str], ...]:
    """``(table, statement)`` in the order an erasure runs them (children before parents), every one naming the
    user (:data:`_MINE`, once or more); ``key`` is the backend's integer key (:attr:`Sql.key
    <memstack.store._sql.Sql.key>`). ``own``: the backend's own tables of a user's rows, each erased right after
    the shared table it is listed under. A new table that holds user data goes here (or in a backend's ``own``), or
    ``tests/store/test_users_contract.py``, which reads the tables from the catalogue, fails."""
    sessions = f"SELECT {key} FROM sessions WHERE {_MINE}"
    shared = (
        (
            "reembed_vectors",
            "DELETE FROM reembed_vectors WHERE (tbl = 'memories' AND row_id IN "
            f"(SELECT {key} FROM memories WHERE {_MINE})) OR (tbl = 'archive_vectors' AND row_id IN "
            f"(SELECT seq FROM archive_vectors WHERE {_MINE}))",
        ),
        ("archive_vectors", f"DELETE FROM archive_vectors WHERE {_MINE}"),
        ("session_snapshots", f"DELETE FROM session_snapshots WHERE session_{key} IN ({sessions})"),
        ("session_artifacts", f"DELETE FROM session_artifacts WHERE session_{key} IN ({sessions})"),
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
        # Earlier erasures' own notices stay until delivered: they hold nothing the user said.
        ("webhook_outbox", f"DELETE FROM webhook_outbox WHERE {_MINE} AND type <> 'user.erased'"),
    )
    plan: list[tuple[str, str]] = []
    for table, statement in shared:
        plan.append((table, statement))
        plan.extend((extra, f"DELETE FROM {extra} WHERE {_MINE}") for extra in (own or {}).get(table, ()))
    return tuple(plan)


async def erase_rows(tx: Tx, plan: Sequence[tuple[str, str]], user: UserRef) -> dict[str, int]:
    """Inside the erasure's transaction: every statement of ``plan``; the rows each table lost."""
    removed: dict[str, int] = {}
    for table, statement in plan:
        changed = await tx.execute(statement, (user.tenant, user.user_id) * statement.count(_MINE))
        removed[table] = max(changed, 0)
    return removed


class UserReads:
    """``export`` and ``list`` of :class:`~memstack.store.base.UserData`, the same on both backends."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql
        self._export = export_sql(sql)
        self._list = user_list_sql(sql)

    async def _rows(self, query: str, params: Sequence[Any]) -> builtins.list[Row]:
        return await self._sql.all(query, params)

    async def export(self, user: UserRef) -> AsyncIterator[UserRecord]:
        check_id(user.user_id, "user_id")
        async for item in export_user(self._rows, self._export, user):
            yield item

    async def list(self, tenant: str, *, after: str | None = None, limit: int = 100) -> builtins.list[UserSummary]:
        return await list_users(self._rows, self._list, tenant, after=after, limit=limit)
