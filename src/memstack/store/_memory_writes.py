"""What both backends' ``MemoryStore`` roles share: the checks on a write and the memory it makes, the history row
every write records, and ``update``, ``forget``, ``restore`` and ``delete`` whole (:class:`MemoryWritesBase`).

A backend keeps its inserts (SQLite's FTS rows and cache, PostgreSQL's binary ``COPY`` and HNSW bookkeeping) in
``store/<backend>/_memories.py``, and gives the shared writes three hooks: how it reads one memory inside a write
(PostgreSQL locks the row; SQLite's write already holds the whole database), how it counts a user's active memories, and
:meth:`~MemoryWritesBase._change`, the transaction around a write (PostgreSQL takes the user's advisory lock first;
SQLite brings its vector cache in line on its database thread right after the commit, before any other write can run).
What an update, a forget or a restore returns is the stored memory as ``get`` reads it, its embedding included.

Every write's history row is written by :meth:`~MemoryWritesBase._history`, which also writes the change's webhook
events in the same transaction (:mod:`memstack.store._outbox`); a batch add writes both its own way.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, NamedTuple

from memstack.errors import InputError, LimitReached
from memstack.store._checks import check_actor, check_agent, parse_category, parse_source, unit_vector, utc
from memstack.store._fulltext import text_terms
from memstack.store._hidden import check_hidden, hide_items, unhide_items
from memstack.store._outbox import memory_event
from memstack.store._sql import Sql, Tx
from memstack.types import (
    Category,
    DeletedBy,
    HiddenItem,
    HistoryAction,
    Memory,
    MemoryPatch,
    NewMemory,
    UserRef,
    Vector,
    utcnow,
)
from memstack.types.memories import check_interval, check_metadata

__all__ = [
    "HISTORY",
    "UPDATE_ACTIONS",
    "Change",
    "MemoryWritesBase",
    "check_forget",
    "check_limit",
    "check_update",
    "is_past_version",
    "new_memory",
    "patched",
]

#: The history actions ``update`` records (the others have their own calls).
UPDATE_ACTIONS = (HistoryAction.UPDATE, HistoryAction.SUPERSEDE, HistoryAction.MERGE)

#: The history row every write records (``before`` and ``after``: snapshots, :meth:`Memory.snapshot`).
HISTORY = (
    "INSERT INTO memory_history (memory_id, tenant, user_id, action, before, after, at, actor, note) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

_MINE = "WHERE id = ? AND tenant = ? AND user_id = ?"


def check_limit(limit: int | None) -> None:
    if limit is not None and limit < 0:
        raise InputError(f"limit must be zero or more, got {limit}")


def new_memory(
    user: UserRef, memory: NewMemory, now: datetime, memory_id: str, embedding: Vector | None = None
) -> Memory:
    """The :class:`Memory` that adding ``memory`` for ``user`` stores, created ``now``: active, unless its validity
    interval ended already (a past fact, such as the version of a memory its successor superseded: kept for ``as_of``
    reads, never current)."""
    check_agent(memory.agent_id)
    if not isinstance(memory.content, str):
        raise InputError(f"memory content must be text, got {type(memory.content).__name__}")
    valid_from, valid_to = check_interval(memory.valid_from, memory.valid_to)
    return Memory(
        id=memory_id,
        user_id=user.user_id,
        tenant=user.tenant,
        agent_id=memory.agent_id,
        content=memory.content,
        category=parse_category(memory.category),
        source=parse_source(memory.source),
        confidence=float(memory.confidence),
        is_active=valid_to is None or valid_to > now,
        deleted_by=None,
        created_at=now,
        updated_at=now,
        observed_at=utc(memory.observed_at),
        expires_at=utc(memory.expires_at),
        merged_into=None,
        source_turn_ids=tuple(str(t) for t in memory.source_turn_ids),
        embedding=embedding,
        metadata=check_metadata(memory.metadata),
        valid_from=valid_from,
        valid_to=valid_to,
    )


def check_update(patch: MemoryPatch, action: HistoryAction) -> None:
    if action not in UPDATE_ACTIONS:
        allowed = ", ".join(a.value for a in UPDATE_ACTIONS)
        raise InputError(f"update records one of: {allowed}; use forget/restore/delete for {action!r}")
    if patch.confidence is not None and not 0.0 <= patch.confidence <= 1.0:
        raise InputError(f"confidence must be between 0 and 1, got {patch.confidence}")


def patched(
    before: Memory, patch: MemoryPatch, category: Category | None, vector: Vector | None, *, embedding: Vector | None
) -> Memory:
    """``before`` with ``patch`` applied (``category``: the patch's, parsed), updated now and holding ``embedding``;
    ``InputError`` when the patch changes the content without the new text's ``vector``."""
    if patch.content is not None and patch.content != before.content and vector is None:
        raise InputError("changing a memory's content needs its new embedding: embed the new text and pass it")
    valid_from, valid_to = check_interval(
        patch.valid_from if patch.valid_from is not None else before.valid_from,
        patch.valid_to if patch.valid_to is not None else before.valid_to,
    )
    return replace(
        before,
        content=patch.content if patch.content is not None else before.content,
        category=category if category is not None else before.category,
        confidence=patch.confidence if patch.confidence is not None else before.confidence,
        expires_at=utc(patch.expires_at) if patch.expires_at is not None else before.expires_at,
        observed_at=utc(patch.observed_at) if patch.observed_at is not None else before.observed_at,
        source_turn_ids=(
            tuple(str(t) for t in patch.source_turn_ids)
            if patch.source_turn_ids is not None
            else before.source_turn_ids
        ),
        metadata=check_metadata(patch.metadata) if patch.metadata is not None else before.metadata,
        updated_at=utcnow(),
        embedding=embedding,
        valid_from=valid_from,
        valid_to=valid_to,
    )


def is_past_version(memory: Memory) -> bool:
    """Whether ``memory`` is a fact that held until its interval ended (a superseded memory's past version, or one
    added already over): inactive, neither forgotten nor merged, with an end. ``as_of`` reads find it."""
    return (
        not memory.is_active
        and memory.deleted_by is None
        and memory.merged_into is None
        and memory.valid_to is not None
    )


def check_forget(memory_id: str, by: DeletedBy, merged_into: str | None) -> DeletedBy:
    """Who forgets (``by`` as a :class:`DeletedBy`); a memory is never merged into itself."""
    try:
        who = DeletedBy(by)
    except ValueError:
        raise InputError(f"deleted_by must be 'ai' or 'user', got {by!r}") from None
    if merged_into == memory_id:
        raise InputError("a memory cannot be merged into itself; pass the id of the memory that absorbed it")
    return who


class Change(NamedTuple):
    """One memory changed by a write: the backend's key of its row (for its caches), before and after (``None``:
    deleted)."""

    key: int
    before: Memory
    after: Memory | None


class MemoryWritesBase:
    """``get``, ``update``, ``forget``, ``restore`` and ``delete`` of :class:`~memstack.store.base.MemoryStore`,
    over a backend's :class:`~memstack.store._sql.Sql` and the three hooks it implements (``dim``: the vectors')."""

    def __init__(self, sql: Sql, dim: int) -> None:
        self._sql = sql
        self._dim = dim

    async def get(self, user: UserRef, memory_id: str) -> Memory:
        _, memory = await self._sql.read(lambda tx: self._fetch(tx, user, memory_id, lock=False), snapshot=False)
        return memory

    # -- a backend's hooks --------------------------------------------------------------------------------------------

    async def _fetch(self, tx: Tx, user: UserRef, memory_id: str, *, lock: bool = True) -> tuple[int, Memory]:
        """One memory of ``user`` with its embedding and its row's key, else ``NotFound``; ``lock`` (inside a
        write): kept from other writers until the transaction ends."""
        raise NotImplementedError

    async def _count(self, tx: Tx, user: UserRef) -> int:
        """Inside a write: the user's active memories."""
        raise NotImplementedError

    async def _change(self, user: UserRef, body: Callable[[Tx], Coroutine[Any, Any, Change]]) -> Change:
        """``body`` in one write transaction under the erasure fence, taking its turn among ``user``'s writes;
        whatever the backend keeps beside the table follows the change after the commit."""
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------------------------------------------

    async def _history(
        self,
        tx: Tx,
        user: UserRef,
        memory_id: str,
        action: HistoryAction,
        before: Memory | None,
        after: Memory | None,
        *,
        at: datetime,
        actor: str = "user",
        note: str = "",
    ) -> None:
        snapshots = [self._sql.json(m.snapshot()) if m is not None else None for m in (before, after)]
        await tx.execute(HISTORY, (memory_id, user.tenant, user.user_id, action.value, *snapshots, at, actor, note))
        await memory_event(tx, self._sql, user, action, before, after, at=at, actor=actor, note=note)

    async def update(
        self,
        user: UserRef,
        memory_id: str,
        patch: MemoryPatch,
        embedding: Vector | None = None,
        *,
        action: HistoryAction = HistoryAction.UPDATE,
        actor: str = "user",
        note: str = "",
    ) -> Memory:
        check_update(patch, action)
        vector = unit_vector(embedding, self._dim) if embedding is not None else None
        category = parse_category(patch.category) if patch.category is not None else None
        actor = check_actor(actor)
        sql = self._sql

        async def body(tx: Tx) -> Change:
            key, before = await self._fetch(tx, user, memory_id)
            kept = vector if vector is not None else before.embedding
            after = patched(before, patch, category, vector, embedding=kept)
            terms = text_terms(after.content) if after.content != before.content else None
            await tx.execute(  # a NULL vector or terms keeps the stored ones (the content did not change)
                "UPDATE memories SET content = ?, category = ?, confidence = ?, expires_at = ?, observed_at = ?, "
                "source_turn_ids = ?, updated_at = ?, embedding = COALESCE(?, embedding), terms = COALESCE(?, terms), "
                f"n_terms = COALESCE(?, n_terms), metadata = ?, valid_from = ?, valid_to = ? {_MINE}",
                (
                    after.content, after.category.value, after.confidence, after.expires_at, after.observed_at,
                    sql.texts(after.source_turn_ids), after.updated_at,
                    sql.embedding(vector) if vector is not None else None,
                    sql.terms(terms) if terms is not None else None, len(terms) if terms is not None else None,
                    sql.json(after.metadata), after.valid_from, after.valid_to, memory_id, user.tenant, user.user_id,
                ),
            )  # fmt: skip
            await self._history(tx, user, memory_id, action, before, after, at=after.updated_at, actor=actor, note=note)
            return Change(key, before, after)

        return _after(await self._change(user, body))

    async def forget(
        self,
        user: UserRef,
        memory_id: str,
        *,
        by: DeletedBy,
        merged_into: str | None = None,
        note: str = "",
        hide: Sequence[HiddenItem] = (),
    ) -> Memory:
        who = check_forget(memory_id, by, merged_into)
        hidden = check_hidden(memory_id, hide)

        async def body(tx: Tx) -> Change:
            key, before = await self._fetch(tx, user, memory_id)
            if not before.is_active and not is_past_version(before):  # a past version may be forgotten too
                raise InputError(f"memory {memory_id!r} is already forgotten; restore it to make it active again")
            if merged_into is not None:
                await self._fetch(tx, user, merged_into, lock=False)  # NotFound unless it is this user's
            after = replace(before, is_active=False, deleted_by=who, merged_into=merged_into, updated_at=utcnow())
            await tx.execute(
                f"UPDATE memories SET is_active = ?, deleted_by = ?, merged_into = ?, updated_at = ? {_MINE}",
                (False, who.value, merged_into, after.updated_at, memory_id, user.tenant, user.user_id),
            )
            action = HistoryAction.MERGE if merged_into is not None else HistoryAction.FORGET
            await self._history(
                tx, user, memory_id, action, before, after, at=after.updated_at, actor=who.value, note=note
            )
            await hide_items(tx, user, memory_id, hidden)
            return Change(key, before, after)

        return _after(await self._change(user, body))

    async def restore(self, user: UserRef, memory_id: str, *, limit: int | None = None) -> Memory:
        check_limit(limit)

        async def body(tx: Tx) -> Change:
            key, before = await self._fetch(tx, user, memory_id)
            if before.is_active or is_past_version(before):
                what = "active" if before.is_active else "a past version (what held until it was superseded)"
                raise InputError(f"memory {memory_id!r} is {what}; only forgotten memories can be restored")
            now = utcnow()
            current = before.valid_to is None or before.valid_to > now  # a forgotten past version stays past
            if current and limit is not None and await self._count(tx, user) >= limit:
                raise LimitReached("current", limit)
            after = replace(before, is_active=current, deleted_by=None, merged_into=None, updated_at=now)
            await tx.execute(
                f"UPDATE memories SET is_active = ?, deleted_by = NULL, merged_into = NULL, updated_at = ? {_MINE}",
                (current, after.updated_at, memory_id, user.tenant, user.user_id),
            )
            await self._history(tx, user, memory_id, HistoryAction.RESTORE, before, after, at=after.updated_at)
            await unhide_items(tx, user, memory_id)
            return Change(key, before, after)

        return _after(await self._change(user, body))

    async def delete(self, user: UserRef, memory_id: str, *, hide: Sequence[HiddenItem] = ()) -> None:
        hidden = check_hidden(memory_id, hide)

        async def body(tx: Tx) -> Change:
            key, before = await self._fetch(tx, user, memory_id)
            # On SQLite the FTS trigger drops the memory's text too.
            await tx.execute(f"DELETE FROM memories {_MINE}", (memory_id, user.tenant, user.user_id))
            await self._history(tx, user, memory_id, HistoryAction.DELETE, before, None, at=utcnow())
            await hide_items(tx, user, memory_id, hidden)
            return Change(key, before, None)

        await self._change(user, body)


def _after(change: Change) -> Memory:
    assert change.after is not None  # forget and restore keep the row
    return change.after
