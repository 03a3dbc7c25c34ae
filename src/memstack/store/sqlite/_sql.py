"""The SQLite dialect of :class:`memstack.store._sql.Sql`: statements on the database thread, ``?`` placeholders as
they are, times stored as sortable UTC text (:func:`~memstack.store.sqlite._rows.to_ts`), JSON as text; a write
transaction is :meth:`Core.write <memstack.store.sqlite._core.Core.write>` (the erasure fence, other processes'
commits noted first)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Coroutine, Sequence
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

from memstack.store._sql import Row, Tx, drive
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._db import transaction
from memstack.store.sqlite._rows import from_ts, to_ts
from memstack.types import Vector

__all__ = ["SQLiteSql", "tx"]

T = TypeVar("T")


def _args(args: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(to_ts(a) if isinstance(a, datetime) else a for a in args)


class _Tx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        return self._conn.execute(sql, _args(args)).rowcount

    async def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None:
        row: Row | None = self._conn.execute(sql, _args(args)).fetchone()
        return row

    async def all(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        return self._conn.execute(sql, _args(args)).fetchall()

    async def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._conn.executemany(sql, [_args(r) for r in rows])


def tx(conn: sqlite3.Connection) -> Tx:
    """``conn``, on the database thread inside the caller's transaction, as a :class:`~memstack.store._sql.Tx`:
    how this backend's own code hands it to a neutral helper (``drive(helper(tx(conn), ...))``)."""
    return _Tx(conn)


class SQLiteSql:
    """The neutral roles' way into the SQLite store (:mod:`memstack.store._sql`)."""

    key = "pk"
    rowid = "rowid"
    binary = ""
    for_update = ""

    def __init__(self, core: Core) -> None:
        self._core = core

    def when(self, value: Any) -> Any:
        return from_ts(value)

    def json(self, value: Any) -> Any:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def unjson(self, value: Any) -> Any:
        return json.loads(value)

    def json_text(self, text: str) -> Any:
        return text

    def vector(self, value: Any) -> Vector:
        return np.frombuffer(value, dtype="<f4").astype(np.float32)

    def embedding(self, vector: Vector) -> Any:
        return np.asarray(vector, dtype="<f4").tobytes()

    def texts(self, items: Sequence[str]) -> Any:
        return json.dumps(list(items))

    def terms(self, terms: Sequence[str]) -> Any:
        return " ".join(terms)

    def among(self, column: str) -> str:
        return f"{column} IN (SELECT value FROM json_each(?))"

    def values(self, items: Sequence[Any]) -> Any:
        return json.dumps(list(items))

    async def all(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        return await self._core.run(lambda conn: conn.execute(sql, _args(args)).fetchall())

    async def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None:
        return await self._core.run(lambda conn: conn.execute(sql, _args(args)).fetchone())

    async def mapped(self, sql: str, args: Sequence[Any], convert: Callable[[Row], T]) -> list[T]:
        return await self._core.run(lambda conn: [convert(r) for r in conn.execute(sql, _args(args))])

    async def execute(self, sql: str, args: Sequence[Any] = (), *, fenced: bool = True) -> int:
        values = _args(args)
        return await self.write(lambda tx: tx.execute(sql, values), fenced=fenced)

    async def read(self, body: Callable[[Tx], Coroutine[Any, Any, T]], *, snapshot: bool = True) -> T:
        def run(conn: sqlite3.Connection) -> T:
            with transaction(conn, write=False):
                return drive(body(_Tx(conn)))

        return await self._core.run(run)

    async def write(
        self, body: Callable[[Tx], Coroutine[Any, Any, T]], *, fenced: bool = True, single: bool = False
    ) -> T:
        def run(conn: sqlite3.Connection) -> T:
            if fenced:
                return self._core.write(conn, lambda c: drive(body(_Tx(c))))
            with transaction(conn, write=True):  # a tenant's rows: no user's erasure concerns them
                return drive(body(_Tx(conn)))

        return await self._core.run(run)
