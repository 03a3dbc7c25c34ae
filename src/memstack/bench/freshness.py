"""``memstack bench freshness``: how soon a memory captured in a chat turn can be found by another engine.

Two engines open the same store, each in a process of its own, as two workers of a deployment do (SQLite: the same
file, each with its own connections and its own cache of the users' vectors; PostgreSQL: the same database, each
with its own pool): the **writer** (this process) chats, the **reader** (a child process, :func:`reader_main`)
searches. ``users`` users hold ``memories`` memories each, and the reader has searched each of them once before (its
cache holds their vectors: the case where a stale copy could hide a new memory). Then, ``samples`` times, for a
user in turn:

1. the reader embeds the message about to be sent (its query, untimed: embedding a query is not freshness);
2. the reader starts searching that user (``AsyncMemstack.nearest``: ``search`` for a query already embedded, top
   ``k``) every ``poll_ms`` until a memory naming the message's made-up name is among the
   results;
3. the writer sends the message, a first-person statement that capture stores (a turn of the offline responder; the
   memory is usually written before the reply, by the badge race).

Time stamps taken in the two processes are compared on the wall clock (``time.time``; one machine, one clock).

**written → searchable** (``p50_ms``, ``p95_ms``, ``max_ms``): from the memory's own time stamp (``updated_at``, set
just before its write transaction) to the end of the reader's first search that returned it. Also **sent →
searchable** (``sent_p50_ms``, ``sent_p95_ms``): from the writer's ``chat`` call, the turn included. ``found``
counts the samples found, ``not_saved`` those whose turn stored no memory (not timed), ``timed_out`` those not found
within ``timeout_s``.

The limit: ``limit_search_p50_ms`` is the reader's search itself (the p50 of every poll, each timed): a memory cannot
be seen sooner than one search after it is written; ``p50_over_limit`` is the ratio. ``load_avg_start``,
``load_avg_end``: the machine's load (the writer's turns and the reader's polls share the cores).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from asyncio.subprocess import DEVNULL, PIPE
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memstack.bench._measure import Load, check_backend, database, ratio, warm_embedder
from memstack.bench._talk import Names, saving_message
from memstack.bench.turn import seed_memories
from memstack.config import Config
from memstack.errors import InputError, MemstackError
from memstack.evals.common import percentile
from memstack.types import UserRef, Vector

__all__ = ["FreshnessConfig", "run_freshness_bench"]

_META = {"tier": "premium"}
_TENANT = "bench-fresh"


@dataclass(frozen=True, slots=True)
class FreshnessConfig:
    backend: str = "sqlite"
    samples: int = 50
    users: int = 5
    memories: int = 100
    embedder: str = "local:minilm"
    k: int = 10
    poll_ms: float = 1.0
    timeout_s: float = 10.0

    def __post_init__(self) -> None:
        if min(self.samples, self.users, self.k) < 1 or self.memories < 0 or self.poll_ms < 0 or self.timeout_s <= 0:
            raise InputError("samples, users and k must be at least 1, memories and poll_ms at least 0")
        check_backend(self.backend)


_CHILD = "import sys; from memstack.bench.freshness import reader_main; reader_main(sys.argv[1])"


async def _poll(reader: Any, user: UserRef, query: Vector, order: dict[str, Any]) -> dict[str, Any]:
    """Search until a memory naming ``order["name"]`` is found, or ``timeout_s`` passed; what the reader saw."""
    deadline = time.perf_counter() + order["timeout_s"]
    needle, searches = order["name"].lower(), []
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        hits = await reader.nearest(user, query, k=order["k"])
        searches.append((time.perf_counter() - started) * 1000)
        for hit in hits:
            if needle in hit.memory.content.lower():
                return {"at": time.time(), "written": hit.memory.updated_at.timestamp(), "searches": searches}
        await asyncio.sleep(order["poll_ms"] / 1000)
    return {"at": None, "written": None, "searches": searches}


def reader_main(config_json: str) -> None:
    """The reader, in a process of its own: open an engine on the store, search each user once, then for each
    order read from stdin (a JSON line: user, name, message, k, poll_ms, timeout_s) embed the message, say
    ``armed`` and search until found, while reading one more line: ``stop`` (the turn saved nothing) ends the
    search at once. Then print what it saw. An empty line ends it all. One JSON line per answer."""
    from memstack.engine import AsyncMemstack

    order = json.loads(config_json)
    config = Config(home=Path(order["home"]), embedder=order["embedder"], database_url=order["database_url"])

    def say(line: dict[str, Any]) -> None:
        print(json.dumps(line), flush=True)

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        async with AsyncMemstack(config, resume=False) as reader:
            await warm_embedder(reader.embedder)
            for user in order["users"]:  # its cache holds every user's vectors before the timed writes
                await reader.search(UserRef(user, _TENANT), "what do I like")
            say({"ready": True})
            while line := (await loop.run_in_executor(None, sys.stdin.readline)).strip():
                ask = json.loads(line)
                user = UserRef(ask["user"], _TENANT)
                query = (await reader.embedder.embed([ask["message"]]))[0]  # the reader's query, ready beforehand
                say({"armed": True})
                polling = asyncio.ensure_future(_poll(reader, user, query, ask))
                if (await loop.run_in_executor(None, sys.stdin.readline)).strip() == "stop":
                    polling.cancel()
                    say({"at": None, "written": None, "searches": []})
                else:
                    say(await polling)

    asyncio.run(serve())


class _Reader:
    """The parent's side of :func:`reader_main`."""

    def __init__(self, child: asyncio.subprocess.Process) -> None:
        self.child = child

    @classmethod
    async def start(cls, config: Config, users: list[UserRef]) -> _Reader:
        order = {
            "home": str(config.home),
            "embedder": config.embedder,
            "database_url": config.database_url,
            "users": [u.user_id for u in users],
        }
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _CHILD, json.dumps(order), stdin=PIPE, stdout=PIPE, stderr=DEVNULL
        )
        reader = cls(child)
        await reader.answer()  # ready
        return reader

    async def answer(self) -> dict[str, Any]:
        assert self.child.stdout is not None
        line = await self.child.stdout.readline()
        if not line:
            raise MemstackError("the reader's process ended early; run it alone to see why")
        out: dict[str, Any] = json.loads(line)
        return out

    async def ask(self, order: dict[str, Any]) -> None:
        """Send an order; return once the reader is searching."""
        await self._send(json.dumps(order))
        await self.answer()  # armed

    async def seen(self, *, stop: bool) -> dict[str, Any]:
        """What the reader saw (``stop``: the turn saved nothing, stop searching now)."""
        await self._send("stop" if stop else "go")
        return await self.answer()

    async def _send(self, line: str) -> None:
        assert self.child.stdin is not None
        self.child.stdin.write((line + "\n").encode())
        await self.child.stdin.drain()

    async def close(self) -> None:
        if self.child.stdin is not None and not self.child.stdin.is_closing():
            self.child.stdin.write(b"\n")
            self.child.stdin.close()
        await self.child.wait()


