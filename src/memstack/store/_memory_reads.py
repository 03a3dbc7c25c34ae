"""What both backends' ``MemoryIndex`` roles share: a memory's history (:class:`MemoryReads`). Listing, counting and
both searches stay each backend's own (SQLite answers from its cache and FTS5, PostgreSQL in one statement over its
indexes)."""

from __future__ import annotations

import builtins

from memstack.errors import NotFound
from memstack.store._sql import Row, Sql
from memstack.types import HistoryAction, MemoryEvent, UserRef, check_id

__all__ = ["MemoryReads"]


class MemoryReads:
    """``history`` of :class:`~memstack.store.base.MemoryIndex`, over a backend's :class:`~memstack.store._sql.Sql`."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    async def history(self, user: UserRef, memory_id: str) -> builtins.list[MemoryEvent]:
        check_id(memory_id, "memory id")
        events = await self._sql.mapped(
            "SELECT id, memory_id, action, before, after, at, actor, note FROM memory_history "
            "WHERE tenant = ? AND user_id = ? AND memory_id = ? ORDER BY id",
            (user.tenant, user.user_id, memory_id),
            self._event,
        )
        if not events:
            raise NotFound("memory", memory_id)
        return events

    def _event(self, row: Row) -> MemoryEvent:
        id_, memory_id, action, before, after, at, actor, note = row
        return MemoryEvent(
            id=int(id_),
            memory_id=memory_id,
            action=HistoryAction(action),
            before=self._sql.unjson(before) if before is not None else None,
            after=self._sql.unjson(after) if after is not None else None,
            at=self._sql.when(at),
            actor=actor,
            note=note,
        )
