"""``PostgresStore``: the production backend (PostgreSQL + pgvector through a psycopg 3 async pool).

The roles of the :class:`~memstack.store.base.Store` protocol: the backend-neutral ones over :class:`PgSql`
(``contexts``, ``threads``, ``drops``, ``keys``, ``agents``, ``idempotency``:
:class:`~memstack.store._roles.SharedRoles`), and this backend's own ``memories`` (writes), ``index`` (reads),
``jobs``, ``sessions`` and ``archive`` (whose per-session lock is a lease row: :mod:`memstack.store.postgres.leases`),
``archive_vectors``, ``users`` (export and erasure) and ``hidden``. They share the pool, and ``memories``, ``index``
and ``users`` the vector index (:class:`~memstack.store.vectors.pgvector.PgVectors`, with its per-user HNSW index
bookkeeping: :class:`~memstack.store.vectors.hnsw.AnnIndexes`).
"""

from __future__ import annotations

from typing import Self

import psycopg
from psycopg.types import TypeInfo

from memstack.errors import ConfigError, StoreUnavailable
from memstack.store._roles import SharedRoles
from memstack.store.leases import DEFAULT_SESSION_LEASE_S
from memstack.store.postgres import _fence
from memstack.store.postgres._db import Database, VectorCodec, connect, describe_url, map_error
from memstack.store.postgres._index import PgIndex
from memstack.store.postgres._memories import PgMemories
from memstack.store.postgres._rows import memory_from_row
from memstack.store.postgres._schema import prepare
from memstack.store.postgres._sql import PgSql
from memstack.store.postgres.archive_vectors import PgArchiveVectors
from memstack.store.postgres.hidden import PgHidden
from memstack.store.postgres.jobs import PgJobs
from memstack.store.postgres.sessions import PgSessionArchive, PgSessions
from memstack.store.postgres.users import PgUserData
from memstack.store.vectors.archive import ArchiveSearch
from memstack.store.vectors.hnsw import AnnIndexes, AnnSettings
from memstack.store.vectors.pgvector import PgVectors

__all__ = ["PostgresStore"]


class PostgresStore(SharedRoles):
    """Memories in PostgreSQL. Create with ``await PostgresStore.open(url, dim=..., embedder=...)``."""

    def __init__(
        self,
        db: Database,
        *,
        dim: int,
        embedder: str,
        ann: AnnSettings,
        lease_s: float = DEFAULT_SESSION_LEASE_S,
        replica: Database | None = None,
    ) -> None:
        self._db = db
        super().__init__(PgSql(db))
        self.dim = dim
        self.embedder = embedder
        self._ann = AnnIndexes(db, ann, _fence)  # the index is handed the backend's fence and rows: it imports neither
        self.vectors = PgVectors(db, self._ann, memory_from_row)
        self.memories = PgMemories(db, self.vectors, dim)
        self.index = PgIndex(db, self.vectors, dim)
        self._replica = replica
        # What answers searches: the read replica's index when ``read_url`` was given (its results may lag the
        # primary by the replication delay), else the index itself. Both search through the same HNSW bookkeeping.
        self.search_index = (
            PgIndex(replica, PgVectors(replica, self._ann, memory_from_row), dim) if replica is not None else self.index
        )
        self.jobs = PgJobs(db)
        self.sessions = PgSessions(db, lease_s=lease_s)
        self.archive = PgSessionArchive(db)
        self.archive_vectors = PgArchiveVectors(db, dim, ArchiveSearch(db, dim, ann))
        self.users = PgUserData(db, self.vectors, dim)
        self.hidden = PgHidden(db)

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        dim: int,
        embedder: str,
        pool_size: int = 10,
        timeout_s: float = 10.0,
        ann: AnnSettings | None = None,
        vector_codec: VectorCodec = "binary",
        lease_s: float = DEFAULT_SESSION_LEASE_S,
        pooler: str = "none",
        direct_url: str | None = None,
        read_url: str | None = None,
    ) -> PostgresStore:
        """Connect, install pgvector if needed, migrate (under an advisory lock) and check the embedding model.

        ``dim`` and ``embedder`` are recorded on first use; another model later raises ``ConfigError``.
        ``pool_size`` bounds the connections; ``timeout_s`` bounds connecting and waiting for a free connection.
        ``ann`` sets when a user gets their own HNSW index and how it is searched (:class:`AnnSettings`).
        ``lease_s``: how long a session stays held by a turn without renewal (:mod:`memstack.store.leases`).
        ``pooler="transaction"``: ``url`` goes through a transaction-pooling pooler such as PgBouncer (no prepared
        statements, settings per transaction); ``direct_url`` then reaches PostgreSQL itself, for the few things that
        need a session of their own (see :mod:`memstack.store.postgres._db`). ``read_url``: a read replica (through
        the same kind of pooler) that answers searches (:attr:`search_index`); every write, and every read a write
        depends on (the dedup check, the tier limit), stays on ``url``.
        Raises ``StoreUnavailable`` (server down, bad URL, pgvector missing) with what to do about it."""
        if dim < 1:
            raise ConfigError(f"embedding dimension must be positive, got {dim}")
        if vector_codec not in ("binary", "text"):
            raise ConfigError(f"vector_codec must be 'binary' or 'text', got {vector_codec!r}")
        if pooler not in ("none", "transaction"):
            raise ConfigError(f"pooler must be 'none' or 'transaction' (PgBouncer's pool_mode), got {pooler!r}")
        settings = ann or AnnSettings()
        where = describe_url(url)
        conn = await connect(url, timeout_s=timeout_s)
        try:
            await prepare(conn, dim=dim, embedder=embedder, where=where)
            info = await TypeInfo.fetch(conn, "vector")
        except psycopg.Error as exc:
            raise map_error(exc, where) from None
        finally:
            await conn.close()
        if info is None:
            raise StoreUnavailable(f"the pgvector type 'vector' is not visible in {where}; check the search_path")

        def database(target: str) -> Database:
            return Database(
                target,
                vector_info=info,
                pool_size=pool_size,
                timeout_s=timeout_s,
                ef_search=settings.ef_search,
                codec=vector_codec,
                pooler="transaction" if pooler == "transaction" else "none",
                direct_url=direct_url,
            )

        db = database(url)
        await db.open()
        replica = None
        if read_url is not None:
            replica = database(read_url)
            try:
                await replica.open()
            except BaseException:
                await db.close()
                raise
        return cls(db, dim=dim, embedder=embedder, ann=settings, lease_s=lease_s, replica=replica)

    def pool_stats(self) -> dict[str, int]:
        """The connection pool's counters (psycopg_pool's ``get_stats``: ``pool_max``, ``pool_size``,
        ``requests_num``, ``requests_wait_ms``, ``connections_num``…), for diagnostics and benchmarks."""
        return dict(self._db.pool.get_stats())

    async def setting(self, name: str) -> str:
        """A server setting as the store's connections see it (e.g. ``hnsw.iterative_scan``), for diagnostics."""
        async with self._db.connection() as conn:
            cur = await conn.execute("SELECT current_setting(%s, true)", (name,))
            row = await cur.fetchone()
        return str(row[0]) if row and row[0] is not None else ""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop index builds in flight and close the pools; safe to call twice."""
        await self.vectors.close()
        await self.sessions.close()
        await self._db.close()
        if self._replica is not None:
            await self._replica.close()
