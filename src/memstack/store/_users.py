"""What the backends share for :class:`~memstack.store.base.UserData`: the shape of every exported record and the
order a user's rows are read in; each backend supplies its SQL (:class:`ExportSql`) and a way to run it. The list of
a tenant's users (:func:`list_users`, :class:`UserListSql`) is shared the same way.

The reading is paged (``PAGE`` memories, ``SESSION_PAGE`` sessions at a time): a user with a million memories is
exported in constant memory. Every statement names the tenant and the user (sharding by user, docs/scaling.md).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memstack.errors import InputError
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
    "export_user",
    "list_users",
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
MESSAGE = ("seq", "turn", "side", "speaker", "text")
ARTIFACT = ("turn", "idx", "kind", "role", "language", "label", "content", "created_at")
SNAPSHOT = ("turn", "reason", "facts", "at")
CONTEXT = ("context_id", "session_id", "created_at", "manifest")
JOB = ("id", "kind", "status", "attempts", "created_at", "updated_at", "payload", "result", "error")
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
