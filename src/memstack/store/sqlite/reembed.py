"""``memstack reembed`` on the SQLite store (the steps are described in :mod:`memstack.store.reembed`).

Staging table (migration ``010_reembed``): ``reembed_vectors (tbl, row_id, text, embedding)``, one row per vector
re-embedded so far, keyed by source table and row id; ``text`` is what was embedded, so the switch can tell a row
edited meanwhile. The target model is the ``reembed_embedder`` / ``reembed_dim`` rows of ``meta``. The lock is an
``flock`` on ``<database>.reembed.lock`` beside the database (released by the system if the process dies).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Self

import numpy as np

from memstack.errors import ConfigError, StoreBusy, StoreUnavailable
from memstack.store.reembed import ARCHIVED_TEXT, ReembedState, VectorTable, reembed_state
from memstack.store.sqlite._db import Database, transaction
from memstack.store.sqlite._schema import migrate, reembed_target
from memstack.types import Vector

__all__ = ["VECTOR_TABLES", "SQLiteReembed"]

#: Every table holding vectors: the reembed re-embeds each of them (add a table here when one is added).
VECTOR_TABLES: tuple[VectorTable, ...] = (
    VectorTable("memories", "pk", "embedding", "SELECT pk AS id, content AS text FROM memories"),
    VectorTable(  # recall's archived messages
        "archive_vectors",
        "seq",
        "embedding",
        f"SELECT v.seq AS id, {ARCHIVED_TEXT} AS text "
        "FROM archive_vectors v JOIN session_turns t ON t.pk = v.turn_pk WHERE v.embedding IS NOT NULL",
    ),
)


def _pending_sql(table: VectorTable) -> str:
    return (
        f"SELECT r.id, r.text FROM ({table.source}) AS r WHERE r.id > ? AND NOT EXISTS "
        "(SELECT 1 FROM reembed_vectors s WHERE s.tbl = ? AND s.row_id = r.id) ORDER BY r.id LIMIT ?"
    )


class SQLiteReembed:
    """The SQLite store at ``path``, opened for reembedding. Create with ``await SQLiteReembed.open(path)``."""

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

    async def state(self) -> ReembedState:
        def read(conn: sqlite3.Connection) -> ReembedState:
            with transaction(conn, write=False):
                meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('embedder', 'dim')"))
                target = reembed_target(conn)
                total = sum(int(conn.execute(f"SELECT COUNT(*) FROM ({t.source})").fetchone()[0]) for t in self.tables)
                staged = int(conn.execute("SELECT COUNT(*) FROM reembed_vectors").fetchone()[0])
            return reembed_state(meta, target, total=total, staged=staged)

        return await self._db.run(read)

    async def begin(self, embedder: str | None, dim: int | None) -> None:
        def write(conn: sqlite3.Connection) -> None:
            with transaction(conn, write=True):
                conn.execute("DELETE FROM meta WHERE key IN ('reembed_embedder', 'reembed_dim')")
                if embedder is None or dim is None:
                    conn.execute("DELETE FROM reembed_vectors")
                    return
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [("reembed_embedder", embedder), ("reembed_dim", str(dim))],
                )

        await self._db.run(write)

    async def pending(self, table: VectorTable, after: int, limit: int) -> list[tuple[int, str]]:
        sql = _pending_sql(table)

        def read(conn: sqlite3.Connection) -> list[tuple[int, str]]:
            return [(int(i), str(t)) for i, t in conn.execute(sql, (after, table.name, limit))]

        return await self._db.run(read)

    async def stage(self, table: VectorTable, rows: Sequence[tuple[int, str]], vectors: Vector) -> None:
        blobs = np.asarray(vectors, dtype="<f4")
        params = [(table.name, row_id, text, blobs[i].tobytes()) for i, (row_id, text) in enumerate(rows)]

        def write(conn: sqlite3.Connection) -> None:
            with transaction(conn, write=True):
                conn.executemany(
                    "INSERT OR REPLACE INTO reembed_vectors (tbl, row_id, text, embedding) VALUES (?, ?, ?, ?)",
                    params,
                )

        await self._db.run(write)

    async def switch(self, embedder: str, dim: int) -> bool:
        def write(conn: sqlite3.Connection) -> bool:
            with transaction(conn, write=True):  # the write lock: nobody adds or edits rows until this commits
                for t in self.tables:
                    # Staged vectors of rows deleted or edited since they were staged are dropped (edited rows are
                    # then pending again).
                    conn.execute(
                        f"DELETE FROM reembed_vectors AS s WHERE s.tbl = ? AND NOT EXISTS "
                        f"(SELECT 1 FROM ({t.source}) AS r WHERE r.id = s.row_id AND r.text = s.text)",
                        (t.name,),
                    )
                if any(conn.execute(_pending_sql(t), (-(2**63), t.name, 1)).fetchone() for t in self.tables):
                    return False
                for t in self.tables:
                    conn.execute(
                        f"UPDATE {t.name} SET {t.vector_column} = s.embedding FROM reembed_vectors AS s "
                        f"WHERE s.tbl = ? AND s.row_id = {t.name}.{t.id_column}",
                        (t.name,),
                    )
                conn.execute("DELETE FROM meta WHERE key IN ('embedder', 'dim', 'reembed_embedder', 'reembed_dim')")
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)", [("embedder", embedder), ("dim", str(dim))]
                )
                conn.execute("DELETE FROM reembed_vectors")
            return True

        return await self._db.run(write)

    async def aclose(self) -> None:
        await self._db.close()
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
