"""An erasure answered by one ``memstack serve`` is final for work of the user running in another (issue 24): two
server processes on the same data (one SQLite file, or one PostgreSQL database); the first imports a long
conversation for the user and answers the user's first turn after its start, the second erases the user half-way
through the import. The import (and the turn, if it was still running) is refused with a 409 ``UserErased``, and
once both servers have drained their background work no table holds a row of the user."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from memstack.config import Config
from memstack.store import open_store
from memstack.types import UserRef
from store.test_users_contract import Catalogue  # tests/ is on sys.path (its conftest)

from .processes import Server

RACER = UserRef("racer")
EXCHANGES = 150


@asynccontextmanager
async def _two_servers(home: Path, database_url: str | None) -> AsyncIterator[tuple[Server, Server]]:
    first, second = Server(home, database_url), Server(home, database_url)
    try:
        await asyncio.gather(asyncio.to_thread(first.start), asyncio.to_thread(second.start))
        yield first, second
    finally:
        first.stop()
        second.stop()


def _history() -> list[dict[str, str]]:
    start = datetime(2024, 2, 1, 8, 0, tzinfo=UTC)
    said = []
    for i in range(EXCHANGES):
        at = (start + timedelta(minutes=5 * i)).isoformat()
        said.append({"role": "user", "content": f"I planted {i} tulip bulbs by the fence today.", "at": at})
        said.append({"role": "assistant", "content": f"{i} bulbs is a good number.", "at": at})
    return said


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.slow
async def test_an_erasure_through_one_server_is_final_for_work_in_another(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = str(request.getfixturevalue("postgres_url")) if backend == "postgres" else None
    store = None
    async with _two_servers(tmp_path, url) as (worker, eraser):
        store = await open_store(Config(home=tmp_path, database_url=url), dim=384, embedder="local:minilm")
        db = Catalogue(backend, store, url)
        async with httpx.AsyncClient(timeout=300) as http:
            body = {"session_id": "garden", "messages": _history()}
            ingest = asyncio.ensure_future(http.post(f"{worker.url}/v1/users/racer/ingest", json=body))
            turn = asyncio.ensure_future(
                http.post(f"{worker.url}/v1/chat", json={"user_id": "racer", "message": "I keep bees."})
            )
            deadline = time.monotonic() + 120
            while db.counts(RACER)["session_turns"] < 10:  # the import is under way
                assert not ingest.done() and time.monotonic() < deadline, "the import ended before the erasure"
                await asyncio.sleep(0.02)
            erased = await http.delete(f"{eraser.url}/v1/users/racer")
            assert erased.status_code == 200, erased.text
            imported, answered = await asyncio.gather(ingest, turn)
        assert imported.status_code == 409 and imported.json()["error"]["type"] == "UserErased", imported.text[:300]
        assert answered.status_code in (200, 409), answered.text[:300]
    try:
        left = {table: n for table, n in db.counts(RACER).items() if n}  # both servers drained and stopped
        assert left == {}, f"rows of the erased user remain: {left}"
    finally:
        await store.close()
