"""Fixtures for the storage contract suite.

Every test that takes ``store`` (or ``make_store``) runs once per backend in ``BACKENDS``. A backend is one opener
function: it opens a store on storage that is fresh for the test and the same on every call within it, so a test can
close and reopen ("persistence") or open a second store on the same data ("another process").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Protocol
from urllib.parse import urlparse

import numpy as np
import pytest

from memstack.store.base import Store
from memstack.types import Vector

DIM = 16
EMBEDDER = "test:random16"

Opener = Callable[[pytest.FixtureRequest, Path, int, str], Awaitable[Store]]


async def _open_sqlite(request: pytest.FixtureRequest, tmp_path: Path, dim: int, embedder: str) -> Store:
    from memstack.store.sqlite import SQLiteStore

    return await SQLiteStore.open(tmp_path / "memstack.db", dim=dim, embedder=embedder, busy_timeout_s=2.0)


async def _open_postgres(request: pytest.FixtureRequest, tmp_path: Path, dim: int, embedder: str) -> Store:
    from memstack.store.postgres import PostgresStore

    url: str = request.getfixturevalue("postgres_url")  # a fresh database for this test (tests/conftest.py)
    store: Store = await PostgresStore.open(url, dim=dim, embedder=embedder)
    return store


async def _open_pgbouncer(request: pytest.FixtureRequest, tmp_path: Path, dim: int, embedder: str) -> Store:
    """PostgreSQL through PgBouncer in transaction-pooling mode (the direct URL for what needs a session)."""
    from memstack.store.postgres import PostgresStore

    url: str = request.getfixturevalue("postgres_url")
    pooled = request.getfixturevalue("pgbouncer").url(urlparse(url).path.lstrip("/"))
    store: Store = await PostgresStore.open(pooled, dim=dim, embedder=embedder, pooler="transaction", direct_url=url)
    return store


OPENERS: dict[str, Opener] = {"sqlite": _open_sqlite, "postgres": _open_postgres, "pgbouncer": _open_pgbouncer}

#: The backends the contract suite runs against ("pgbouncer": PostgreSQL behind a transaction-pooling pooler).
BACKENDS = ["sqlite", "postgres", "pgbouncer"]


class StoreFactory(Protocol):
    async def __call__(self, *, dim: int = DIM, embedder: str = EMBEDDER) -> Store: ...


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def make_store(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreFactory]:
    """Open stores of this test's backend on this test's storage; all are closed afterwards."""
    opened: list[Store] = []

    async def factory(*, dim: int = DIM, embedder: str = EMBEDDER) -> Store:
        store = await OPENERS[backend](request, tmp_path, dim, embedder)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        await store.close()


@pytest.fixture
async def store(make_store: StoreFactory) -> Store:
    return await make_store()


class Vectors:
    """Reproducible random unit vectors for store tests."""

    def __init__(self, seed: int = 7, dim: int = DIM) -> None:
        self.rng = np.random.default_rng(seed)
        self.dim = dim

    def one(self) -> Vector:
        return self.many(1)[0]

    def many(self, n: int) -> Vector:
        m = self.rng.normal(size=(n, self.dim)).astype(np.float32)
        out: Vector = m / np.linalg.norm(m, axis=1, keepdims=True)
        return out

    def near(self, v: Vector, noise: float = 0.05) -> Vector:
        w = v + self.rng.normal(scale=noise, size=v.shape).astype(np.float32)
        out: Vector = (w / np.linalg.norm(w)).astype(np.float32)
        return out


@pytest.fixture
def vecs() -> Vectors:
    return Vectors()
