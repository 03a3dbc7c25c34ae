"""One SQLite connection and the one thread that uses it.

Every statement runs on a dedicated single-worker executor, so the event loop never waits on the database and the
connection is never shared between threads; it runs in a copy of the caller's context, so the caller's
:mod:`erasure fence <memstack.store.fence>` holds there. ``sqlite3`` errors never escape: they are mapped to the typed
tree of :mod:`memstack.errors` with a message that says what to do.

Every connection deletes securely (``PRAGMA secure_delete``): the bytes of a deleted or rewritten row are overwritten
with zeros, in its page and in pages given back to the free list, so what a user said is not left in the file after
the row is gone (an erasure then empties the write-ahead log too, :mod:`memstack.store.sqlite.users`).
"""

from __future__ import annotations

import asyncio
import contextvars
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TypeVar

from memstack.errors import InputError, MemstackError, StoreBusy, StoreError, StoreUnavailable

__all__ = ["Database", "data_version", "is_busy", "map_error", "transaction"]

T = TypeVar("T")

_BUSY_CODES = {"SQLITE_BUSY", "SQLITE_LOCKED"}
_UNAVAILABLE_CODES = {"SQLITE_CANTOPEN", "SQLITE_NOTADB", "SQLITE_CORRUPT", "SQLITE_PERM", "SQLITE_AUTH"}


def _code(exc: sqlite3.Error) -> str:
    """The primary result code (``SQLITE_BUSY`` for ``SQLITE_BUSY_SNAPSHOT``)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return "_".join(name.split("_", 2)[:2])


def is_busy(exc: sqlite3.Error) -> bool:
    return _code(exc) in _BUSY_CODES or "database is locked" in str(exc)


def map_error(exc: sqlite3.Error, path: Path, busy_timeout_s: float) -> StoreError:
    """The typed error for a ``sqlite3`` failure, saying what the user can do about it."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    code = _code(exc)
    if is_busy(exc):
        return StoreBusy(
            f"another process is writing to {path} and held the lock for more than {busy_timeout_s:g} s; "
            "try again, or stop the other writer"
        )
    if code in _UNAVAILABLE_CODES:
        return StoreUnavailable(
            f"cannot use {path} ({exc}); check that the file is a memstack database and that you may read and "
            "write it and its directory"
        )
    if code == "SQLITE_FULL":
        return StoreError(f"the disk holding {path} is full; free some space and try again (nothing was changed)")
    if code == "SQLITE_READONLY":
        return StoreError(f"{path} is read-only; check the permissions of the file and its directory")
    return StoreError(f"SQLite failed on {path}: {exc} ({name or type(exc).__name__}); nothing was changed")


@contextmanager
def transaction(conn: sqlite3.Connection, *, write: bool) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` (write: takes the write lock up front, so a busy database fails here, before any work)
    or ``BEGIN`` (a consistent read snapshot); commit on success, roll back on any error."""
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def data_version(conn: sqlite3.Connection) -> int:
    """Changes whenever another connection committed since this connection last looked (``PRAGMA data_version``)."""
    row = conn.execute("PRAGMA data_version").fetchone()
    return int(row[0])


class Database:
    """Owns the connection to ``path`` and the thread that runs every statement on it."""

    def __init__(self, path: Path, *, busy_timeout_s: float) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None

    async def start(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memstack-sqlite")
        try:
            await self.run(lambda _conn: None, connect=True)
        except BaseException:
            self._executor.shutdown(wait=False)
            self._executor = None
            raise

    def connect(self, *, check_same_thread: bool = True) -> sqlite3.Connection:
        """A new connection with memstack's settings (WAL, busy timeout, autocommit outside ``transaction``)."""
        conn = sqlite3.connect(
            self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=check_same_thread
        )
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreUnavailable(
                    f"{self.path} cannot use write-ahead logging (journal mode {mode!r}); "
                    "keep the database on a local file system"
                )
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, never corrupt
            # Checkpoint (and fsync) every 64 MB of log rather than every 4 MB: bulk inserts run about a third
            # faster; the log file is cut back to that size after each checkpoint.
            conn.execute("PRAGMA wal_autocheckpoint=16000")
            conn.execute("PRAGMA journal_size_limit=67108864")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA secure_delete=ON")
        except BaseException:
            conn.close()
            raise
        return conn

    async def run(self, fn: Callable[[sqlite3.Connection], T], *, connect: bool = False) -> T:
        """Run ``fn(connection)`` on the database thread and return its result (errors mapped)."""
        if self._executor is None:
            raise StoreError(f"the store on {self.path} is closed; open it again")
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        return await loop.run_in_executor(self._executor, partial(context.run, self._call, fn, connect))

    def _call(self, fn: Callable[[sqlite3.Connection], T], connect: bool) -> T:
        try:
            if connect:
                self._conn = self.connect()
            if self._conn is None:
                raise StoreError(f"the store on {self.path} is closed; open it again")
            return fn(self._conn)
        except MemstackError:
            raise
        except sqlite3.Error as exc:
            raise map_error(exc, self.path, self.busy_timeout_s) from None
        except UnicodeEncodeError:  # a lone surrogate; the shared checks (memstack.types.check_text) come first
            raise InputError("the text has a lone surrogate, which cannot be stored; nothing was changed") from None

    async def close(self) -> None:
        if self._executor is None:
            return
        try:
            await self.run(self._close_conn)
        finally:
            self._executor.shutdown(wait=True)
            self._executor = None

    def _close_conn(self, conn: sqlite3.Connection) -> None:
        self._conn = None
        conn.close()
