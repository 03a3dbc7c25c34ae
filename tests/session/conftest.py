"""Stores for the session service tests: each test taking ``store`` or ``make_store`` runs once per backend.

``make_store()`` opens another store on the same database (a second process's view of it); all are closed after
the test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from memstack.store.base import Store

BACKENDS = ["sqlite", "postgres"]

StoreFactory = Callable[[], Awaitable[Store]]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def make_store(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreFactory]:
    opened: list[Store] = []
    # Asked for first, so the database is dropped only after the stores on it are closed.
    url: str | None = request.getfixturevalue("postgres_url") if backend == "postgres" else None

    async def factory() -> Store:
        if url is None:
            from memstack.store.sqlite import SQLiteStore

            store: Store = await SQLiteStore.open(tmp_path / "memstack.db", dim=8, embedder="test:8")
        else:
            from memstack.store.postgres import PostgresStore  # type: ignore[import-not-found,unused-ignore]

            store = await PostgresStore.open(url, dim=8, embedder="test:8")
        opened.append(store)
        return store

    yield factory
    for store in opened:
        await store.close()


@pytest.fixture
async def store(make_store: StoreFactory) -> Store:
    return await make_store()
