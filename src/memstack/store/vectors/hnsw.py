"""HNSW indexes for very large users, which users have one, and what pgvector must be for them.

The decisions behind PostgreSQL's vector index (:mod:`memstack.store.vectors.pgvector`), whose statements follow them.

Plan choice is deliberate, never left to the plan cache:

- An ordinary user (fewer active memories than ``threshold``) is searched exactly: the partial btree finds the
  user's rows and every distance is computed, which for a few thousand 384-d vectors is well under a millisecond
  to a few milliseconds and is always exactly the top k.
- A user who reaches ``threshold`` gets an HNSW index of their own: a partial index
  ``hnsw (embedding vector_cosine_ops) WHERE tenant = … AND user_id = … AND is_active``, built in bulk with
  ``CREATE INDEX CONCURRENTLY`` (no table lock; bulk builds are several times faster than growing a graph row by
  row, and a per-user graph needs no post-filtering by user). The user is then recorded in ``memory_ann_indexes``
  and searched through that index with iterative scans on; rows added later are inserted into it incrementally.

Ordinary users never pay for HNSW maintenance on insert, and one global graph holding every user's rows (which a
filtered scan would have to wade through) never exists. Whether a user has an index is cached per user in-process
(an index for good, none for ``cache_ttl_s``); when this process does not know, the exact statement brings the
answer back with its rows, so a search is still one statement. A stale answer is harmless: an exact search is
still exact, only slower.

Builds are serialised per user across processes with a session advisory lock; a build that died half-way leaves
an invalid index, which the next build drops first. An erasure drops the user's index in its own transaction
(:func:`drop_index`).

The schema this needs is written here too: pgvector 0.8 or later (:func:`ensure_pgvector`; iterative index scans
keep filtered HNSW searches from returning fewer than k rows) and the ``memory_ann_indexes`` table
(:data:`ANN_INDEXES`, in migration ``0001_memories``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import time
from collections import OrderedDict
from dataclasses import dataclass
from functools import partial

import psycopg
from psycopg import sql

from memstack.errors import ConfigError, MemstackError, StoreUnavailable
from memstack.store.fence import Fence, user_lock_key
from memstack.store.vectors._pg import Conn, Fencing, Pool
from memstack.types import UserRef

__all__ = ["ANN_INDEXES", "MIN_PGVECTOR", "AnnIndexes", "AnnSettings", "drop_index", "ensure_pgvector", "index_name"]

_log = logging.getLogger("memstack.store.postgres")
_MAX_CACHED_USERS = 100_000


@dataclass(frozen=True, slots=True)
class AnnSettings:
    """When a user gets an HNSW index and how it is built and searched.

    ``threshold``: active memories at which a user's own index is built (below it, exact search is as fast).
    ``m``, ``ef_construction``: HNSW build parameters. ``ef_search``: candidate list per search (recall vs time).
    ``build_memory``: ``maintenance_work_mem`` for a build (the graph should fit). ``cache_ttl_s``: how long this
    process trusts that a user has no index (another process may build one meanwhile).

    The archive's recall (:mod:`memstack.store.vectors.archive`): a user with at most ``archive_scan_max``
    archived messages has them all read and ranked; a larger one has candidates found, among them the
    ``archive_nearest`` nearest by vector, exactly up to ``archive_exact_max`` messages, through the HNSW index
    over every archived message above.
    """

    threshold: int = 10_000
    m: int = 16
    ef_construction: int = 64
    ef_search: int = 100
    build_memory: str = "1GB"
    cache_ttl_s: float = 300.0
    archive_scan_max: int = 1_000
    archive_nearest: int = 100
    archive_exact_max: int = 20_000

    def __post_init__(self) -> None:
        if self.threshold < 1:
            raise ConfigError(f"ann threshold must be at least 1 memory, got {self.threshold}")
        if not 2 <= self.m <= 100 or not 4 <= self.ef_construction <= 1000 or not 1 <= self.ef_search <= 1000:
            raise ConfigError(
                f"HNSW settings out of range (m={self.m}, ef_construction={self.ef_construction}, "
                f"ef_search={self.ef_search}); pgvector allows m 2-100, ef_construction 4-1000, ef_search 1-1000"
            )
        if self.archive_scan_max < 0 or self.archive_nearest < 1 or self.archive_exact_max < 0:
            raise ConfigError(
                "archive_scan_max and archive_exact_max must be zero or more and archive_nearest at least 1, got "
                f"{self.archive_scan_max}, {self.archive_exact_max} and {self.archive_nearest}"
            )


#: pgvector 0.8 brought iterative index scans, which keep filtered HNSW searches from returning fewer than k rows.
MIN_PGVECTOR = (0, 8)

#: The users who have their own HNSW index (part of migration ``0001_memories``).
ANN_INDEXES = """
    CREATE TABLE memory_ann_indexes (
        tenant text NOT NULL,
        user_id text NOT NULL,
        index_name text NOT NULL UNIQUE,
        active_at_build bigint NOT NULL,
        built_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant, user_id)
    )
