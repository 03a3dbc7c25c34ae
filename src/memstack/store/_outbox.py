"""The webhook outbox, written inside the transaction of the change it tells of (both backends).

A change that an endpoint may want to hear of (a memory's write, a user's erasure, a session's end) calls one of
these with the change's own :class:`~memstack.store._sql.Tx`: they read the tenant's enabled endpoints and write one
``webhook_outbox`` row per endpoint subscribed to the event's type, all carrying the same event id. So the event
exists exactly when the change committed: a process killed after the commit leaves the rows for any other (or the
next) process's delivery worker (:mod:`memstack.webhooks.worker`), and a rolled-back change leaves none. A tenant
without endpoints pays one indexed read per write and stores nothing.

The rows fan out per endpoint at write time, so a delivery's state (attempts, lease, last error) is its own row and
an endpoint added later does not receive events older than itself. ``occurred_at`` is the change's own time (which
an import or a session ended with a given time sets); ``created_at``, when the row was written, is what a delivery's
age is counted from. Each row holds the event's payload (a memory's
id and content fields; an erasure names the user and nothing they said), so erasing a user deletes their rows,
delivered or not, and then records the erasure's own event (``store/*/users.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from memstack.store._sql import Sql, Tx
from memstack.types import HistoryAction, Memory, UserRef, new_id, new_ids, utcnow

__all__ = ["OUTBOX_COLUMNS", "memories_created", "memory_event", "record", "session_ended", "user_erased"]

#: The columns of an outbox row as :func:`record` writes them.
OUTBOX_COLUMNS = (
    "id, event_id, endpoint_id, tenant, user_id, type, occurred_at, payload, status, attempts, next_at, created_at"
)
_INSERT = f"INSERT INTO webhook_outbox ({OUTBOX_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)"
_ENDPOINTS = "SELECT id, events FROM webhook_endpoints WHERE tenant = ? AND enabled = ?"


def _memory_type(action: HistoryAction, after: Memory | None) -> str:
    """The event a memory's history action is: a merge that leaves the memory inactive forgets it (it was folded
    into another); one that changes the surviving memory updates it."""
    if action is HistoryAction.CREATE:
        return "memory.created"
    if action is HistoryAction.SUPERSEDE:
        return "memory.superseded"
    if action is HistoryAction.RESTORE:
        return "memory.restored"
    if action is HistoryAction.DELETE:
        return "memory.deleted"
    if action is HistoryAction.FORGET or (action is HistoryAction.MERGE and after is not None and not after.is_active):
        return "memory.forgotten"
    return "memory.updated"


def _memory_fields(memory: Memory) -> dict[str, Any]:
    return {"id": memory.id, "agent_id": memory.agent_id, **memory.snapshot()}


async def record(
    tx: Tx, sql: Sql, user: UserRef, kind: str, at: datetime, payloads: Sequence[Mapping[str, Any]]
) -> int:
    """Inside the change's transaction: one event of type ``kind`` per payload, written once for each of the
    tenant's enabled endpoints subscribed to it; the number of rows written."""
    endpoints = [str(r[0]) for r in await tx.all(_ENDPOINTS, (user.tenant, True)) if kind in sql.unjson(r[1])]
    if not endpoints or not payloads:
        return 0
    events, now = new_ids("evt", len(payloads)), utcnow()  # ``at`` may be a caller's time (an import's, a test's)
    rows = [
        (new_id("whd"), event, endpoint, user.tenant, user.user_id, kind, at, sql.json(dict(payload)), now, now)
        for event, payload in zip(events, payloads, strict=True)
        for endpoint in endpoints
    ]
    await tx.many(_INSERT, rows)
    return len(rows)


async def memory_event(
    tx: Tx,
    sql: Sql,
    user: UserRef,
    action: HistoryAction,
    before: Memory | None,
    after: Memory | None,
    *,
    at: datetime,
    actor: str,
    note: str,
) -> None:
    """The event of one memory write, beside its history row: the memory as it is now (as it was, for a delete) and
    what it was before a change."""
    current = after if after is not None else before
    assert current is not None
    payload: dict[str, Any] = {"memory": _memory_fields(current), "action": action.value, "actor": actor}
    if note:
        payload["note"] = note
    if before is not None and after is not None:
        payload["previous"] = _memory_fields(before)
    await record(tx, sql, user, _memory_type(action, after), at, [payload])


async def memories_created(
    tx: Tx, sql: Sql, user: UserRef, memories: Sequence[Memory], *, at: datetime, actor: str
) -> None:
    """The events of a batch of new memories (an import), one per memory."""
    payloads = [{"memory": _memory_fields(m), "action": "create", "actor": actor} for m in memories]
    await record(tx, sql, user, "memory.created", at, payloads)


async def user_erased(tx: Tx, sql: Sql, user: UserRef, *, at: datetime, removed: int) -> None:
    """The erasure's event, after its deletes (which took the user's earlier outbox rows): who, and how many rows
    went; nothing the user said."""
    await record(tx, sql, user, "user.erased", at, [{"user_id": user.user_id, "rows_removed": removed}])


async def session_ended(tx: Tx, sql: Sql, user: UserRef, session_id: str, summary: str, *, at: datetime) -> None:
    await record(tx, sql, user, "session.ended", at, [{"session_id": session_id, "summary": summary}])
