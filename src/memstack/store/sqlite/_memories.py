"""The SQLite store's ``MemoryStore`` role: every write, each one transaction that records its history; ``update``,
``forget``, ``restore`` and ``delete`` are :class:`~memstack.store._memory_writes.MemoryWritesBase`'s, over this
backend's hooks.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Callable, Coroutine, Sequence
from functools import partial
from typing import Any

import numpy as np

from memstack.errors import LimitReached
from memstack.store._checks import check_actor, unit_matrix, unit_vector
from memstack.store._fulltext import text_terms
from memstack.store._memory_writes import (
    HISTORY,
    Change,
    MemoryWritesBase,
    check_limit,
    new_memory,
)
from memstack.store._outbox import memories_created
from memstack.store._sql import Tx, drive
from memstack.store.sqlite._core import COUNT, FETCH, Core, fetched, opt_ts
from memstack.store.sqlite._rows import fts_owner, metadata_text, to_ts
from memstack.store.sqlite._sql import SQLiteSql, tx
from memstack.store.vectors.base import IndexedRow, VectorWrite
from memstack.types import (
    HistoryAction,
    Memory,
    NewMemory,
    UserRef,
    Vector,
    check_id,
    new_id,
    new_ids,
    utcnow,
)

__all__ = ["SQLiteMemories"]

_INSERT = (
    "INSERT INTO memories (pk, id, tenant, user_id, agent_id, content, category, source, confidence, is_active, "
    "deleted_by, created_at, updated_at, observed_at, expires_at, merged_into, source_turn_ids, fts_owner, embedding, "
    "terms, n_terms, metadata, valid_from, valid_to) "
    f"VALUES ({', '.join('?' * 24)})"
)
_FTS_INSERT = "INSERT INTO memories_fts (rowid, terms, fts_owner) VALUES (?, ?, ?)"
_FTS_INSERT_FROM = "INSERT INTO memories_fts (rowid, terms, fts_owner) SELECT pk, terms, fts_owner FROM memories"


class SQLiteMemories(MemoryWritesBase):
    """Adds, changes and removes memories; the cache follows each commit."""

    def __init__(self, core: Core) -> None:
        super().__init__(SQLiteSql(core), core.dim)
        self._core = core

    @staticmethod
    def _insert_row(pk: int | None, m: Memory, blob: bytes, owner: str, created: str) -> tuple[Any, ...]:
        turns = json.dumps(list(m.source_turn_ids)) if m.source_turn_ids else "[]"
        terms = text_terms(m.content)
        return (
            pk,
            m.id,
            m.tenant,
            m.user_id,
            m.agent_id,
            m.content,
            m.category.value,
            m.source.value,
            m.confidence,
            int(m.is_active),
            None,
            created,
            created,
            opt_ts(m.observed_at),
            opt_ts(m.expires_at),
            None,
            turns,
            owner,
            blob,
            " ".join(terms),
            len(terms),
            metadata_text(m.metadata),
            opt_ts(m.valid_from),
            opt_ts(m.valid_to),
        )

    async def add(
        self, user: UserRef, memory: NewMemory, embedding: Vector, *, limit: int | None = None, actor: str = "user"
    ) -> Memory:
        vector = unit_vector(embedding, self._core.dim)
        check_limit(limit)
        new = new_memory(user, memory, utcnow(), new_id("mem"))
        return await self._core.run(partial(self._add_sync, user, new, vector, limit, check_actor(actor)))

    def _add_sync(
        self, user: UserRef, new: Memory, vector: Vector, limit: int | None, actor: str, conn: sqlite3.Connection
    ) -> Memory:
        owner, blob = fts_owner(user), vector.astype("<f4").tobytes()

        def body(conn: sqlite3.Connection) -> int:
            # Count and insert under one write lock: concurrent adds cannot both pass the limit.
            if limit is not None and self._core.count(conn, user) >= limit:
                raise LimitReached("current", limit)
            row = self._insert_row(None, new, blob, owner, to_ts(new.created_at))
            pk = int(conn.execute(_INSERT, row).lastrowid or 0)
            conn.execute(_FTS_INSERT, (pk, row[19], owner))
            drive(
                self._history(tx(conn), user, new.id, HistoryAction.CREATE, None, new, at=new.created_at, actor=actor)
            )
            return pk

        pk = self._core.write(conn, body)
        self._core.vectors.committed(user, VectorWrite.of_change(pk, False, new, vector))
        return new

    async def add_many(
        self, user: UserRef, memories: Sequence[NewMemory], embeddings: Vector, *, actor: str = "system"
    ) -> builtins.list[Memory]:
        # Checking and converting a large batch would hold the event loop: it runs on the database thread.
        batch = list(memories)
        return await self._core.run(partial(self._add_many_sync, user, batch, embeddings, check_actor(actor)))

    def _add_many_sync(
        self, user: UserRef, batch: builtins.list[NewMemory], embeddings: Vector, actor: str, conn: sqlite3.Connection
    ) -> builtins.list[Memory]:
        matrix = unit_matrix(embeddings, self._core.dim, rows=len(batch))
        if not batch:
            return []
        now = utcnow()
        ids = new_ids("mem", len(batch))
        new = [new_memory(user, m, now, i) for m, i in zip(batch, ids, strict=True)]
        owner, at = fts_owner(user), to_ts(now)
        blobs = np.ascontiguousarray(matrix, dtype="<f4")

        def body(conn: sqlite3.Connection) -> tuple[int, bool]:
            base = int(conn.execute("SELECT COALESCE(MAX(pk), 0) FROM memories").fetchone()[0])
            first_for_user = self._core.count(conn, user) == 0
            rows = (self._insert_row(base + i + 1, m, blobs[i].tobytes(), owner, at) for i, m in enumerate(new))
            conn.executemany(_INSERT, rows)
            conn.execute(f"{_FTS_INSERT_FROM} WHERE pk > ?", (base,))
            history = (
                (m.id, user.tenant, user.user_id, "create", None, json.dumps(m.snapshot()), at, actor, "") for m in new
            )
            conn.executemany(HISTORY, history)
            drive(memories_created(tx(conn), self._sql, user, new, at=now, actor=actor))
            return base, first_for_user

        base, first_for_user = self._core.write(conn, body)
        # The index holds current memories only: a past fact (its interval over, see new_memory) stays out of it.
        added = [IndexedRow(base + 1 + i, m, matrix[i]) for i, m in enumerate(new) if m.is_active]
        self._core.vectors.committed(user, VectorWrite(added=added, complete=first_for_user))
        return new

    # -- the shared writes' hooks (update, forget, restore, delete: MemoryWritesBase) ----------------------------------

    async def _fetch(self, tx: Tx, user: UserRef, memory_id: str, *, lock: bool = True) -> tuple[int, Memory]:
        # ``lock`` needs nothing here: a write transaction holds the whole database.
        check_id(memory_id, "memory id")
        return fetched(await tx.one(FETCH, (memory_id, user.tenant, user.user_id)), memory_id)

    async def _count(self, tx: Tx, user: UserRef) -> int:
        row = await tx.one(COUNT, (user.tenant, user.user_id))
        return int(row[0]) if row else 0

    async def _change(self, user: UserRef, body: Callable[[Tx], Coroutine[Any, Any, Change]]) -> Change:
        def run(conn: sqlite3.Connection) -> Change:
            change = self._core.write(conn, lambda c: drive(body(tx(c))))
            # Still on the database thread, before any other write: the cache follows commits in their order.
            # (A restore's ``after`` carries the stored vector the index takes back.)
            vector = change.after.embedding if change.after is not None else None
            write = VectorWrite.of_change(change.key, change.before.is_active, change.after, vector)
            self._core.vectors.committed(user, write)
            return change

        return await self._core.run(run)
