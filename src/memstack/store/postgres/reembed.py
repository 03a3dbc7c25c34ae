"""``memstack reembed`` on the PostgreSQL store (the steps are described in :mod:`memstack.store.reembed`).

Staging table (migration ``0010_reembed``): ``reembed_vectors (tbl, row_id, text, embedding vector)``, one row
per vector re-embedded so far (``vector`` without a dimension, so it holds the new model's vectors while the live
columns are still ``vector(old_dim)``); ``text`` is what was embedded, so the switch can tell a row edited
meanwhile. The target model is the ``reembed_embedder`` / ``reembed_dim`` rows of ``memstack_meta``. The lock is
a session advisory lock held by the reembed's connection (the server releases it if the process dies).

The switch runs in one transaction: the vector tables are locked against writes (reads go on), the indexes on
each vector column (the per-user HNSW indexes of ``memory_ann_indexes``) are dropped, the column becomes
``vector(new_dim)`` and takes the staged vectors, the indexes are built again from their saved definitions (a bulk
build, not one insert at a time), and ``memstack_meta`` names the new model.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import sql

from memstack.errors import ConfigError, StoreBusy
from memstack.store._sql import Tx
from memstack.store.postgres._db import connect, describe_url, map_error
from memstack.store.postgres._schema import prepare
from memstack.store.postgres._sql import tx
from memstack.store.reembed import ReembedSteps, VectorTable, vector_tables
from memstack.types import Vector

__all__ = ["VECTOR_TABLES", "PgReembed"]

Conn = psycopg.AsyncConnection[Any]
T = TypeVar("T")

#: Every table holding vectors (:func:`~memstack.store.reembed.vector_tables`).
VECTOR_TABLES = vector_tables("seq")

#: Session advisory lock held for the whole reembed ("reembed!" in ASCII).
_REEMBED_LOCK = 0x7265656D62656421


class PgReembed(ReembedSteps):
    """The PostgreSQL database at ``url``, opened for reembedding. Create with ``await PgReembed.open(url)``."""

    meta = "memstack_meta"

    def __init__(self, conn: Conn, where: str) -> None:
        self._conn = conn
        self._where = where
        self.tables: Sequence[VectorTable] = VECTOR_TABLES

    @classmethod
    async def open(cls, url: str, *, timeout_s: float = 10.0) -> PgReembed:
        """Connect, take the reembed lock (``StoreBusy`` if another reembed holds it) and migrate."""
        from pgvector.psycopg import register_vector_async

        where = describe_url(url)
        conn = await connect(url, timeout_s=timeout_s)
        try:
            cur = await conn.execute("SELECT pg_try_advisory_lock(%s)", (_REEMBED_LOCK,))
            row = await cur.fetchone()
            if not row or not row[0]:
                raise StoreBusy(
                    f"another `memstack reembed` is running on {where}; wait for it to finish (it resumes where it "
                    "stopped if it is killed)"
                )
            cur = await conn.execute("SELECT to_regclass('memstack_meta') IS NOT NULL")
            row = await cur.fetchone()
            if not row or not row[0]:
                raise ConfigError(f"{where} holds no memstack store; check MEMSTACK_DATABASE_URL")
            cur = await conn.execute("SELECT value FROM memstack_meta WHERE key = 'dim'")
            row = await cur.fetchone()
            dim = int(row[0]) if row else 1
            await prepare(conn, dim=dim, embedder="", where=where, check_model=False)
            await register_vector_async(conn)
        except BaseException as exc:
            await conn.close()
            if isinstance(exc, psycopg.Error):
                raise map_error(exc, where) from None
            raise
        return cls(conn, where)

    @property
    def where(self) -> str:
        return self._where

    async def _write(self, body: Callable[[Tx], Coroutine[Any, Any, T]]) -> T:
        try:
            async with self._conn.transaction():
                return await body(tx(self._conn))
        except psycopg.Error as exc:
            raise map_error(exc, self._where) from None

    def _stored(self, vector: Vector) -> Vector:
        return vector

    async def _hold(self, tx: Tx) -> None:
        for t in self.tables:  # writers wait until this commits; readers go on with the old vectors
            await self._conn.execute(
                sql.SQL("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE").format(sql.Identifier(t.name))
            )

    async def _replace(self, tx: Tx, t: VectorTable, dim: int) -> None:
        """Inside the switch's transaction: ``t``'s vector column becomes ``vector(dim)`` holding the staged
        vectors; the indexes on it are dropped first and built again afterwards."""
        conn = self._conn
        table, column = sql.Identifier(t.name), sql.Identifier(t.vector_column)
        cur = await conn.execute(
            "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = ANY (x.indkey) "
            "WHERE x.indrelid = %s::regclass AND a.attname = %s",
            (t.name, t.vector_column),
        )
        indexes = [(str(name), str(definition)) for name, definition in await cur.fetchall()]
        cur = await conn.execute(
            "SELECT attnotnull FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s",
            (t.name, t.vector_column),
        )
        row = await cur.fetchone()
        not_null = bool(row and row[0])
        for name, _ in indexes:
            await conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
        if not_null:
            await conn.execute(sql.SQL("ALTER TABLE {} ALTER COLUMN {} DROP NOT NULL").format(table, column))
        # Every row that had a vector has a staged one (checked under the table lock); rows without stay NULL.
        await conn.execute(
            sql.SQL("ALTER TABLE {} ALTER COLUMN {} TYPE vector({}) USING NULL").format(table, column, sql.Literal(dim))
        )
        await conn.execute(
            sql.SQL(
                "UPDATE {} AS t SET {} = s.embedding FROM reembed_vectors AS s WHERE s.tbl = %s AND s.row_id = t.{}"
            ).format(table, column, sql.Identifier(t.id_column)),
            (t.name,),
        )
        if not_null:
            await conn.execute(sql.SQL("ALTER TABLE {} ALTER COLUMN {} SET NOT NULL").format(table, column))
        for _, definition in indexes:
            await conn.execute(definition.encode())

    async def aclose(self) -> None:
        await self._conn.close()  # the advisory lock goes with the session