async def run_freshness_bench(cfg: FreshnessConfig, *, database_url: str | None = None) -> dict[str, Any]:
    from memstack.engine import AsyncMemstack

    load = Load()
    rng, names = np.random.default_rng(2), Names(np.random.default_rng(3))
    users = [UserRef(f"fresh-{n}", _TENANT) for n in range(cfg.users)]
    fresh: list[float] = []
    sent: list[float] = []
    searches: list[float] = []
    not_saved = timed_out = 0
    with tempfile.TemporaryDirectory(prefix="memstack-bench-freshness-") as home:
        async with database(cfg.backend, database_url, "memstack_bench_freshness") as url:
            config = Config(home=Path(home), embedder=cfg.embedder, database_url=url)  # offline capture
            async with AsyncMemstack(config) as writer:
                for user in users:
                    await seed_memories(writer, user, cfg.memories, tag=f"{user.user_id}, ")
                warmup = UserRef("fresh-warmup", _TENANT)  # the writer's first turns load its models
                await writer.chat(warmup, "Hello! What can you help me with today?", metadata=_META)
                await writer.chat(warmup, saving_message(rng, names()), metadata=_META)
                await writer.wait_idle()
                reader = await _Reader.start(config, users)
                try:
                    for i in range(cfg.samples):
                        user, name = users[i % len(users)], names()
                        message = saving_message(rng, name)
                        await writer.wait_idle()
                        order = {"user": user.user_id, "name": name, "message": message, "k": cfg.k,
                                 "poll_ms": cfg.poll_ms, "timeout_s": cfg.timeout_s}  # fmt: skip
                        await reader.ask(order)
                        started = time.time()
                        result = await writer.chat(user, message, metadata=_META)
                        saved = result.memory_pending or any(name.lower() in u.content.lower() for u in result.badge)
                        seen = await reader.seen(stop=not saved)
                        searches += seen["searches"]
                        if not saved:
                            not_saved += 1
                        elif seen["at"] is None:
                            timed_out += 1
                        else:
                            fresh.append((seen["at"] - seen["written"]) * 1000)
                            sent.append((seen["at"] - started) * 1000)
                finally:
                    await reader.close()
                await writer.wait_idle()
    search_p50 = percentile(searches, 50)
    return {
        "backend": cfg.backend,
        "embedder": cfg.embedder,
        "samples": cfg.samples,
        "users": cfg.users,
        "memories": cfg.memories,
        "k": cfg.k,
        "poll_ms": cfg.poll_ms,
        "found": len(fresh),
        "not_saved": not_saved,
        "timed_out": timed_out,
        "p50_ms": round(percentile(fresh, 50), 2),
        "p95_ms": round(percentile(fresh, 95), 2),
        "max_ms": round(max(fresh, default=0.0), 2),
        "sent_p50_ms": round(percentile(sent, 50), 2),
        "sent_p95_ms": round(percentile(sent, 95), 2),
        "limit_search_p50_ms": round(search_p50, 3),
        "p50_over_limit": ratio(percentile(fresh, 50), search_p50),
        **load.as_json(),
    }
