"""An acknowledged erasure is final (issue 24): work for the user that was running when the erasure committed (an
import of a long history, the first chat turn after a start, background work a previous process left pending)
writes nothing after it, whichever process runs it; afterwards no table holds anything of the user.

Each round opens a fresh engine (a server start) on the store, which resumes a detection and a phase 2 left pending
for the user, and starts an import of a long conversation and a chat turn for them; a second engine on the same
store (another process), or the worker itself, erases the user while all of it runs, at a point drawn at random:
after a random number of the import's exchanges, with the turn's model call still waiting or just answered. When
everything has settled, the database catalogue (every table holding user data,
:class:`store.test_users_contract.Catalogue`) must hold no row of the user, the context manifest of the turn
included, and another user's rows must be as they were.

``MEMSTACK_ERASE_RACES`` sets the rounds per backend (default 5; ``MEMSTACK_ERASE_RACES=50`` for the full run).
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstack.capture.pipeline import DETECT
from memstack.engine import AsyncMemstack
from memstack.errors import UserErased
from memstack.types import ArchivedTurn, UserRef
from memstack_testing.openai_server import RecordedRequest, Reply
from store.test_users_contract import Catalogue  # tests/ is on sys.path (its conftest)

from .conftest import BACKENDS, Rig, memories, until

ROUNDS = int(os.environ.get("MEMSTACK_ERASE_RACES", "5"))
EXCHANGES = 30
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
BYSTANDER = UserRef("bystander", tenant="race")


def _history(n: int) -> list[dict[str, Any]]:
    said = []
    for i in range(n):
        at = START + timedelta(minutes=3 * i)
        said.append({"role": "user", "content": f"My hobby number {i} is carving spoon {i}.", "at": at})
        said.append({"role": "assistant", "content": f"Spoon {i} sounds lovely.", "at": at + timedelta(minutes=1)})
    return said


async def _leave_pending(ms: AsyncMemstack, user: UserRef) -> None:
    """What a process that died mid-work leaves for the user: a detection not run, a turn without its phase 2."""
    payload = {
        "tenant": user.tenant,
        "user_id": user.user_id,
        "message": "I am allergic to hazelnuts.",
        "at": START.isoformat(),
        "tier": "free",
        "session_id": None,
        "turn": None,
        "agent_id": None,
    }
    await ms.store.jobs.enqueue(DETECT, f"pending:{user.user_id}", payload)
    held = await ms.store.sessions.acquire(user, "left")
    try:
        await ms.store.sessions.open(user, "left")
        turn = ArchivedTurn("left", 1, "I train for a marathon in May.", "Good luck!", START)
        await ms.store.sessions.record(user, turn, lease=held.lease)
    finally:
        await held.release()


@pytest.mark.parametrize("rig", BACKENDS, indirect=True)
async def test_work_in_flight_leaves_nothing_of_an_erased_user(rig: Rig) -> None:
    rng = random.Random(24)
    gate = threading.Event()  # the chat model answers once it is set (the scripted server runs in its own thread)

    async def answer(request: RecordedRequest) -> Reply:
        while not gate.is_set():
            await asyncio.sleep(0.002)
        return Reply.text("Noted.")

    async def classify(request: RecordedRequest) -> object:
        said = request.last_user_message or ""
        return memories((f"User said: {said[-60:]}", "general", 0.9))

    rig.answer, rig.classify = answer, classify
    outcomes: Counter[str] = Counter()
    async with rig.engine(resume=False) as eraser:  # another process sharing the store
        db = Catalogue("sqlite" if rig.database_url is None else "postgres", eraser.store, rig.database_url)
        gate.set()
        await eraser.ingest(BYSTANDER, "theirs", _history(3))
        await eraser.chat(BYSTANDER, "I play the cello.")
        await eraser.wait_idle()
        bystander = db.counts(BYSTANDER)
        for round_ in range(ROUNDS):
            user = UserRef(f"racer-{round_}", tenant="race")
            await _leave_pending(eraser, user)
            gate.clear()
            summarized, asked = len(rig.times("summarizer", "in")), len(rig.chat_requests())
            async with rig.engine() as worker:  # a server start: resumes the user's pending work at once
                work = [
                    asyncio.ensure_future(worker.ingest(user, "history", _history(EXCHANGES))),
                    asyncio.ensure_future(worker.chat(user, "I keep bees on my roof.")),  # the first turn
                ]
                # Erase once the turn waits for its model and the import is k exchanges in (both have begun).
                k = rng.randint(1, EXCHANGES)

                def begun(asked: int = asked, summarized: int = summarized, k: int = k) -> bool:
                    return len(rig.chat_requests()) > asked and len(rig.times("summarizer", "in")) - summarized >= k

                await until(begun, timeout=60)
                if rng.random() < 0.5:  # the turn answered just before (its record, manifest, phase 2 under way)
                    gate.set()
                    await asyncio.sleep(rng.uniform(0, 0.05))
                # by the other engine (another process: nothing in this one knows), or by the worker itself
                await (eraser if rng.random() < 0.5 else worker).erase(user)
                gate.set()
                for done in await asyncio.gather(*work, return_exceptions=True):
                    if isinstance(done, BaseException) and not isinstance(done, UserErased):
                        raise done
                    outcomes["refused" if isinstance(done, UserErased) else "finished before"] += 1
                await worker.wait_idle()
            left = {table: n for table, n in db.counts(user).items() if n}
            assert left == {}, f"round {round_} (k={k}): rows of the erased user remain: {left}"
        assert db.counts(BYSTANDER) == bystander
    print(f"\nerasure races on {db.backend}: {ROUNDS} rounds, work {dict(outcomes)}")
    assert outcomes["refused"] > 0, outcomes  # the erasure did land while work was in flight
