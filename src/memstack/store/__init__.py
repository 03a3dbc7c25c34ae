"""Storage backends behind the protocols of :mod:`memstack.store.base`.

``open_store(config, dim=..., embedder=...)`` picks SQLite (embedded default) or PostgreSQL from
``config.database_url``; backends are imported lazily. ``open_reembed(config)`` opens the same store for
``memstack reembed`` (:mod:`memstack.store.reembed`). Only this module names the backends: the backend-neutral
modules beside it are handed what they need, so imports point one way (backends → neutral modules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstack.config import Config
from memstack.errors import ConfigError
from memstack.store.base import JobStore, MemoryIndex, MemoryStore, Store

if TYPE_CHECKING:
    from memstack.store.reembed import ReembedBackend

__all__ = ["JobStore", "MemoryIndex", "MemoryStore", "Store", "open_reembed", "open_store"]


async def open_store(config: Config, *, dim: int, embedder: str) -> Store:
    """Open (creating and migrating if needed) the store for ``config``.

    ``dim`` and ``embedder`` are recorded on first use; opening with another embedding model raises
    ``ConfigError`` telling the user to run ``memstack reembed``.
    """
    if config.backend == "postgres":
        # The ignore keeps mypy quiet until the postgres backend is installed alongside (then it is unused).
        from memstack.store.postgres import PostgresStore  # type: ignore[import-not-found,unused-ignore]

        assert config.database_url is not None
        store: Store = await PostgresStore.open(
            config.database_url,
            dim=dim,
            embedder=embedder,
            pool_size=config.pool_size,
            lease_s=config.session_lease_s,
            pooler=config.database_pooler,
            direct_url=config.database_direct_url,
            read_url=config.database_read_url,
        )
        return store
    from memstack.store.sqlite import SQLiteStore

    return await SQLiteStore.open(
        config.sqlite_path,
        dim=dim,
        embedder=embedder,
        cache_mb=config.vector_cache_mb,
        lease_s=config.session_lease_s,
    )


async def open_reembed(config: Config) -> ReembedBackend:
    """Open the store named by ``config`` for reembedding, taking its reembed lock."""
    if config.backend == "postgres":
        from memstack.store.postgres.reembed import PgReembed  # type: ignore[import-not-found,unused-ignore]

        assert config.database_url is not None
        url = config.database_url
        if config.database_pooler == "transaction":  # its lock spans the whole run: a session of its own
            if config.database_direct_url is None:
                raise ConfigError(
                    "memstack reembed holds a session lock for its whole run, which a transaction pooler cannot "
                    "keep: set MEMSTACK_DATABASE_DIRECT_URL to reach PostgreSQL itself"
                )
            url = config.database_direct_url
        backend: ReembedBackend = await PgReembed.open(url)
        return backend
    from memstack.store.sqlite.reembed import SQLiteReembed

    return await SQLiteReembed.open(config.sqlite_path)
