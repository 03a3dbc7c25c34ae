"""``memstack reembed`` on the SQLite store (the steps are described in :mod:`memstack.store.reembed`).

Staging table (migration ``010_reembed``): ``reembed_vectors (tbl, row_id, text, embedding)``, one row per vector
re-embedded so far, keyed by source table and row id; ``text`` is what was embedded, so the switch can tell a row
edited meanwhile. The target model is the ``reembed_embedder`` / ``reembed_dim`` rows of ``meta``. The lock is an
``flock`` on ``<database>.reembed.lock`` beside the database (released by the system if the process dies).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np

from memstack.errors import ConfigError, StoreBusy, StoreUnavailable
from memstack.store._sql import Tx, drive
from memstack.store.reembed import ReembedSteps, VectorTable, vector_tables
from memstack.store.sqlite._db import Database, transaction
from memstack.store.sqlite._schema import migrate
from memstack.store.sqlite._sql import tx
from memstack.types import Vector

__all__ = ["VECTOR_TABLES", "SQLiteReembed"]

T = TypeVar("T")

#: Every table holding vectors (:func:`~memstack.store.reembed.vector_tables`).
VECTOR_TABLES = vector_tables("pk")


class SQLiteReembed(ReembedSteps):
    """The SQLite store at ``path``, opened for reembedding. Create with ``await SQLiteReembed.open(path)``."""

    meta = "meta"

    def __init__(self, db: Database, lock: IO[bytes]) -> None:
        self._db = db
        self._lock: IO[bytes] | None = lock
        self.tables: Sequence[VectorTable] = VECTOR_TABLES

    @classmethod
    async def open(cls, path: Path, *, busy_timeout_s: float = 30.0) -> SQLiteReembed:
        """Take the reembed lock and open (migrating if needed) the database; ``StoreBusy`` if another reembed
        holds the lock."""
        import fcntl

        if not path.is_file():
            raise ConfigError(
                f"there is no memstack database at {path}; set MEMSTACK_HOME (or --home) to the data directory "
                "that holds memstack.db"
            )
        lock_path = path.with_name(path.name + ".reembed.lock")
        try:
            lock = open(lock_path, "a+b")  # noqa: SIM115 (held until aclose)
        except OSError as exc:
            raise StoreUnavailable(
                f"cannot create {lock_path} ({exc.strerror}); check the directory's permissions"
            ) from None
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise StoreBusy(
                f"another `memstack reembed` is running on {path}; wait for it to finish (it resumes where it "
                "stopped if it is killed)"
            ) from None
        lock.truncate(0)
        lock.write(str(os.getpid()).encode())
        lock.flush()
        db = Database(path, busy_timeout_s=busy_timeout_s)
        try:
            await db.start()
            await db.run(lambda conn: migrate(conn, path))
        except BaseException:
            await db.close()
            lock.close()
            raise
        return cls(db, lock)

    @property
    def where(self) -> str:
        return str(self._db.path)

    async def _read(self, body: Callable[[Tx], Coroutine[Any, Any, T]]) -> T:
        def read(conn: sqlite3.Connection) -> T:
            with transaction(conn, write=False):
                return drive(body(tx(conn)))

        return await self._db.run(read)

    async def _write(self, body: Callable[[Tx], Coroutine[Any, Any, T]]) -> T:
        def write(conn: sqlite3.Connection) -> T:
            with transaction(conn, write=True):  # the write lock: nobody adds or edits rows until this commits
                return drive(body(tx(conn)))

        return await self._db.run(write)

    def _stored(self, vector: Vector) -> bytes:
        return np.asarray(vector, dtype="<f4").tobytes()

    async def _hold(self, tx: Tx) -> None:
        pass  # the switch's write transaction holds the whole file

    async def _replace(self, tx: Tx, table: VectorTable, dim: int) -> None:
        await tx.execute(
            f"UPDATE {table.name} SET {table.vector_column} = s.embedding FROM reembed_vectors AS s "
            f"WHERE s.tbl = ? AND s.row_id = {table.name}.{table.id_column}",
            (table.name,),
        )

    async def aclose(self) -> None:
        await self._db.close()
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None
