"""An acknowledged turn is never lost: ``memstack serve`` killed (SIGKILL) the moment a reply arrives.

Clients chat on their own sessions, half with JSON replies and half streamed (the acknowledgement is the ``done``
event). Each life of the server ends with ``kill -9`` right after the k-th acknowledgement it gave (k = 1-3, so
other turns are in flight at every stage), then the server starts again on the same data and the clients go on.
At the end every acknowledged turn must be in the archive exactly once, under the turn number its reply gave, and
the phase 2 of every turn must have been completed by the restarted servers.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from memstack.config import Config
from memstack.store import open_store
from memstack.types import TurnStatus, UserRef

from .processes import Server

CLIENTS = 4  # two JSON, two streamed
MIN_ACKS = int(os.environ.get("MEMSTACK_KILL_TEST_ACKS", "30"))  # per reply kind
MAX_LIVES = 60


@dataclass
class Acked:
    user: str
    session: str
    turn: int
    message: str
    streamed: bool


@dataclass
class Run:
    acked: list[Acked] = field(default_factory=list)
    lives: int = 0


async def _life(server: Server, run: Run, rng: random.Random, counters: dict[int, int]) -> None:
    """Chat until the server is killed right after its k-th acknowledgement."""
    k = rng.randint(1, 3)
    given = 0
    stop = asyncio.Event()

    def ack(item: Acked) -> None:
        nonlocal given
        run.acked.append(item)
        given += 1
        if given == k:
            server.kill()  # at once: the next byte this process would send is never sent
            stop.set()

    async def client(c: int) -> None:
        streamed = c % 2 == 1
        user, session = f"user-{c}", f"ses-{c}"
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            while not stop.is_set():
                counters[c] += 1
                message = f"message {c}-{counters[c]}: my favourite number is {counters[c]}"
                body = {"user_id": user, "session_id": session, "message": message, "stream": streamed}
                try:
                    if not streamed:
                        reply = await http.post("/v1/chat", json=body)
                        if reply.status_code != 200:
                            continue  # refused (not acknowledged): try the next message
                        ack(Acked(user, session, int(reply.json()["turn"]), message, False))
                        continue
                    async with http.stream("POST", "/v1/chat", json=body) as response:
                        event = ""
                        async for line in response.aiter_lines():
                            if line.startswith("event: "):
                                event = line.removeprefix("event: ")
                            elif line.startswith("data: ") and event == "done":
                                ack(Acked(user, session, int(json.loads(line[6:])["turn"]), message, True))
                                break
                except httpx.TransportError:
                    return  # the server died: whatever was not acknowledged may or may not be there

    await asyncio.gather(*(client(c) for c in range(CLIENTS)))


async def _check(database_url: str, run: Run) -> dict[str, int]:
    config = Config(database_url=database_url)
    store = await open_store(config, dim=384, embedder="local:minilm")
    try:
        by_session: dict[tuple[str, str], list] = {}  # type: ignore[type-arg]
        for c in range(CLIENTS):
            user, session = UserRef(f"user-{c}"), f"ses-{c}"
            by_session[(user.user_id, session)] = await store.archive.turns(user, session_id=session, limit=10_000)
        for (_user, session), turns in by_session.items():
            assert [t.turn for t in turns] == list(range(1, len(turns) + 1)), f"{session}: turns not 1..n"
            texts = [t.user for t in turns]
            assert len(texts) == len(set(texts)), f"{session}: a message archived twice"
        lost = 0
        for a in run.acked:
            turns = by_session[(a.user, a.session)]
            if not (a.turn <= len(turns) and turns[a.turn - 1].user == a.message):
                lost += 1
        deadline = time.monotonic() + 60  # the restarted server resumes every turn's phase 2
        while True:
            flagged = [
                t
                for turns in [await store.archive.turns(UserRef(u), session_id=s, limit=10_000) for u, s in by_session]
                for t in turns
                if t.status in (TurnStatus.PENDING, TurnStatus.UNSUMMARIZED)
            ]
            if not flagged or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        return {
            "acked": len(run.acked),
            "acked_json": sum(not a.streamed for a in run.acked),
            "acked_streamed": sum(a.streamed for a in run.acked),
            "lost": lost,
            "still_pending": len(flagged),
            "lives": run.lives,
        }
    finally:
        await store.close()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_no_acknowledged_turn_is_lost_to_kill_9(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    database_url = str(request.getfixturevalue("postgres_url")) if backend == "postgres" else None
    server = Server(tmp_path, database_url)
    run = Run()
    rng = random.Random(12)
    counters = dict.fromkeys(range(CLIENTS), 0)
    try:
        while run.lives < MAX_LIVES and (
            sum(not a.streamed for a in run.acked) < MIN_ACKS or sum(a.streamed for a in run.acked) < MIN_ACKS
        ):
            await asyncio.to_thread(server.start)
            run.lives += 1
            await _life(server, run, rng, counters)
            await asyncio.to_thread(server.wait)
        await asyncio.to_thread(server.start)  # the last life: resumes what the last kill left
        report = await _check(database_url or f"sqlite:///{tmp_path / 'memstack.db'}", run)
    finally:
        server.kill()
        await asyncio.to_thread(server.wait)
    print(json.dumps({"backend": backend, **report}))
    assert report["acked_json"] >= MIN_ACKS and report["acked_streamed"] >= MIN_ACKS, report
    assert report["lost"] == 0, report
    assert report["still_pending"] == 0, report
