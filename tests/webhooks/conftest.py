"""Fixtures of the webhook tests: a real receiver, and engines over SQLite and PostgreSQL with a fast retry schedule
(the backoff, poll and timeout are settings, so a receiver down for several attempts costs seconds)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memstack.config import Config
from memstack.engine import AsyncMemstack

from .receiver import Received, Receiver

BACKENDS = ["sqlite", "postgres"]
#: Fast schedule: attempts after ~0.1, 0.2, 0.4 … s; an attempt is at most 1 s.
FAST = {"webhook_poll_s": 0.05, "webhook_backoff_s": 0.1, "webhook_timeout_s": 1.0, "embedder": "hash:64"}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """The settings naming this test's store: a file, or a fresh database on the embedded PostgreSQL."""
    if request.param == "postgres":
        return {"home": tmp_path, "database_url": str(request.getfixturevalue("postgres_url"))}
    return {"home": tmp_path}


@pytest.fixture
async def open_engine(database: dict[str, Any]) -> AsyncIterator[Callable[..., Any]]:
    """Open engines on this test's store (``**settings`` over the fast schedule); all are closed afterwards."""
    opened: list[AsyncMemstack] = []

    async def factory(*, resume: bool = True, **settings: Any) -> AsyncMemstack:
        ms = AsyncMemstack(Config(**{**database, **FAST, **settings}), resume=resume)
        await ms.open()
        opened.append(ms)
        return ms

    yield factory
    for ms in opened:
        await ms.aclose(drain_timeout_s=5)


async def until(receiver: Receiver, count: int, kind: str | None = None, timeout_s: float = 20.0) -> list[Received]:
    """Wait until ``receiver`` holds ``count`` deliveries (of ``kind``)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while len(found := receiver.events(kind)) < count:
        assert asyncio.get_running_loop().time() < deadline, f"only {len(found)} of {count} deliveries arrived"
        await asyncio.sleep(0.05)
    return found
