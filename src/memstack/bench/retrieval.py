"""``memstack bench retrieval``: top-k latency and recall of a store's ``nearest`` against exact numpy.

The data set is synthetic and reproducible (``seed``): each user's memories are unit vectors drawn around the
user's own cluster centres (about 20 memories per centre), and each query is a noisy copy of one of that user's
memories, so every query has real neighbours and ranking among close candidates matters. Everything is loaded
through the store's public ``add_many`` (one call per user, as an import would), so ``insert_per_s`` includes
whatever the store does to make the rows searchable (for PostgreSQL: ``COPY``, the btree and GIN indexes, and the
HNSW build of users large enough to get one). Then each query picks a user, is timed through ``nearest``, and the
same query is timed with numpy over that user's vectors (exact top-k by ``argpartition``), the baseline; recall is
the overlap of the two top-k sets.

Two latencies, from the same run:

* **cold** (``cold_p50_ms``, ``cold_p99_ms``, ``cold_recall`` over ``cold_queries``): the store is closed after
  loading and opened again, so its in-process caches are empty (SQLite: the vector cache and the connection's page
  cache; PostgreSQL: a new pool, so new connections and plans, and which users have an HNSW index), and each user
  about to be queried is searched once, timed: what a user's first search after a start costs. The operating
  system's page cache still holds the database file (the rows were just written), and on PostgreSQL so do the
  server's shared buffers: the cold figure has no disk reads in it.
* **warm** (``p50_ms``, ``p99_ms``, ``recall``): every query of the plan afterwards, once every queried user has
  been searched (a few first queries warm up the connection and plans untimed), as a user in a conversation sees
  it: on SQLite, numpy over vectors already in memory (the default cache has room for every user).
"""

from __future__ import annotations

import gc
import math
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

import numpy as np

from memstack.bench._fakes import need_fakes
from memstack.errors import InputError
from memstack.store.base import Store
from memstack.types import NewMemory, ScoredMemory, UserRef, Vector, new_id

__all__ = ["RetrievalConfig", "RetrievalResult", "run_retrieval", "synthetic_user"]

Backend = Literal["sqlite", "postgres"]

