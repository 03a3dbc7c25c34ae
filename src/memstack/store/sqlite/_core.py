"""State shared by the SQLite store's roles: the database thread, the vector index, and knowing when it is stale.

Cache correctness: the store's own writes update the cache right after they commit, on the database thread, in
commit order. Writes by other processes are detected with ``PRAGMA data_version``: a second "watch" connection
(which runs nothing else, and never waits for a lock) tells the event loop cheaply that *something* committed; the
database thread then asks its own connection, whose ``data_version`` moves only for other connections' commits,
and clears the cache if so.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from memstack.errors import ConfigError, NotFound, StoreError
from memstack.store._checks import COLUMNS
from memstack.store.fence import NEVER_ERASED, erasure_key
from memstack.store.fence import current as current_fence
from memstack.store.sqlite._db import Database, data_version, is_busy, map_error, transaction
from memstack.store.sqlite._rows import memory_from_row, to_ts
from memstack.store.vectors.cache import CachedVectors
from memstack.types import Memory, UserRef, check_id

__all__ = ["COUNT", "FETCH", "Core", "erasure_epoch", "fetched", "opt_ts"]

T = TypeVar("T")

#: One memory of a user (id, tenant, user_id) with its embedding, its primary key first: :func:`fetched`.
FETCH = f"SELECT pk, {COLUMNS}, embedding FROM memories WHERE id = ? AND tenant = ? AND user_id = ?"
#: A user's active memories (tenant, user_id).
COUNT = "SELECT COUNT(*) FROM memories WHERE tenant = ? AND user_id = ? AND is_active = 1"


def fetched(row: tuple[Any, ...] | None, memory_id: str) -> tuple[int, Memory]:
    """A row of :data:`FETCH` as its primary key and memory; ``NotFound`` when there was none."""
    if row is None:
        raise NotFound("memory", memory_id)
    return int(row[0]), memory_from_row(row[1:-1], row[-1])


def opt_ts(value: datetime | None) -> str | None:
    return to_ts(value) if value is not None else None


def erasure_epoch(conn: sqlite3.Connection, user: UserRef) -> int:
    """Database thread: the user's erasure epoch (:mod:`memstack.store.fence`; ``0`` when never erased)."""
    row = conn.execute("SELECT epoch FROM user_erasures WHERE key = ?", (erasure_key(user),)).fetchone()
    return NEVER_ERASED if row is None else int(row[0])


class Core:
    """The database, the embedding dimension and the vector index, shared by the roles.

    ``vectors`` is given by the store's ``index``, through which the cache reads rows; ``cache_bytes`` is the cache's
    budget."""

    vectors: CachedVectors

    def __init__(self, db: Database, *, dim: int, embedder: str, cache_mb: float) -> None:
        self.db = db
        self.dim = dim
        self.embedder = embedder
        self.cache_bytes = int(cache_mb * 1024 * 1024)
        self.watch_seen = -1
        self.main_seen = -1
        self.calls = 0
        self._watch: sqlite3.Connection | None = None
        self._watch_lock = threading.Lock()

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` on the database thread."""
        self.calls += 1
        return await self.db.run(fn)

    def write(self, conn: sqlite3.Connection, body: Callable[[sqlite3.Connection], T], *, fenced: bool = True) -> T:
        """Database thread: ``body`` in a write transaction, after catching up with other processes' commits.

        Under an erasure fence (:mod:`memstack.store.fence`) the transaction first checks that the fenced user was
        not erased since the fence was pinned (``UserErased``, nothing written). ``fenced=False``: writes that
        cannot carry a user's data back (a lease renewed or given back)."""
        with transaction(conn, write=True):
            self.note_foreign(conn)
            fence = current_fence() if fenced else None
            if fence is not None and fence.epoch is not None:
                fence.check(erasure_epoch(conn, fence.user))
            return body(conn)

    # -- other processes' writes ----------------------------------------------------------------------------------

    def open_watch(self) -> None:
        # Opened like every connection, waiting out a lock held at that moment (another process converting a new
        # file to WAL, or checkpointing as its last connection closes). Afterwards it is used from the event loop,
        # so it never waits (busy timeout 0): when SQLite answers busy (rare in WAL mode: recovery, a checkpoint
        # resetting the log) the database thread, which waits, takes over.
        watch = self.db.connect(check_same_thread=False)
        watch.execute("PRAGMA busy_timeout = 0")
        self._watch = watch

    def close_watch(self) -> None:
        with self._watch_lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None

    def note_foreign(self, conn: sqlite3.Connection) -> bool:
        """Database thread: clear the cache if another connection committed since this one last looked."""
        version = data_version(conn)
        if version == self.main_seen:
            return False
        self.vectors.invalidate()
        self._check_model(conn)  # raises again on every later call: ``main_seen`` stays behind
        self.main_seen = version
        return True

    def _check_model(self, conn: sqlite3.Connection) -> None:
        """Database thread: refuse to go on once another process switched the file to another embedding model
        (``memstack reembed``): its vectors no longer fit this process's queries."""
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('embedder', 'dim')").fetchall())
        if meta.get("embedder") == self.embedder and meta.get("dim") == str(self.dim):
            return
        raise ConfigError(
            f"{self.db.path} was switched to the embedder {meta.get('embedder')!r} ({meta.get('dim')}-d) by "
            f"`memstack reembed` while this process was using {self.embedder!r} ({self.dim}-d); restart it with "
            f"MEMSTACK_EMBEDDER={meta.get('embedder')}"
        )

    def watch_version(self) -> int | None:
        """Any thread: moves whenever anyone (this store included) committed since the last call; ``None`` when
        the database is momentarily busy."""
        with self._watch_lock:
            if self._watch is None:
                raise StoreError(f"the store on {self.db.path} is closed; open it again")
            try:
                return data_version(self._watch)
            except sqlite3.Error as exc:
                if is_busy(exc):
                    return None
                raise map_error(exc, self.db.path, self.db.busy_timeout_s) from None

    def is_fresh(self) -> bool:
        """Event loop: true when nothing was committed since the last :meth:`sync` (the cache can be trusted)."""
        version = self.watch_version()
        return version is not None and version == self.watch_seen

    def sync(self, conn: sqlite3.Connection) -> None:
        """Database thread: catch up with other processes' commits, then trust the cache again."""
        # The watch version is read first: a commit landing after it moves it again and brings us back here.
        seen = self.watch_version()
        self.note_foreign(conn)
        self.watch_seen = seen if seen is not None else -1

    # -- rows -------------------------------------------------------------------------------------------------------

    def fetch(self, conn: sqlite3.Connection, user: UserRef, memory_id: str) -> tuple[int, Memory]:
        """Database thread: one memory of ``user`` (with its embedding) and its primary key, else ``NotFound``."""
        check_id(memory_id, "memory id")
        return fetched(conn.execute(FETCH, (memory_id, user.tenant, user.user_id)).fetchone(), memory_id)

    @staticmethod
    def count(conn: sqlite3.Connection, user: UserRef) -> int:
        return int(conn.execute(COUNT, (user.tenant, user.user_id)).fetchone()[0])
