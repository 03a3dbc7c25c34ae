"""Issue 5's "done when", over real stores: 50 concurrent turns on one session (two service instances sharing the
database where the backend serves several processes), and a process killed with SIGKILL during phase 2."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from memstack.session import OfflineSummarizer, SessionService, SessionSettings, TurnDraft
from memstack.store.base import Store
from memstack.types import Exchange, Fact, Route, TurnStatus, UserRef

ALICE = UserRef("alice")


class JitteryOffline(OfflineSummarizer):
    """The offline summarizer, taking a few random milliseconds per turn so phases overlap differently each run."""

    async def summarize_turn(self, exchange: Exchange, base_truth: Sequence[Fact], route: Route) -> TurnDraft:
        await asyncio.sleep(random.uniform(0, 0.004))
        return await super().summarize_turn(exchange, base_truth, route)


async def test_fifty_concurrent_turns_in_order_with_no_diff_lost(make_store, backend: str) -> None:  # type: ignore[no-untyped-def]
    stores: list[Store] = [await make_store() for _ in range(1 if backend == "sqlite" else 2)]
    services = [SessionService(store, JitteryOffline()) for store in stores]
    seen: dict[int, tuple[int, int, frozenset[str]]] = {}  # turn → (message index, log entries, facts) at phase 1
    phase2: list[asyncio.Task[object]] = []

    async def chat(i: int) -> None:
        svc = services[i % len(services)]
        handle = await svc.begin_turn(ALICE, "s1")
        state = handle.state
        seen[handle.turn] = (i, len(state.turn_log), frozenset(f.text for f in state.base_truth))
        await asyncio.sleep(random.uniform(0, 0.003))  # phase 1: the chat model
        task = asyncio.create_task(svc.finish_turn(handle, f"My setting{i} is value{i}.", f"Noted setting{i}."))
        phase2.append(task)  # type: ignore[arg-type]

    await asyncio.gather(*(chat(i) for i in range(50)))
    await asyncio.gather(*phase2)

    assert sorted(seen) == list(range(1, 51))
    if len(services) == 1:
        assert [seen[n][0] for n in range(1, 51)] == list(range(50))  # served in arrival order
    for n in range(1, 51):  # each turn saw exactly what every earlier turn left, and nothing of later ones
        _, log_entries, facts = seen[n]
        assert log_entries == n - 1
        assert facts == {f"Setting{seen[k][0]}: value{seen[k][0]}" for k in range(1, n)}
    state = await stores[0].sessions.open(ALICE, "s1")
    assert [t.turn for t in state.turn_log] == list(range(1, 51))
    assert {f.text for f in state.base_truth} == {f"Setting{i}: value{i}" for i in range(50)}
    assert state.turn_count == 50 and state.version == 50 and state.flagged_turns == ()
    archived = await stores[-1].archive.turns(ALICE, session_id="s1")
    assert [(t.turn, t.user) for t in archived] == [(n, f"My setting{seen[n][0]} is value{seen[n][0]}.") for n in seen]
    assert all(t.status is TurnStatus.SUMMARIZED for t in archived)


_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from memstack.session import OfflineSummarizer, SessionService, SessionSettings
    from memstack.types import UserRef

    class HangsOnTurnTwo(OfflineSummarizer):
        async def summarize_turn(self, exchange, base_truth, route):
            if exchange.turn == 2:
                print("phase 2 of turn 2 started", flush=True)
                await asyncio.sleep(3600)
            return await super().summarize_turn(exchange, base_truth, route)

    async def open_store(backend, where):
        if backend == "sqlite":
            from memstack.store.sqlite import SQLiteStore
            return await SQLiteStore.open(where, dim=8, embedder="test:8")
        from memstack.store.postgres import PostgresStore
        return await PostgresStore.open(where, dim=8, embedder="test:8")

    async def main():
        store = await open_store(sys.argv[1], sys.argv[2])
        svc = SessionService(store, HangsOnTurnTwo(), SessionSettings(timeout_s=3600))
        alice = UserRef("alice")
        first = await svc.begin_turn(alice, "s1")
        await svc.finish_turn(first, "My editor is Vim.", "Vim it is.")
        second = await svc.begin_turn(alice, "s1")
        await svc.finish_turn(second, "Actually my editor is Helix now.", "Helix, noted.")

    asyncio.run(main())
    """
)


async def test_a_process_killed_during_phase_two_leaves_the_turn_flagged(  # type: ignore[no-untyped-def]
    make_store, backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    where = str(tmp_path / "memstack.db") if backend == "sqlite" else request.getfixturevalue("postgres_url")
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, backend, where], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 60)  # type: ignore[union-attr]
        assert line.strip() == "phase 2 of turn 2 started", child.stderr.read() if child.stderr else ""
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    assert child.returncode == -signal.SIGKILL

    store = await make_store()
    state = await store.sessions.open(ALICE, "s1", create=False)
    assert state.turn_count == 2 and state.flagged_turns == (2,)
    assert [f.text for f in state.base_truth] == ["Editor: Vim"]
    [pending] = await store.sessions.pending()
    assert (pending.turn_id, pending.status) == ("s1:2", TurnStatus.PENDING)
    assert [m.content for m in state.raw_window][-2:] == ["Actually my editor is Helix now.", "Helix, noted."]

    svc = SessionService(store, OfflineSummarizer(), SessionSettings())
    assert await svc.resume_pending() == 1
    state = await store.sessions.open(ALICE, "s1")
    assert state.flagged_turns == () and [t.turn for t in state.turn_log] == [1, 2]
    assert [f.text for f in state.base_truth] == ["Editor: Helix"]
    handle = await asyncio.wait_for(svc.begin_turn(ALICE, "s1"), 10)  # nothing of the dead process holds the lock
    assert handle.turn == 3
    await svc.abort_turn(handle)
