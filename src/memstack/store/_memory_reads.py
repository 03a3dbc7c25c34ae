"""What both backends' ``MemoryIndex`` roles share: a memory's history (:class:`MemoryReads`) and which rows a read
sees (:func:`held`: what is current, or what held at an ``as_of`` time). Listing, counting and both searches stay each
backend's own (SQLite answers from its cache and FTS5, PostgreSQL in one statement over its indexes)."""

from __future__ import annotations

import builtins
from datetime import datetime

from memstack.errors import NotFound
from memstack.store._sql import Row, Sql
from memstack.types import HistoryAction, MemoryEvent, UserRef, check_id

__all__ = ["MemoryReads", "held"]


def held(
    as_of: datetime | str | None,
    *,
    table: str = "",
    include_deleted: bool = False,
    placeholder: str = "?",
    past: bool = False,
) -> tuple[str, list[object]]:
    """The condition (``AND …``) and its parameters on a read's rows: without ``as_of`` the active memories (every
    row with ``include_deleted``), whatever their interval, as before intervals existed; with it, what held then:
    rows neither forgotten nor merged (active ones, and superseded past versions: inactive, no ``deleted_by``, an
    end) whose interval covers ``as_of``, an unknown start or end being open, so a memory not yet valid then
    (``valid_from`` after it) is left out. ``as_of`` is passed as the backend stores times (SQLite: ``to_ts`` text)
    and bound at each ``placeholder``. ``past`` (without ``as_of``): the past versions alone, whatever their interval
    (:func:`~memstack.store._memory_writes.is_past_version`)."""
    p = f"{table}." if table else ""
    if as_of is None and past:
        return (
            f"AND NOT {p}is_active AND {p}deleted_by IS NULL AND {p}merged_into IS NULL AND {p}valid_to IS NOT NULL",
            [],
        )
    if as_of is None:
        return ("", []) if include_deleted else (f"AND {p}is_active", [])
    parts = [] if include_deleted else [f"({p}is_active OR ({p}deleted_by IS NULL AND {p}valid_to IS NOT NULL))"]
    parts.append(f"({p}valid_from IS NULL OR {p}valid_from <= {placeholder})")
    parts.append(f"({p}valid_to IS NULL OR {p}valid_to > {placeholder})")
    return "AND " + " AND ".join(parts), [as_of, as_of]


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
