"""What both backends' ``MemoryIndex`` roles share: a memory from its row (:func:`memory_from_row`), a memory's history,
the listing of a user's memories through a filter and the vector search's checks before it goes to the store's vector
index (:class:`MemoryReads`), and which rows a read sees (:func:`held`: what is current, or what held at an ``as_of``
time). A filter's text and metadata conditions are each backend's (FTS5 and ``json_each`` on SQLite, the stems' GIN
index and ``jsonb`` containment on PostgreSQL), and so are counting and full-text search (SQLite's FTS5, PostgreSQL's
one statement over its indexes)."""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from memstack.errors import InputError, NotFound
from memstack.store._checks import COLUMNS, check_agent, check_k, parse_category, unit_vector
from memstack.store._fulltext import searched_terms
from memstack.store._sql import Row, Sql
from memstack.store.vectors.base import VectorIndex
from memstack.types import (
    Category,
    DeletedBy,
    HistoryAction,
    Memory,
    MemoryEvent,
    MemoryFilter,
    ScoredMemory,
    Source,
    UserRef,
    Vector,
    check_id,
)
from memstack.types.memories import stored_metadata

__all__ = ["MemoryReads", "held", "memory_from_row"]

# Plain dict lookups: calling an Enum class to convert a value is several times slower, and rows are hot.
_CATEGORIES = {c.value: c for c in Category}
_SOURCES = {s.value: s for s in Source}
_DELETED_BY = {d.value: d for d in DeletedBy}


def memory_from_row(
    row: Sequence[Any],
    embedding: Vector | None,
    *,
    when: Callable[[Any], datetime],
    turns: Callable[[Any], tuple[str, ...]],
) -> Memory:
    """A :class:`Memory` from the ``COLUMNS`` of one row (:data:`~memstack.store._checks.COLUMNS`), read with the
    backend's ``when`` (a stored time, never ``None``) and ``turns`` (the stored turn ids)."""
    (id_, tenant, user_id, agent_id, content, category, source, confidence, is_active, deleted_by) = row[:10]
    created, updated, observed, expires, merged_into, turn_ids, metadata, valid_from, valid_to = row[10:19]
    return Memory(
        id=id_,
        tenant=tenant,
        user_id=user_id,
        agent_id=agent_id,
        content=content,
        category=_CATEGORIES[category],
        source=_SOURCES[source],
        confidence=float(confidence) if math.isfinite(confidence) else 0.0,
        is_active=bool(is_active),
        deleted_by=_DELETED_BY[deleted_by] if deleted_by is not None else None,
        created_at=when(created),
        updated_at=when(updated),
        observed_at=when(observed) if observed is not None else None,
        expires_at=when(expires) if expires is not None else None,
        merged_into=merged_into,
        source_turn_ids=turns(turn_ids),
        embedding=embedding,
        metadata=stored_metadata(metadata),
        valid_from=when(valid_from) if valid_from is not None else None,
        valid_to=when(valid_to) if valid_to is not None else None,
    )


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
    """``history`` and ``list`` of :class:`~memstack.store.base.MemoryIndex`, over a backend's
    :class:`~memstack.store._sql.Sql` and its hooks: how a row becomes a memory, and the conditions of a filter's
    words and metadata."""

    #: The store's vector index, which :meth:`nearest` searches, and the dimension its vectors have.
    vectors: VectorIndex
    dim: int

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    async def nearest(
        self, user: UserRef, vector: Vector, k: int, flt: MemoryFilter | None = None
    ) -> builtins.list[ScoredMemory]:
        """Exact (or, past an index's threshold, never-short approximate) cosine top-``k`` of the user's current
        memories (``flt.as_of``: of what held then); ``flt`` may restrict categories, agent, text and metadata (its
        paging and ``include_deleted`` do not apply). Checked here, searched by :attr:`vectors`."""
        k = check_k(k)
        query = unit_vector(vector, self.dim)
        flt = flt or MemoryFilter()
        check_agent(flt.agent_id)
        return await self.vectors.search(user, query, k, flt)

    def _memory(self, row: Row) -> Memory:
        """The backend's hook: a memory from the ``COLUMNS`` of a row."""
        raise NotImplementedError

    def _every_term(self, user: UserRef, terms: builtins.list[str]) -> tuple[str, Any]:
        """The backend's hook: the condition (``AND …``, one parameter) on ``user``'s rows holding every term."""
        raise NotImplementedError

    def _metadata(self, wanted: Mapping[str, Any]) -> tuple[str, builtins.list[Any]]:
        """The backend's hook: the conditions (`` AND …``) and their parameters on rows whose metadata holds every
        key of the checked filter ``wanted`` with its value."""
        raise NotImplementedError

    async def list(self, user: UserRef, flt: MemoryFilter | None = None) -> builtins.list[Memory]:
        flt = flt or MemoryFilter()
        if flt.limit < 1 or flt.offset < 0:
            raise InputError(f"limit must be at least 1 and offset at least 0, got {flt.limit} and {flt.offset}")
        where = self._where(user, flt, include_deleted=flt.include_deleted)
        if where is None:
            return []
        conditions, args = where
        return await self._sql.mapped(  # a long page becomes memories where it is read (SQLite: its thread)
            f"SELECT {COLUMNS} FROM memories WHERE {conditions} "
            f"ORDER BY created_at DESC, {self._sql.key} DESC LIMIT ? OFFSET ?",
            [*args, flt.limit, flt.offset],
            self._memory,
        )

    def _where(
        self, user: UserRef, flt: MemoryFilter, *, include_deleted: bool = False
    ) -> tuple[str, builtins.list[Any]] | None:
        """The conditions (and their parameters) of ``flt`` on the user's rows; ``None``: its text has no words."""
        check_agent(flt.agent_id)
        state, held_args = held(flt.as_of, include_deleted=include_deleted, past=flt.past)
        sql = [f"tenant = ? AND user_id = ? {state}"]
        args: builtins.list[Any] = [user.tenant, user.user_id, *held_args]
        if flt.categories:
            sql.append(f" AND {self._sql.among('category')}")
            args.append(self._sql.values([parse_category(c).value for c in flt.categories]))
        if flt.agent_id is not None:
            sql.append(" AND (agent_id IS NULL OR agent_id = ?)")
            args.append(flt.agent_id)
        if flt.text is not None:
            terms = searched_terms(flt.text)
            if terms is None:
                return None
            condition, arg = self._every_term(user, terms)
            sql.append(condition)
            args.append(arg)
        if flt.metadata:
            conditions, values = self._metadata(flt.metadata)
            sql.append(conditions)
            args += values
        return "".join(sql), args

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
