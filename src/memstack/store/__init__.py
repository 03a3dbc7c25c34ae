"""Storage backends behind the protocols of :mod:`memstack.store.base`.

``open_store(config, dim=..., embedder=...)`` picks SQLite (embedded default) or PostgreSQL from
``config.database_url``; backends are imported lazily.
"""

from __future__ import annotations

from memstack.config import Config
from memstack.store.base import JobStore, MemoryIndex, MemoryStore, Store

__all__ = ["JobStore", "MemoryIndex", "MemoryStore", "Store", "open_store"]


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