"""


async def ensure_pgvector(conn: Conn, where: str) -> None:
    """Install pgvector in the database if it is not (needs the rights to), and refuse one older than 0.8."""
    install = (
        "memstack needs the pgvector extension, version 0.8 or later: install it on the server "
        "(https://github.com/pgvector/pgvector#installation), then run CREATE EXTENSION vector in this database "
        "as a superuser or the database owner"
    )
    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreUnavailable(f"cannot use pgvector in {where} ({reason}); {install}") from None
    row = await (await conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).fetchone()
    version = str(row[0]) if row else "0"
    parts = tuple(int(p) if p.isdigit() else 0 for p in version.split(".")[:2])
    if parts < MIN_PGVECTOR:
        raise StoreUnavailable(
            f"{where} has pgvector {version}, but memstack needs 0.8 or later for iterative index scans; "
            "install a newer pgvector on the server and run ALTER EXTENSION vector UPDATE"
        )


async def drop_index(conn: Conn, user: UserRef) -> int:
    """In an erasure's transaction: drop the user's HNSW index if there is one; how many were dropped."""
    name = index_name(user)
    cur = await conn.execute(b"SELECT count(*) FROM pg_class WHERE relname = %s AND relkind = 'i'", (name,))
    row = await cur.fetchone()
    dropped = int(row[0]) if row else 0
    if dropped:
        await conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))
    return dropped


def index_name(user: UserRef) -> str:
    digest = hashlib.blake2b(f"{user.tenant}\x1f{user.user_id}".encode(), digest_size=8).hexdigest()
    return f"memories_ann_{digest}"


class AnnIndexes:
    """Knows (and caches) which users have an HNSW index, and builds them on ``db`` under the store's erasure
    ``fencing`` (an erasure of the user during a build leaves no index behind)."""

    def __init__(self, db: Pool, settings: AnnSettings, fencing: Fencing) -> None:
        self._db = db
        self._fencing = fencing
        self.settings = settings
        self._known: OrderedDict[tuple[str, str], tuple[str | None, float]] = OrderedDict()
        self._building: dict[tuple[str, str], asyncio.Task[str | None]] = {}
        self._warned = False
        self.builds = 0

    def cached(self, user: UserRef) -> tuple[bool, str | None]:
        """(whether this process knows, the user's index name or ``None``) without asking the database."""
        entry = self._known.get((user.tenant, user.user_id))
        if entry is None or entry[1] < time.monotonic():
            return False, None
        return True, entry[0]

    def indexed(self, user: UserRef) -> bool:
        """Known (in this process) to have an index."""
        return self.cached(user)[1] is not None

    def remember(self, user: UserRef, name: str | None) -> None:
        """Note what is known of the user's index: that they have none for ``cache_ttl_s`` (another process may
        build one), that they have one for good (the store never drops them)."""
        key = (user.tenant, user.user_id)
        self._known[key] = (name, time.monotonic() + self.settings.cache_ttl_s if name is None else math.inf)
        self._known.move_to_end(key)
        while len(self._known) > _MAX_CACHED_USERS:
            self._known.popitem(last=False)

    async def lookup(self, user: UserRef) -> str | None:
        """The name of the user's HNSW index, or ``None`` when they are searched exactly."""
        known, name = self.cached(user)
        if known:
            return name
        async with self._db.connection() as conn:
            cur = await conn.execute(
                "SELECT index_name FROM memory_ann_indexes WHERE tenant = %s AND user_id = %s",
                (user.tenant, user.user_id),
            )
            row = await cur.fetchone()
        found = str(row[0]) if row else None
        self.remember(user, found)
        return found

    def note_active(self, user: UserRef, active: int) -> bool:
        """After a committed write, with the user's active count: is an index due (one this process has not seen
        built)? A user below the threshold is remembered as searched exactly, saving a lookup on their next search
        (even if an index of theirs exists from when they were larger: at this size exact search is as fast)."""
        known, name = self.cached(user)
        if active >= self.settings.threshold:
            return name is None
        if not known:
            self.remember(user, None)
        return False

    async def ensure(self, user: UserRef) -> str | None:
        """Build the user's index unless it exists (or another process is building it); return its name.

        A failed build is logged and leaves the user on exact search: the rows that led to it are committed."""
        try:
            return await asyncio.shield(self._task(user))
        except MemstackError:
            return None

    async def wait(self, user: UserRef) -> None:
        """Wait for the build of the user's index in flight, if any (a failed one was logged: exact search)."""
        task = self._building.get((user.tenant, user.user_id))
        if task is not None:
            with contextlib.suppress(MemstackError):
                await asyncio.shield(task)

    def invalidate(self, user: UserRef | None = None) -> None:
        """Forget what was cached about ``user`` (``None``: everyone); the next search asks the database."""
        if user is None:
            self._known.clear()
        else:
            self._known.pop((user.tenant, user.user_id), None)

    def schedule(self, user: UserRef) -> None:
        """Build the user's index in the background (a chat request that crossed the threshold does not wait)."""
        self._task(user)

    def _task(self, user: UserRef) -> asyncio.Task[str | None]:
        key = (user.tenant, user.user_id)
        task = self._building.get(key)
        if task is None:
            task = asyncio.create_task(self._build(user), name=f"memstack-build-{index_name(user)}")
            self._building[key] = task
            task.add_done_callback(partial(self._done, user))
        return task

    def _done(self, user: UserRef, task: asyncio.Task[str | None]) -> None:
        self._building.pop((user.tenant, user.user_id), None)
        if not task.cancelled() and (exc := task.exception()) is not None:
            _log.warning("building the HNSW index of %s/%s failed; searches stay exact: %s", *_who(user), exc)

    async def forget(self, user: UserRef) -> None:
        """The user was erased: stop a build of their index in flight and forget what was cached about them."""
        key = (user.tenant, user.user_id)
        task = self._building.pop(key, None)
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self._known.pop(key, None)

    async def drain(self) -> None:
        """Wait for the builds in flight (graceful shutdown, tests, benchmarks)."""
        while self._building:
            await asyncio.gather(*list(self._building.values()), return_exceptions=True)

    async def close(self) -> None:
        """Stop builds in flight (an interrupted build is dropped and redone by the next one)."""
        tasks = list(self._building.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._known.clear()

    async def _build(self, user: UserRef) -> str | None:
        try:
            async with self._db.session() as conn:
                name = await self._build_on(conn, user)
        except ConfigError as exc:  # behind a transaction pooler with no direct URL: exact search, said once
            if not self._warned:
                self._warned = True
                _log.warning("very large users stay on exact search: %s", exc)
            return None
        if name is not None:
            self.remember(user, name)
        return name

    async def _build_on(self, conn: Conn, user: UserRef) -> str | None:
        """The build on a connection that is one server session (the advisory lock spans statements)."""
        name = index_name(user)
        lock = user_lock_key(user, "ann")
        s = self.settings
        cur = await conn.execute("SELECT pg_try_advisory_lock(%s)", (lock,))
        row = await cur.fetchone()
        if not row or not row[0]:
            return None  # another process is building it; this one keeps searching exactly for now
        try:
            cur = await conn.execute(
                "SELECT tenant, user_id, index_name FROM memory_ann_indexes "
                "WHERE (tenant = %s AND user_id = %s) OR index_name = %s",
                (user.tenant, user.user_id, name),
            )
            for tenant, user_id, registered in await cur.fetchall():
                if (tenant, user_id) == (user.tenant, user.user_id):
                    return str(registered)
                _log.warning("%s indexes %s/%s; %s/%s stays on exact search", name, tenant, user_id, *_who(user))
                return None
            # Pinned before the build reads the user's rows: an erasure of the user meanwhile leaves no index behind.
            fence = Fence(user, await self._fencing.erasure_epoch(conn, user))
            # An index under this name that is not registered is a build that died half-way: start again.
            await conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name)))
            started = time.perf_counter()
            await conn.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(s.build_memory)))
            await conn.execute(
                sql.SQL(
                    "CREATE INDEX CONCURRENTLY {name} ON memories USING hnsw (embedding vector_cosine_ops) "
                    "WITH (m = {m}, ef_construction = {efc}) "
                    "WHERE tenant = {tenant} AND user_id = {user} AND is_active"
                ).format(
                    name=sql.Identifier(name),
                    m=sql.Literal(s.m),
                    efc=sql.Literal(s.ef_construction),
                    tenant=sql.Literal(user.tenant),
                    user=sql.Literal(user.user_id),
                )
            )
            try:
                async with conn.transaction():
                    await self._fencing.enter_fence(conn, fence)
                    await conn.execute(
                        "INSERT INTO memory_ann_indexes (tenant, user_id, index_name, active_at_build) "
                        "SELECT %s, %s, %s, count(*) FROM memories WHERE tenant = %s AND user_id = %s AND is_active "
                        "ON CONFLICT DO NOTHING",
                        (user.tenant, user.user_id, name, user.tenant, user.user_id),
                    )
            except psycopg.Error as exc:
                if getattr(exc, "sqlstate", None) != self._fencing.USER_ERASED:
                    raise
                await conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name)))
                _log.info("%s/%s was erased while their HNSW index was built; the index was dropped", *_who(user))
                return None
            self.builds += 1
            _log.info("built %s for %s/%s in %.1f s", name, *_who(user), time.perf_counter() - started)
            return name
        finally:
            if not conn.broken:  # a broken connection took its session lock with it
                await conn.execute("RESET maintenance_work_mem")
                await conn.execute("SELECT pg_advisory_unlock(%s)", (lock,))


def _who(user: UserRef) -> tuple[str, str]:
    return (user.tenant, user.user_id)
