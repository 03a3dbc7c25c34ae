"""Two ``memstack serve`` processes on the same data (one SQLite directory, or one PostgreSQL database): a session's
turns split across them stay in order and complete, background work is claimed once, and a memory forgotten through
one is gone from the other's next search; an add retried with one Idempotency-Key through both, and again after a
restart, stores one memory. Also ``memstack serve --workers 2`` on PostgreSQL (refused on SQLite)."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from memstack.config import Config
from memstack.store import open_store
from memstack.store.base import Store
from memstack.types import JobStatus, TurnStatus, UserRef

from .processes import CLI, Server

ALICE = UserRef("alice")


def _database_url(backend: str, request: pytest.FixtureRequest) -> str | None:
    return str(request.getfixturevalue("postgres_url")) if backend == "postgres" else None


async def _open(home: Path, database_url: str | None) -> Store:
    config = Config(home=home, database_url=database_url)
    return await open_store(config, dim=384, embedder="local:minilm")


async def _settled(store: Store, user: UserRef, session: str, turns: int, timeout_s: float = 60) -> list[object]:
    """The session's archive once every turn's phase 2 is done."""
    deadline = time.monotonic() + timeout_s
    while True:
        archived = await store.archive.turns(user, session_id=session, limit=1000)
        done = [t for t in archived if t.status not in (TurnStatus.PENDING, TurnStatus.UNSUMMARIZED)]
        if len(done) == turns or time.monotonic() > deadline:
            return list(archived)
        await asyncio.sleep(0.2)


@asynccontextmanager
async def _two_servers(home: Path, database_url: str | None) -> AsyncIterator[tuple[Server, Server]]:
    """Two ``memstack serve`` processes on the same data, started together, stopped gracefully."""
    first, second = Server(home, database_url), Server(home, database_url)
    try:
        await asyncio.gather(asyncio.to_thread(first.start), asyncio.to_thread(second.start))
        yield first, second
    finally:
        first.stop()
        second.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.slow
async def test_turns_of_one_session_split_across_two_processes(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = _database_url(backend, request)
    async with _two_servers(tmp_path, url) as (first, second):
        async with httpx.AsyncClient(timeout=120) as http:
            # In turn: each process in rotation; every reply is numbered after the one before, on either process.
            for n in range(1, 9):
                server = (first, second)[n % 2]
                body = {"user_id": "alice", "session_id": "shared", "message": f"Step {n}: I like the colour blue."}
                reply = await http.post(f"{server.url}/v1/chat", json=body)
                assert reply.status_code == 200, reply.text
                assert reply.json()["turn"] == n
            # At once: ten turns sent to both processes together wait for each other, none is refused or lost.
            bodies = [
                {"user_id": "alice", "session_id": "shared", "message": f"At once {i}: I also like green."}
                for i in range(10)
            ]
            replies = await asyncio.gather(
                *(http.post(f"{(first, second)[i % 2].url}/v1/chat", json=b) for i, b in enumerate(bodies))
            )
        assert all(r.status_code == 200 for r in replies), [r.text for r in replies if r.status_code != 200]
        assert sorted(r.json()["turn"] for r in replies) == list(range(9, 19))
        store = await _open(tmp_path, url)
        try:
            archived = await _settled(store, ALICE, "shared", 18)
            assert [t.turn for t in archived] == list(range(1, 19))  # type: ignore[attr-defined]
            assert len({t.user for t in archived}) == 18  # type: ignore[attr-defined]  # each message once
            by_turn = {r.json()["turn"]: b["message"] for r, b in zip(replies, bodies, strict=True)}
            assert all(archived[n - 1].user == by_turn[n] for n in range(9, 19))  # type: ignore[attr-defined]
            assert all(t.status is TurnStatus.SUMMARIZED for t in archived)  # type: ignore[attr-defined]
            state = await store.sessions.open(ALICE, "shared", create=False)
            assert [e.turn for e in state.turn_log] == list(range(1, 19))
        finally:
            await store.close()


@pytest.mark.slow
async def test_background_work_is_claimed_once(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Detections a dead process left behind: two processes start at once, each detection is done by one."""
    url = _database_url(backend, request)
    store = await _open(tmp_path, url)
    at = datetime(2025, 5, 9, 14, 0, tzinfo=UTC).isoformat()
    jobs = []
    try:
        for i in range(24):
            payload = {
                "tenant": "default",
                "user_id": f"user-{i}",
                "message": "I'm a nurse and I live in Lyon",
                "at": at,
                "tier": "free",
            }
            jobs.append(await store.jobs.enqueue("detect", f"dead-{i}", payload, owner="dead-worker", lease_s=0.2))
    finally:
        await store.close()
    await asyncio.sleep(0.3)  # the dead worker's leases lapse
    async with _two_servers(tmp_path, url):
        store = await _open(tmp_path, url)
        try:
            deadline = time.monotonic() + 60
            while True:
                states = [await store.jobs.get(j.id) for j in jobs]
                if all(s.status is JobStatus.DONE for s in states) or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)
            assert all(s.status is JobStatus.DONE for s in states), [s.status for s in states]
            assert all(s.attempts == 2 for s in states), [s.attempts for s in states]  # the dead one's, then one
            for i in range(24):
                contents = [m.content for m in await store.index.list(UserRef(f"user-{i}"))]
                assert contents and len(contents) == len(set(contents)), contents
        finally:
            await store.close()


