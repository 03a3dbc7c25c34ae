"""The neutral roles' way into a database (:mod:`memstack.store._sql`): a transaction body is written once and runs
on both backends; on SQLite it runs on the database thread without an event loop, so a body that waits on anything
but its statements is refused whole."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from memstack.errors import StoreError
from memstack.store._sql import Tx, drive
from memstack.store.sqlite import SQLiteStore
from memstack.store.sqlite._sql import SQLiteSql
from memstack.types import UserRef

ALICE = UserRef("alice", "t1")


async def test_a_body_that_waits_on_something_else_changes_nothing(tmp_path: Path) -> None:
    store = await SQLiteStore.open(tmp_path / "memstack.db", dim=16, embedder="hash:16")
    try:
        sql = SQLiteSql(store._core)

        async def body(tx: Tx) -> None:
            await tx.execute(
                "INSERT INTO chat_threads (tenant, user_id, digest, session_id, turn, created_at) "
                "VALUES ('t1', 'alice', 'd1', 's1', 1, '2026-01-01')"
            )
            await asyncio.sleep(0)  # not a statement: the body would wait on the event loop

        with pytest.raises(StoreError, match="waited on something other than its statements"):
            await sql.write(body)
        assert await store.threads.find(ALICE, "d1") is None  # rolled back whole
    finally:
        await store.close()


def test_drive_returns_what_a_body_that_never_waits_returns() -> None:
    async def body() -> int:
        return 7

    assert drive(body()) == 7
