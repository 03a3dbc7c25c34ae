"""A process that holds one session's lease and then tries to write a turn under it (the lease tests).

Usage: ``python lease_holder.py DATABASE_URL LEASE_S [POOLER]``. It opens the store, takes session ``s1`` of
``alice``, prints ``{"held": token}`` and waits for a line on stdin; then it records turn 1 under its lease and prints
``{"recorded": true}`` or ``{"error": "LeaseLost"}``. The tests stop it (SIGSTOP) to play a stalled process, or kill
it to play a crashed one.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime

from memstack.config import Config
from memstack.errors import MemstackError
from memstack.store import open_store
from memstack.types import ArchivedTurn, UserRef

ALICE = UserRef("alice")


async def main(database_url: str, lease_s: float, pooler: str) -> None:
    config = Config(database_url=database_url, session_lease_s=lease_s, database_pooler=pooler)
    store = await open_store(config, dim=16, embedder="test:random16")
    try:
        await store.sessions.open(ALICE, "s1")
        held = await store.sessions.acquire(ALICE, "s1", timeout=5)
        assert held.lease is not None
        print(json.dumps({"held": held.lease.token}), flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        turn = ArchivedTurn("s1", 1, "from the stalled process", "its reply", datetime(2025, 1, 1, tzinfo=UTC))
        try:
            await store.sessions.record(ALICE, turn, lease=held.lease)
            print(json.dumps({"recorded": True}), flush=True)
        except MemstackError as exc:
            print(json.dumps({"error": type(exc).__name__}), flush=True)
        await held.release()
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "none"))
