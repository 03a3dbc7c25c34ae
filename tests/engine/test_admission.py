"""Admission of turn work (``memstack.turn.admission.FairGate``) and ``memstack bench sessions`` at a test's scale."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from click.testing import CliRunner

from memstack.cli import main
from memstack.errors import InputError
from memstack.turn.admission import FairGate


async def test_slots_go_to_tenants_in_rotation() -> None:
    gate = FairGate(1)
    order: list[str] = []
    release = asyncio.Event()

    async def work(tenant: str, name: str) -> None:
        async with gate.slot(tenant):
            order.append(name)
            await release.wait()

    first = asyncio.create_task(work("busy", "busy-0"))
    await asyncio.sleep(0)
    tasks = [asyncio.create_task(work("busy", f"busy-{i}")) for i in range(1, 6)]
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(work("quiet", "quiet-0")))  # arrives after five of the busy tenant's
    await asyncio.sleep(0)
    assert gate.active == 1 and gate.waiting == 6
    release.set()
    await asyncio.gather(first, *tasks)
    assert order[:3] == ["busy-0", "busy-1", "quiet-0"]  # the quiet tenant waits for one busy piece, not five
    assert order[3:] == ["busy-2", "busy-3", "busy-4", "busy-5"]
    assert gate.active == 0 and gate.waiting == 0


async def test_capacity_bounds_the_work_at_once_and_a_cancelled_waiter_gives_its_place() -> None:
    gate = FairGate(3, per_tenant=3)
    running = peak = 0

    async def work() -> None:
        nonlocal running, peak
        async with gate.slot("t"):
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.01)
            running -= 1

    others = [asyncio.create_task(work()) for _ in range(20)]
    await asyncio.sleep(0)
    waiter = asyncio.create_task(work())  # queued behind the twenty
    await asyncio.sleep(0)
    assert gate.waiting == 18
    waiter.cancel()
    await asyncio.gather(*others)
    assert waiter.cancelled()
    assert peak == 3 and gate.active == 0 and gate.waiting == 0
    with pytest.raises(InputError):
        FairGate(0)
    with pytest.raises(InputError):
        FairGate(3, per_tenant=4)


async def test_a_tenant_holds_at_most_its_share_and_the_others_are_admitted_at_once() -> None:
    """Eight slots, two a tenant: the busy tenant's ten pieces take two, the quiet tenant's piece is admitted at
    once (not after the busy pieces), and the busy tenant's waiting pieces keep their order."""
    gate = FairGate(8, per_tenant=2)
    order: list[str] = []
    release = asyncio.Event()

    async def work(tenant: str, name: str) -> None:
        async with gate.slot(tenant):
            order.append(name)
            await release.wait()

    busy = [asyncio.create_task(work("busy", f"busy-{i}")) for i in range(10)]
    await asyncio.sleep(0)
    assert gate.held("busy") == 2 and gate.waiting == 8 and gate.active == 2
    quiet = asyncio.create_task(work("quiet", "quiet-0"))
    await asyncio.sleep(0)
    assert order == ["busy-0", "busy-1", "quiet-0"]
    release.set()
    await asyncio.gather(*busy, quiet)
    assert order[3:] == [f"busy-{i}" for i in range(2, 10)]
    assert gate.active == 0 and gate.waiting == 0 and gate.held("busy") == 0


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_bench_sessions_reports_a_clean_run(backend: str, postgres_url: str) -> None:
    """The command the README quotes, small: every session's turns answered in order, none refused, the other
    tenant answered meanwhile, the pool within its bound (PostgreSQL)."""
    env = {**os.environ, "MEMSTACK_DATABASE_URL": postgres_url} if backend == "postgres" else None
    args = ["bench", "sessions", "--backend", backend, "--sessions", "60", "--turns", "2", "--model-delay", "1.5"]
    result = CliRunner().invoke(main, [*args, "--pool", "4", "--json"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["errors"] == 0, report["error_samples"]
    assert report["order_ok"] is True
    assert report["other_tenant_turns"] >= 1
    assert report["turn_p50_s"] >= 1.5  # the model's delay is in every turn: the figure times real turns
    if backend == "postgres":
        assert report["pool_max"] == 4