#: Embedder name recorded in the benchmark's store: these vectors come from no model.
BENCH_EMBEDDER = "bench:synthetic"
#: The embedded server's settings for benchmarks: PostgreSQL's defaults (128 MB of shared buffers) suit a laptop's
#: test runs, not a 500,000-row table; a production server is sized for its data the same way.
BENCH_SERVER_SETTINGS = {"shared_buffers": "2GB", "max_wal_size": "4GB"}
_CLUSTER_SIZE = 20
_WARMUP = 10


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    backend: Backend = "sqlite"
    users: int = 1000
    per_user: int = 500
    queries: int = 1000
    k: int = 10
    dim: int = 384
    seed: int = 0
    pg_codec: Literal["binary", "text"] | None = None  # PostgreSQL only: how query vectors are sent
    cache_mb: int | None = None  # SQLite only: the vector cache; default: room for the whole data set
    tenant: str = "bench"  # whose memories these are (a given database gets a tenant of its own per run)

    @property
    def sqlite_cache_mb(self) -> int:
        """The SQLite store's cache budget: as given, or every user's vectors and rows (about 4 * dim + 600 bytes
        per memory) plus slack, so that searches are warm as with a cache sized for its working set."""
        if self.cache_mb is not None:
            return self.cache_mb
        return math.ceil(self.users * self.per_user * (4 * self.dim + 600) / 2**20) + 64

    def __post_init__(self) -> None:
        for name in ("users", "per_user", "queries", "k", "dim"):
            if getattr(self, name) < 1:
                raise InputError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if self.backend not in ("sqlite", "postgres"):
            raise InputError(f"unknown backend {self.backend!r}; use sqlite or postgres")


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """The benchmark's JSON line, field for field."""

    backend: str
    users: int
    per_user: int
    dim: int
    k: int
    queries: int
    p50_ms: float
    p99_ms: float
    recall: float
    numpy_p50_ms: float
    numpy_p99_ms: float
    insert_per_s: float
    cold_queries: int  # users searched cold: one first search each, on a freshly opened store
    cold_p50_ms: float
    cold_p99_ms: float
    cold_recall: float
    load_avg: float | None  # the machine's 1-minute load average at the end (other work competing for the cores)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def synthetic_user(seed: int, user: int, n: int, dim: int) -> Vector:
    """User ``user``'s ``n`` unit vectors: noisy points around the user's own cluster centres (reproducible)."""
    rng = np.random.default_rng([seed, user])
    centres = rng.standard_normal((max(1, math.ceil(n / _CLUSTER_SIZE)), dim), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    noise = rng.standard_normal((n, dim), dtype=np.float32) * np.float32(0.6 / math.sqrt(dim))
    points = centres[rng.integers(0, len(centres), n)] + noise
    out: Vector = points / np.linalg.norm(points, axis=1, keepdims=True)
    return out


def _query_plan(cfg: RetrievalConfig) -> Iterator[tuple[int, int, Vector]]:
    """(user, memory the query was made from, query vector) for the warm-up and every timed query."""
    rng = np.random.default_rng([cfg.seed, 1_000_003])
    for _ in range(_WARMUP + cfg.queries):
        user = int(rng.integers(0, cfg.users))
        source = int(rng.integers(0, cfg.per_user))
        noise = rng.standard_normal(cfg.dim, dtype=np.float32) * np.float32(0.4 / math.sqrt(cfg.dim))
        yield user, source, noise


def _numpy_top_k(matrix: Vector, query: Vector, k: int) -> np.ndarray[Any, np.dtype[np.intp]]:
    scores = matrix @ query
    if k >= len(scores):
        return np.argsort(-scores)
    top = np.argpartition(-scores, k - 1)[:k]
    result: np.ndarray[Any, np.dtype[np.intp]] = top[np.argsort(-scores[top])]
    return result


def _user(index: int, cfg: RetrievalConfig) -> UserRef:
    return UserRef(f"user-{index:06d}", tenant=cfg.tenant)


Progress = Callable[[int, str], None]


async def load(store: Store, cfg: RetrievalConfig, progress: Progress) -> tuple[dict[int, list[str]], float]:
    """Insert every user's memories with ``add_many``; return the ids per user and the rows inserted per second."""
    ids: dict[int, list[str]] = {}
    spent = 0.0
    for u in range(cfg.users):
        vectors = synthetic_user(cfg.seed, u, cfg.per_user, cfg.dim)
        batch = [NewMemory(f"memory {i} of bench user {u}") for i in range(cfg.per_user)]
        started = time.perf_counter()
        added = await store.memories.add_many(_user(u, cfg), batch, vectors)
        spent += time.perf_counter() - started
        ids[u] = [m.id for m in added]
        progress(cfg.per_user, f"user {u + 1}/{cfg.users}")
    return ids, cfg.users * cfg.per_user / spent if spent > 0 else math.inf


def _baseline(cfg: RetrievalConfig) -> tuple[list[int], Vector, list[list[int]], list[float]]:
    """Every query (warm-up included), built and answered with numpy: (user, vector, exact top-k, ms) per query.

    Each user's vectors are generated once and searched for all of that user's queries, so no data generation
    happens between two timed store searches."""
    plan = list(_query_plan(cfg))
    users = [u for u, _, _ in plan]
    queries = np.empty((len(plan), cfg.dim), dtype=np.float32)
    exact: list[list[int]] = [[] for _ in plan]
    took = [0.0] * len(plan)
    by_user: dict[int, list[int]] = {}
    for i, u in enumerate(users):
        by_user.setdefault(u, []).append(i)
    for u, indices in by_user.items():
        matrix = synthetic_user(cfg.seed, u, cfg.per_user, cfg.dim)
        for i in indices:
            _, source, noise = plan[i]
            query = matrix[source] + noise
            queries[i] = query / np.linalg.norm(query)
            started = time.perf_counter()
            exact[i] = [int(j) for j in _numpy_top_k(matrix, queries[i], cfg.k)]
            took[i] = (time.perf_counter() - started) * 1000
    return users, queries, exact, took


async def measure(
    store: Store, cfg: RetrievalConfig, ids: dict[int, list[str]], insert_per_s: float
) -> RetrievalResult:
    """Time ``nearest`` and the numpy baseline on the same queries, cold then warm (see the module docstring).

    ``store`` should be freshly opened: the first search of each queried user, with that user's first query of
    the plan, is the cold figure. It also leaves every queried user searched once, so the timed queries after a
    few untimed warm-up ones are the warm figure."""
    users, queries, exact, numpy_took = _baseline(cfg)
    gc.collect()  # the garbage of loading is not the searches' to collect
    first: dict[int, int] = {}
    for i, u in enumerate(users):
        if i >= _WARMUP:
            first.setdefault(u, i)
    cold_ms: list[float] = []
    cold_overlap = 0
    for u, i in first.items():
        started = time.perf_counter()
        hits = await store.index.nearest(_user(u, cfg), queries[i], cfg.k)
        cold_ms.append((time.perf_counter() - started) * 1000)
        cold_overlap += _overlap(hits, ids[u], exact[i])
    store_ms: list[float] = []
    overlap = 0
    for i, u in enumerate(users):
        started = time.perf_counter()
        hits = await store.index.nearest(_user(u, cfg), queries[i], cfg.k)
        took = time.perf_counter() - started
        if i < _WARMUP:
            continue
        store_ms.append(took * 1000)
        overlap += _overlap(hits, ids[u], exact[i])
    numpy_ms = numpy_took[_WARMUP:]
    per_query = min(cfg.k, cfg.per_user)
    return RetrievalResult(
        backend=cfg.backend,
        users=cfg.users,
        per_user=cfg.per_user,
        dim=cfg.dim,
        k=cfg.k,
        queries=cfg.queries,
        p50_ms=round(float(np.percentile(store_ms, 50)), 4),
        p99_ms=round(float(np.percentile(store_ms, 99)), 4),
        recall=round(overlap / (cfg.queries * per_query), 4),
        numpy_p50_ms=round(float(np.percentile(numpy_ms, 50)), 4),
        numpy_p99_ms=round(float(np.percentile(numpy_ms, 99)), 4),
        insert_per_s=round(insert_per_s, 1),
        cold_queries=len(cold_ms),
        cold_p50_ms=round(float(np.percentile(cold_ms, 50)), 4),
        cold_p99_ms=round(float(np.percentile(cold_ms, 99)), 4),
        cold_recall=round(cold_overlap / (len(cold_ms) * per_query), 4),
        load_avg=round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    )


def _overlap(hits: Sequence[ScoredMemory], user_ids: list[str], exact: list[int]) -> int:
    return len({h.memory.id for h in hits} & {user_ids[j] for j in exact})


@asynccontextmanager
async def bench_database(cfg: RetrievalConfig, database_url: str | None) -> AsyncIterator[str]:
    """Where the benchmark's store lives, for as long as the context lasts: a temporary SQLite file, or a new
    database on an embedded PostgreSQL server (``database_url`` instead when given: it should name a scratch
    database)."""
    if cfg.backend == "sqlite":
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory(prefix="memstack-bench-") as tmp:
            yield f"sqlite:///{Path(tmp) / 'bench.db'}"
        return
    if database_url is not None:
        yield database_url
        return
    need_fakes()
    from memstack_testing.postgres import EmbeddedPostgres

    with EmbeddedPostgres(settings=BENCH_SERVER_SETTINGS) as server:
        yield server.create_database("memstack_bench")


async def open_bench_store(cfg: RetrievalConfig, url: str) -> Store:
    """A store on ``url`` as the benchmark configures it (SQLite's cache budget, PostgreSQL's vector codec); each
    call is a new store, its caches empty."""
    from memstack.config import Config
    from memstack.store import open_store

    if cfg.backend == "sqlite":
        config = Config.resolve(database_url=url, vector_cache_mb=cfg.sqlite_cache_mb)
        return await open_store(config, dim=cfg.dim, embedder=BENCH_EMBEDDER)
    if cfg.pg_codec is not None:
        from memstack.store.postgres import PostgresStore

        store: Store = await PostgresStore.open(url, dim=cfg.dim, embedder=BENCH_EMBEDDER, vector_codec=cfg.pg_codec)
        return store
    return await open_store(Config.resolve(database_url=url), dim=cfg.dim, embedder=BENCH_EMBEDDER)


async def run_retrieval(
    cfg: RetrievalConfig, *, database_url: str | None = None, progress: Progress | None = None
) -> RetrievalResult:
    """Build the data set, load it, open the store again (its caches empty), and measure cold then warm (see the
    module docstring)."""
    if database_url is not None:  # someone's database: this run's rows are kept apart from anything there
        cfg = replace(cfg, tenant=f"bench-{new_id('run')}")
    async with bench_database(cfg, database_url) as url:
        store = await open_bench_store(cfg, url)
        try:
            ids, insert_per_s = await load(store, cfg, progress or (lambda n, what: None))
        finally:
            await store.close()
        store = await open_bench_store(cfg, url)
        try:
            return await measure(store, cfg, ids, insert_per_s)
        finally:
            await store.close()
