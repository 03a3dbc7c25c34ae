"""A read replica answers searches (``MEMSTACK_DATABASE_READ_URL``); writes and the reads writes depend on stay on
the primary. Against a real streaming replica whose replay the test pauses, so which server answered is visible."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import psycopg
import pytest

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.store.postgres import PostgresStore
from memstack.types import NewMemory, UserRef
from replica import StreamingReplica

ALICE = UserRef("alice")


async def _replayed(store: PostgresStore, vector: np.ndarray, count: int) -> bool:
    for _ in range(100):
        if len(await store.search_index.nearest(ALICE, vector, 10)) == count:
            return True
        await asyncio.sleep(0.05)
    return False


@pytest.mark.slow
async def test_searches_read_the_replica_and_writes_the_primary(  # type: ignore[no-untyped-def]
    postgres_url: str, postgres_server, tmp_path: Path
) -> None:
    database = urlparse(postgres_url).path.lstrip("/")
    engine_db = postgres_server.new_database_name()
    engine_url = postgres_server.create_database(engine_db)
    with StreamingReplica(postgres_server.url) as replica:
        read_url = replica.url(database)
        store = await PostgresStore.open(postgres_url, dim=8, embedder="test:8", read_url=read_url)
        replica.caught_up(postgres_url, database)  # the schema the store just created
        try:
            vector = np.ones(8, dtype=np.float32)
            await store.memories.add(ALICE, NewMemory("first"), vector)
            assert await _replayed(store, vector, 1)
            with psycopg.connect(read_url, autocommit=True) as conn:
                assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
                conn.execute("SELECT pg_wal_replay_pause()")
                await store.memories.add(ALICE, NewMemory("second"), vector)
                assert len(await store.index.nearest(ALICE, vector, 10)) == 2  # the primary: at once
                await asyncio.sleep(0.3)
                assert len(await store.search_index.nearest(ALICE, vector, 10)) == 1  # the paused replica
                conn.execute("SELECT pg_wal_replay_resume()")
            assert await _replayed(store, vector, 2)
        finally:
            await store.close()

        config = Config(home=tmp_path, database_url=engine_url, database_read_url=replica.url(engine_db))
        async with AsyncMemstack(config) as ms:
            replica.caught_up(engine_url, engine_db)
            with psycopg.connect(replica.url(engine_db), autocommit=True) as conn:
                conn.execute("SELECT pg_wal_replay_pause()")
                await ms.add("bob", "Bob keeps bees on his roof", category="fact")
                assert [m.content for m in await ms.list("bob")] == ["Bob keeps bees on his roof"]  # primary
                assert await ms.search("bob", "does Bob keep animals?", k=3) == []  # the replica, paused
                conn.execute("SELECT pg_wal_replay_resume()")
            for _ in range(100):
                if await ms.search("bob", "does Bob keep animals?", k=3):
                    break
                await asyncio.sleep(0.05)
            assert [h.memory.content for h in await ms.search("bob", "does Bob keep animals?", k=3)] == [
                "Bob keeps bees on his roof"
            ]
    postgres_server.drop_database(engine_db)
