"""The PostgreSQL store's ``MemoryStore`` role: every write is one transaction that records its history; ``update``,
``forget``, ``restore`` and ``delete`` are :class:`~memstack.store._memory_writes.MemoryWritesBase`'s, over this
backend's hooks.

Every write first takes a transaction-scoped advisory lock for its (tenant, user), so concurrent writes for one user
take turns (two processes included) and "count, then insert" cannot be raced past a tier limit; writes for
different users never wait for each other.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Coroutine, Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from memstack.errors import InputError, LimitReached, NotFound
from memstack.store._checks import COLUMNS, check_actor, unit_matrix, unit_vector
from memstack.store._fulltext import text_terms
from memstack.store._memory_writes import Change, MemoryWritesBase, check_limit, new_memory
from memstack.store._outbox import memories_created
from memstack.store._sql import Tx
from memstack.store.fence import user_lock_key
from memstack.store.postgres._db import Database
from memstack.store.postgres._rows import N_COLUMNS, memory_from_row
from memstack.store.postgres._sql import PgSql, tx
from memstack.store.vectors.base import VectorIndex, VectorWrite
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

__all__ = ["PgMemories"]

_INSERT_COLUMNS = (
    "id, tenant, user_id, agent_id, content, category, source, confidence, is_active, "
    "created_at, updated_at, observed_at, expires_at, source_turn_ids, embedding, terms, n_terms, metadata, "
    "valid_from, valid_to"
)
_INSERT_TYPES = [
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "float8",
    "bool",
    "timestamptz",
    "timestamptz",
    "timestamptz",
    "timestamptz",
    "text[]",
    "vector",
    "text[]",
    "int4",
    "jsonb",
    "timestamptz",
    "timestamptz",
]
_HISTORY_COLUMNS = "memory_id, tenant, user_id, action, before, after, at, actor, note"
_HISTORY_TYPES = ["text", "text", "text", "text", "jsonb", "jsonb", "timestamptz", "text", "text"]
_COUNT = "SELECT count(*) FROM memories WHERE tenant = ? AND user_id = ? AND is_active"

Conn = psycopg.AsyncConnection[Any]


class PgMemories(MemoryWritesBase):
    """Adds, changes and removes memories."""

    def __init__(self, db: Database, vectors: VectorIndex, dim: int) -> None:
        super().__init__(PgSql(db), dim)
        self._db = db
        self._vectors = vectors
        self._dim = dim

    # -- building blocks ----------------------------------------------------------------------------------------------

    @staticmethod
    def _prepare(user: UserRef, memory: NewMemory, now: datetime, memory_id: str, vector: Vector) -> Memory:
        new = new_memory(user, memory, now, memory_id, vector)
        if "\x00" in new.content:
            raise InputError("memory content contains a NUL character, which PostgreSQL text cannot hold; remove it")
        return new

    @staticmethod
    def _row(m: Memory, vector: Any) -> tuple[Any, ...]:
        terms = text_terms(m.content)
        return (
            m.id,
            m.tenant,
            m.user_id,
            m.agent_id,
            m.content,
            m.category.value,
            m.source.value,
            m.confidence,
            m.is_active,
            m.created_at,
            m.updated_at,
            m.observed_at,
            m.expires_at,
            list(m.source_turn_ids),
            vector,
            terms,
            len(terms),
            Jsonb(m.metadata),
            m.valid_from,
            m.valid_to,
        )

    @staticmethod
    async def _lock(conn: Conn, user: UserRef) -> None:
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (user_lock_key(user),))

    # -- the shared writes' hooks (update, forget, restore, delete: MemoryWritesBase) ----------------------------------

    async def _count(self, tx: Tx, user: UserRef) -> int:
        row = await tx.one(_COUNT, (user.tenant, user.user_id))
        return int(row[0]) if row else 0

    async def _fetch(self, tx: Tx, user: UserRef, memory_id: str, *, lock: bool = True) -> tuple[int, Memory]:
        """One memory of ``user`` with its embedding (row-locked for the transaction unless ``lock`` is false),
        else ``NotFound``."""
        check_id(memory_id, "memory id")
        suffix = " FOR UPDATE" if lock else ""
        row = await tx.one(
            f"SELECT seq, {COLUMNS}, embedding FROM memories WHERE id = ? AND tenant = ? AND user_id = ?{suffix}",
            (memory_id, user.tenant, user.user_id),
        )
        if row is None:
            raise NotFound("memory", memory_id)
        return int(row[0]), memory_from_row(row[1:], row[1 + N_COLUMNS])

    async def _change(self, user: UserRef, body: Callable[[Tx], Coroutine[Any, Any, Change]]) -> Change:
        async with self._db.writing() as conn:
            await self._lock(conn, user)
            return await body(tx(conn))

    # -- MemoryStore --------------------------------------------------------------------------------------------------

    async def add(
        self, user: UserRef, memory: NewMemory, embedding: Vector, *, limit: int | None = None, actor: str = "user"
    ) -> Memory:
        vector = unit_vector(embedding, self._dim)
        check_limit(limit)
        new = self._prepare(user, memory, utcnow(), new_id("mem"), vector)
        actor = check_actor(actor)
        counts = self._vectors.counts(user)
        active: int | None = None
        async with self._db.writing() as conn:
            await self._lock(conn, user)
            if limit is not None or counts:
                active = await self._count(tx(conn), user)
                if limit is not None and active >= limit:
                    raise LimitReached("current", limit)
                active += 1
            await conn.execute(
                f"INSERT INTO memories ({_INSERT_COLUMNS}) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::vector, %s::text[], %s, %s, %s, %s)",
                self._row(new, self._db.vector_param(vector)),
            )
            await self._history(tx(conn), user, new.id, HistoryAction.CREATE, None, new, at=new.created_at, actor=actor)
        self._vectors.committed(user, VectorWrite(active=active))  # the rows are in the table the index reads
        return new

    async def add_many(
        self, user: UserRef, memories: Sequence[NewMemory], embeddings: Vector, *, actor: str = "system"
    ) -> builtins.list[Memory]:
        """One transaction of binary ``COPY``; if the user becomes large, their HNSW index is built (in bulk: the
        index's ``settle``) before this returns, so an import is searchable at full speed as soon as it is done."""
        batch = list(memories)
        matrix = unit_matrix(embeddings, self._dim, rows=len(batch))
        actor = check_actor(actor)
        if not batch:
            return []
        now = utcnow()
        ids = new_ids("mem", len(batch))
        new = [self._prepare(user, m, now, ids[i], matrix[i]) for i, m in enumerate(batch)]
        async with self._db.writing() as conn:
            await self._lock(conn, user)
            cur = conn.cursor()
            async with cur.copy(f"COPY memories ({_INSERT_COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(_INSERT_TYPES)
                for m in new:
                    await copy.write_row(self._row(m, m.embedding))
            async with cur.copy(f"COPY memory_history ({_HISTORY_COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(_HISTORY_TYPES)
                for m in new:
                    snapshot = Jsonb(m.snapshot())
                    await copy.write_row((m.id, user.tenant, user.user_id, "create", None, snapshot, now, actor, ""))
            await memories_created(tx(conn), self._sql, user, new, at=now, actor=actor)
            active = await self._count(tx(conn), user) if self._vectors.counts(user) else None
        self._vectors.committed(user, VectorWrite(active=active))
        await self._vectors.settle(user)
        return new
