"""``SQLiteStore``: the embedded default backend (one WAL file, FTS5, numpy vector search over an LRU cache).

Every statement runs on one database thread. The roles of the :class:`~memstack.store.base.Store` protocol: the
backend-neutral ones over :class:`SQLiteSql` (``contexts``, ``threads``, ``drops``, ``keys``, ``agents``,
``idempotency``: :class:`~memstack.store._roles.SharedRoles`), and this backend's own ``memories`` (writes),
``index`` (reads), ``jobs``, ``sessions`` and ``archive``, ``archive_vectors``, ``users`` (export and erasure) and
``hidden``, sharing one :class:`~memstack.store.sqlite._core.Core` (connection, caches, staleness checks).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from memstack.errors import ConfigError, StoreUnavailable
from memstack.store._roles import SharedRoles
from memstack.store.leases import DEFAULT_SESSION_LEASE_S
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._db import Database
from memstack.store.sqlite._index import SQLiteIndex
from memstack.store.sqlite._memories import SQLiteMemories
from memstack.store.sqlite._schema import check_embedder, migrate
from memstack.store.sqlite._sql import SQLiteSql
from memstack.store.sqlite.archive_vectors import SQLiteArchiveVectors
from memstack.store.sqlite.hidden import SQLiteHidden
from memstack.store.sqlite.jobs import SQLiteJobs
from memstack.store.sqlite.sessions import SQLiteSessionArchive, SQLiteSessions
from memstack.store.sqlite.users import SQLiteUserData, finish_purges, prune_erasures
from memstack.store.vectors.cache import CachedVectors

__all__ = ["SQLiteStore", "StoreStats"]


@dataclass(frozen=True, slots=True)
class StoreStats:
    """What the caches hold and how often the database thread was used (diagnostics and tests)."""

    cached_users: int
    cached_bytes: int
    database_calls: int


class SQLiteStore(SharedRoles):
    """Memories in one SQLite file. Create with ``await SQLiteStore.open(path, dim=..., embedder=...)``."""

    def __init__(self, core: Core, *, lease_s: float = DEFAULT_SESSION_LEASE_S) -> None:
        self._core = core
        super().__init__(SQLiteSql(core))
        self.dim = core.dim
        self.embedder = core.embedder
        self.memories = SQLiteMemories(core)
        self.index = SQLiteIndex(core)
        self.search_index = self.index  # what answers searches: the index itself (one file has no replica)
        self.jobs = SQLiteJobs(core)
        self.sessions = SQLiteSessions(core, lease_s=lease_s)
        self.archive = SQLiteSessionArchive(core)
        self.archive_vectors = SQLiteArchiveVectors(core)
        self.users = SQLiteUserData(core)
        self.hidden = SQLiteHidden(core)

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        dim: int,
        embedder: str,
        cache_mb: float = 512,
        busy_timeout_s: float = 5.0,
        lease_s: float = DEFAULT_SESSION_LEASE_S,
    ) -> SQLiteStore:
        """Open the database at ``path``, creating and migrating it as needed.

        ``dim`` and ``embedder`` are recorded on first use; another model later raises ``ConfigError``.
        ``cache_mb`` bounds the memories and vectors kept in memory for search (about ``4 * dim + 500`` bytes
        per memory); ``busy_timeout_s`` is how long a write waits for another process's write lock before raising
        ``StoreBusy``; ``lease_s`` how long a session stays held by a turn without renewal
        (:mod:`memstack.store.leases`)."""
        if dim < 1:
            raise ConfigError(f"embedding dimension must be positive, got {dim}")
        path = Path(path)
        try:
            _private(path)
        except OSError as exc:
            raise StoreUnavailable(
                f"cannot create {path.parent} for the database ({exc.strerror}); "
                "set MEMSTACK_HOME to a writable directory"
            ) from None
        db = Database(path, busy_timeout_s=busy_timeout_s)
        await db.start()
        store = cls(Core(db, dim=dim, embedder=embedder, cache_mb=cache_mb), lease_s=lease_s)
        try:
            await db.run(store._setup)
        except BaseException:
            await store.close()
            raise
        return store

    def _setup(self, conn: sqlite3.Connection) -> None:
        migrate(conn, self.path)
        check_embedder(conn, self.path, embedder=self._core.embedder, dim=self._core.dim)
        finish_purges(conn)  # an erasure whose process died before it emptied the write-ahead log
        prune_erasures(conn)
        self._core.open_watch()
        self._core.sync(conn)

    @property
    def vectors(self) -> CachedVectors:
        return self._core.vectors

    @property
    def path(self) -> Path:
        return self._core.db.path

    @property
    def stats(self) -> StoreStats:
        cache = self._core.vectors.cache
        return StoreStats(len(cache), cache.nbytes, self._core.calls)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connections and stop the database thread; safe to call twice."""
        await self.sessions.close()
        self._core.close_watch()
        await self._core.db.close()
        await self._core.vectors.close()


def _private(path: Path) -> None:
    """Create the database's directory (0700) and file (0600) readable by this user only: they hold what users said.
    SQLite gives its ``-wal`` and ``-shm`` files the database file's mode. An existing directory keeps its mode."""
    if not path.parent.exists():
        path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
        os.chmod(path.parent, 0o700)  # mkdir's mode is masked by the umask
    if not path.exists():
        path.touch(mode=0o600)
        os.chmod(path, 0o600)
