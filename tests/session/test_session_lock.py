"""The in-process per-session lock: FIFO, phase 2 released from another task, timeouts, cleanup."""

from __future__ import annotations

import asyncio

import pytest

from memstack.errors import StoreBusy
from memstack.session import OfflineSummarizer, SummaryRunner
from memstack.session.lock import LocalSessionLocks
from memstack.types import Exchange, Fact, TurnSummary


async def test_fifty_concurrent_turns_run_in_order_and_lose_no_diff() -> None:
    locks = LocalSessionLocks()
    runner = SummaryRunner(OfflineSummarizer())
    state: dict[str, list] = {"base_truth": [], "turn_log": []}  # type: ignore[type-arg]
    turn_counter = 0
    background: set[asyncio.Task[None]] = set()

    async def phase2(ex: Exchange, release) -> None:  # type: ignore[no-untyped-def]
        try:
            await asyncio.sleep(0.001 * (ex.turn % 3))  # phase 2 takes a while, sometimes longer
            result = await runner.run(ex, state["base_truth"])
            state["base_truth"] = list(result.base_truth)
            state["turn_log"].append(result.summary)
        finally:
            await release()

    async def chat(i: int) -> None:
        nonlocal turn_counter
        held = await locks.acquire("s1")
        turn_counter += 1  # phase 1 reads the state the previous phase 2 left
        n = turn_counter
        assert len(state["turn_log"]) == n - 1
        ex = Exchange(n, f"My setting{i} is value{i}.", f"Noted setting{i}.")
        task = asyncio.create_task(phase2(ex, held.release))
        background.add(task)
        task.add_done_callback(background.discard)

    await asyncio.gather(*(chat(i) for i in range(50)))
    async with locks.hold("s1"):
        pass
    log: list[TurnSummary] = state["turn_log"]
    assert [t.turn for t in log] == list(range(1, 51))
    facts: list[Fact] = state["base_truth"]
    assert sorted(f.text for f in facts) == sorted(f"Setting{i}: value{i}" for i in range(50))
    assert len(locks) == 0


async def test_sessions_do_not_block_each_other_and_timeouts_raise_store_busy() -> None:
    locks = LocalSessionLocks()
    held = await locks.acquire("a")
    other = await asyncio.wait_for(locks.acquire("b"), 1)  # another session is free
    with pytest.raises(StoreBusy, match="still busy"):
        await locks.acquire("a", timeout=0.05)
    await held.release()
    await held.release()  # idempotent
    again = await locks.acquire("a", timeout=1)
    await again.release()
    await other.release()
    assert len(locks) == 0


async def test_cancelled_waiter_does_not_leak() -> None:
    locks = LocalSessionLocks()
    held = await locks.acquire("a")
    waiter = asyncio.create_task(locks.acquire("a"))
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await held.release()
    assert len(locks) == 0
