"""Session leases on every backend: one holder across processes, fencing of stale holders, takeover of stalled and
crashed ones, renewal, and no connection held while a session is held (``memstack.store.leases``)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlparse

import pytest

from memstack.errors import LeaseLost, StoreBusy
from memstack.store.base import Store
from memstack.store.leases import owner_alive, process_owner
from memstack.types import ArchivedTurn, TurnCommit, TurnStatus, TurnSummary, UserRef

ALICE = UserRef("alice")
HOLDER = Path(__file__).with_name("lease_holder.py")
AT = datetime(2025, 1, 1, tzinfo=UTC)


def _turn(n: int, text: str = "") -> ArchivedTurn:
    return ArchivedTurn("s1", n, text or f"message {n}", f"reply {n}", AT)


def _commit(n: int, version: int) -> TurnCommit:
    return TurnCommit(n, TurnStatus.SUMMARIZED, TurnSummary(n, "asked", "answered"), (), version)


def _url(store: Store, tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> tuple[str, str]:
    """The URL another process opens this test's store with, and its pooler setting."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'memstack.db'}", "none"
    url = str(request.getfixturevalue("postgres_url"))
    if backend == "pgbouncer":
        return request.getfixturevalue("pgbouncer").url(urlparse(url).path.lstrip("/")), "transaction"
    return url, "none"


async def test_a_stale_hold_cannot_write(store: Store) -> None:
    """Fencing: the writes of a hold that another hold replaced are refused, and nothing is written."""
    await store.sessions.open(ALICE, "s1")
    first = await store.sessions.acquire(ALICE, "s1")
    stale = first.lease
    assert stale is not None
    await first.release()
    second = await store.sessions.acquire(ALICE, "s1")
    assert second.lease is not None and second.lease.token > stale.token
    with pytest.raises(LeaseLost, match="another process took the session over"):
        await store.sessions.record(ALICE, _turn(1, "stale"), lease=stale)
    await store.sessions.record(ALICE, _turn(1, "current"), lease=second.lease)
    state = await store.sessions.open(ALICE, "s1")
    with pytest.raises(LeaseLost):
        await store.sessions.commit(ALICE, "s1", _commit(1, state.version), lease=stale)
    after = await store.sessions.open(ALICE, "s1")
    assert after.version == state.version and after.turn_log == ()  # the stale commit wrote nothing
    await store.sessions.commit(ALICE, "s1", _commit(1, state.version), lease=second.lease)
    turns = await store.archive.turns(ALICE, session_id="s1")
    assert [(t.turn, t.user, t.status) for t in turns] == [(1, "current", TurnStatus.SUMMARIZED)]
    await second.release()


async def test_try_acquire_does_not_wait(store: Store) -> None:
    held = await store.sessions.acquire(ALICE, "s1")
    started = time.monotonic()
    with pytest.raises(StoreBusy):
        await store.sessions.acquire(ALICE, "s1", timeout=0)
    assert time.monotonic() - started < 1.0
    await held.release()
    again = await store.sessions.acquire(ALICE, "s1", timeout=0)
    await again.release()


async def test_a_lease_outlives_its_ttl_while_renewed(make_store, backend: str) -> None:  # type: ignore[no-untyped-def]
    first, second = await make_store(), await make_store()
    first.sessions.leases.ttl_s = second.sessions.leases.ttl_s = 0.6  # short leases for this test
    held = await first.sessions.acquire(ALICE, "s1")
    with pytest.raises(StoreBusy):
        await second.sessions.acquire(ALICE, "s1", timeout=1.5)  # 2.5 lease periods: renewed all along
    await held.release()
    taken = await second.sessions.acquire(ALICE, "s1", timeout=2)
    await taken.release()


def _start_holder(where: tuple[str, str], lease_s: float) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, str(HOLDER), where[0], str(lease_s), where[1]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, "the lease holder did not start"
    return proc, int(json.loads(line)["held"])


async def test_a_stalled_holder_is_taken_over_and_then_fenced(  # type: ignore[no-untyped-def]
    make_store, backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A process that stops (SIGSTOP: a long pause, a frozen VM) loses its sessions after the lease; when it
    wakes up, its write is refused, and the turn of the process that took over stands."""
    store = await make_store()
    proc, token = await asyncio.to_thread(_start_holder, _url(store, tmp_path, backend, request), 1.0)
    try:
        os.kill(proc.pid, signal.SIGSTOP)
        with pytest.raises(StoreBusy):
            await store.sessions.acquire(ALICE, "s1", timeout=0.2)  # alive, and its lease not lapsed yet
        held = await store.sessions.acquire(ALICE, "s1", timeout=10)  # lapses within a second
        assert held.lease is not None and held.lease.token == token + 1
        await store.sessions.record(ALICE, _turn(1, "the process that took over"), lease=held.lease)
        os.kill(proc.pid, signal.SIGCONT)
        out, _ = await asyncio.to_thread(proc.communicate, "go\n", 30)
        assert json.loads(out.splitlines()[-1]) == {"error": "LeaseLost"}
        turns = await store.archive.turns(ALICE, session_id="s1")
        assert [t.user for t in turns] == ["the process that took over"]
        await held.release()
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.wait()


async def test_a_crashed_holder_on_this_machine_is_taken_over_at_once(  # type: ignore[no-untyped-def]
    make_store, backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A restarted server does not wait out its predecessor's leases: a dead holder on this host is known dead."""
    store = await make_store()
    proc, token = await asyncio.to_thread(_start_holder, _url(store, tmp_path, backend, request), 600.0)
    proc.kill()
    proc.wait()
    started = time.monotonic()
    held = await store.sessions.acquire(ALICE, "s1", timeout=5)  # the lease had ten minutes left
    assert time.monotonic() - started < 2.0
    assert held.lease is not None and held.lease.token == token + 1
    await held.release()


def test_owner_liveness() -> None:
    mine = process_owner()
    assert owner_alive(mine)
    assert owner_alive("another-host:1:2:lease_x")  # another machine: only its lease tells
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    host, namespace, _, nonce = mine.split(":", 3)
    assert not owner_alive(f"{host}:{namespace}:{pid}:{nonce}")
