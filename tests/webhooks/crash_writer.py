"""A process that changes a memory and waits to be killed (the webhook crash tests).

Usage: ``python crash_writer.py HOME DATABASE_URL MODE`` (``-`` for no URL: SQLite under HOME). MODE ``written``:
its delivery worker is running but polls once an hour, so the change's delivery is still in the outbox when the
test kills it; MODE ``sending``: its worker polls often and sends at once (the test's receiver takes the request
and never answers, and the test kills the process while the attempt is in flight). Prints one JSON line when the
change is committed.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.types import UserRef


async def main(home: str, database_url: str, mode: str) -> None:
    poll = 3600.0 if mode == "written" else 0.05
    url = None if database_url == "-" else database_url
    config = Config(home=Path(home), database_url=url, embedder="hash:64", webhook_poll_s=poll, webhook_timeout_s=1.0)
    async with AsyncMemstack(config) as ms:
        await asyncio.sleep(0.2)  # the worker's first look (nothing due yet) is behind it
        memory = await ms.add(UserRef("alice", tenant="acme"), "I moved to Utrecht")
        print(json.dumps({"event": "written", "memory": memory.id}), flush=True)
        await asyncio.sleep(3600)  # killed here


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