@pytest.mark.slow
async def test_a_memory_forgotten_in_one_process_is_gone_from_the_others_next_search(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = _database_url(backend, request)
    async with _two_servers(tmp_path, url) as (first, second), httpx.AsyncClient(timeout=60) as http:
        memories = f"{first.url}/v1/users/bob/memories"
        added = await http.post(memories, json={"content": "Bob keeps bees on his roof", "category": "fact"})
        assert added.status_code == 201, added.text
        search = {"query": "does Bob keep any animals?", "k": 3}
        found = await http.post(f"{second.url}/v1/users/bob/memories/search", json=search)
        assert [h["memory"]["content"] for h in found.json()["results"]] == ["Bob keeps bees on his roof"]
        forgotten = await http.delete(f"{memories}/{added.json()['id']}")
        assert forgotten.status_code == 200, forgotten.text
        again = await http.post(f"{second.url}/v1/users/bob/memories/search", json=search)
        assert again.json()["results"] == []
        listed = await http.get(f"{second.url}/v1/users/bob/memories")
        assert listed.json()["memories"] == []


def test_workers_are_refused_on_sqlite(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CLI, "serve", "--workers", "2", "--home", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert "--workers 2 needs PostgreSQL" in done.stderr


@pytest.mark.slow
async def test_serve_with_two_workers_on_postgres(tmp_path: Path, postgres_url: str) -> None:
    server = Server(tmp_path, postgres_url, "--workers", "2")
    await asyncio.to_thread(server.start)
    try:
        async with httpx.AsyncClient(timeout=60) as http:
            replies = await asyncio.gather(
                *(
                    http.post(f"{server.url}/v1/chat", json={"user_id": f"u{i}", "message": "I live in Porto."})
                    for i in range(12)
                )
            )
            assert all(r.status_code == 200 for r in replies), [r.text for r in replies]
        assert server.process is not None
        assert len(_workers(server.process.pid)) == 2
    finally:
        server.stop()


def _workers(parent: int) -> list[int]:
    """The worker processes uvicorn's supervisor started (spawned Python processes whose parent is ``parent``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"spawn_main" in command:
            found.append(int(entry.name))
    return found


@pytest.mark.slow
async def test_a_retried_add_stores_one_memory_across_processes_and_restarts(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The same add sent with one Idempotency-Key to both processes at once, then again after both restarted: one
    memory (force: the dedup of explicit adds would hide a second copy; the key alone prevents it)."""
    url = _database_url(backend, request)
    body = {"content": "Carla restores old bicycles", "category": "fact", "force": True}
    headers = {"Idempotency-Key": "one-add-two-processes"}
    async with _two_servers(tmp_path, url) as servers, httpx.AsyncClient(timeout=60) as http:

        async def add(server: Server) -> httpx.Response:
            while True:  # a retry while the first is in flight is told to wait
                answer = await http.post(f"{server.url}/v1/users/carla/memories", json=body, headers=headers)
                if answer.status_code != 409:
                    return answer
                assert answer.json()["error"]["type"] == "RequestInFlight" and answer.headers["Retry-After"]
                await asyncio.sleep(0.05)

        answers = await asyncio.gather(*(add(s) for s in (*servers, *servers)))
        assert {a.status_code for a in answers} == {201}, [a.text for a in answers]
        assert len({a.json()["id"] for a in answers}) == 1
        assert sum(a.headers.get("Idempotent-Replayed") != "true" for a in answers) == 1  # done once
        listed = await http.get(f"{servers[1].url}/v1/users/carla/memories")
        assert [m["content"] for m in listed.json()["memories"]] == [body["content"]]
    again = Server(tmp_path, url)
    await asyncio.to_thread(again.start)
    try:
        async with httpx.AsyncClient(timeout=60) as http:
            replay = await http.post(f"{again.url}/v1/users/carla/memories", json=body, headers=headers)
            assert replay.headers["Idempotent-Replayed"] == "true" and replay.json() == answers[0].json()
            assert len((await http.get(f"{again.url}/v1/users/carla/memories")).json()["memories"]) == 1
    finally:
        again.stop()
