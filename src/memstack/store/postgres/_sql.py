"""The PostgreSQL dialect of :class:`memstack.store._sql.Sql`: ``?`` placeholders become ``%s``, times and JSON go
as the driver adapts them (``timestamptz``, ``jsonb``); a read is one pooled connection in autocommit, a write one
transaction that holds the caller's erasure fence first (:meth:`Database.writing
<memstack.store.postgres._db.Database.writing>`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine, Sequence
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from memstack.store._sql import Row, Tx
from memstack.store.postgres._db import Database
from memstack.types import Vector

__all__ = ["PgSql", "tx"]

T = TypeVar("T")


@lru_cache(maxsize=512)
def _pg(sql: str) -> str:
    """``?`` → ``%s`` (and a literal ``%`` doubled); the neutral SQL never holds a ``?`` of its own."""
    return sql.replace("%", "%%").replace("?", "%s")


class _Tx:
    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self._conn = conn

    async def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        return (await self._conn.execute(_pg(sql), args)).rowcount

    async def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None:
        return await (await self._conn.execute(_pg(sql), args)).fetchone()

    async def all(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        return await (await self._conn.execute(_pg(sql), args)).fetchall()

    async def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            async with self._conn.cursor() as cur:
                await cur.executemany(_pg(sql), rows)


def tx(conn: psycopg.AsyncConnection[Any]) -> Tx:
    """``conn``, inside the caller's transaction, as a :class:`~memstack.store._sql.Tx` (what this backend's own
    writes hand to a neutral helper)."""
    return _Tx(conn)


class PgSql:
    """The neutral roles' way into the PostgreSQL store (:mod:`memstack.store._sql`)."""

    key = "seq"
    rowid = "seq"
    binary = ' COLLATE "C"'
    for_update = " FOR UPDATE"

    def __init__(self, db: Database) -> None:
        self._db = db

    def when(self, value: Any) -> Any:
        return value

    def json(self, value: Any) -> Any:
        return Jsonb(value)

    def unjson(self, value: Any) -> Any:
        return value

    def json_text(self, text: str) -> Any:
        return Jsonb(json.loads(text))

    def vector(self, value: Any) -> Vector:
        return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value, dtype=np.float32)

    def embedding(self, vector: Vector) -> Any:
        return self._db.vector_param(vector)

    def texts(self, items: Sequence[str]) -> Any:
        return list(items)

    def terms(self, terms: Sequence[str]) -> Any:
        return list(terms)

    def among(self, column: str) -> str:
        return f"{column} = ANY(?)"

    def values(self, items: Sequence[Any]) -> Any:
        return list(items)

    async def all(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        async with self._db.connection() as conn:
            return await _Tx(conn).all(sql, args)

    async def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None:
        async with self._db.connection() as conn:
            return await _Tx(conn).one(sql, args)

    async def mapped(self, sql: str, args: Sequence[Any], convert: Callable[[Row], T]) -> list[T]:
        return [convert(r) for r in await self.all(sql, args)]

    async def execute(self, sql: str, args: Sequence[Any] = (), *, fenced: bool = True) -> int:
        return await self.write(lambda tx: tx.execute(sql, args), fenced=fenced, single=True)

    async def read(self, body: Callable[[Tx], Coroutine[Any, Any, T]], *, snapshot: bool = True) -> T:
        async with self._db.connection() as conn:
            if not snapshot:
                return await body(_Tx(conn))
            async with conn.transaction():
                return await body(_Tx(conn))

    async def write(
        self, body: Callable[[Tx], Coroutine[Any, Any, T]], *, fenced: bool = True, single: bool = False
    ) -> T:
        if fenced:
            async with self._db.writing(single=single) as conn:
                return await body(_Tx(conn))
        async with self._db.connection() as conn:
            if single:
                return await body(_Tx(conn))
            async with conn.transaction():
                return await body(_Tx(conn))
