"""Fairness between tenants behind admission, through the real engine: a flooding tenant's work holds at most its
share of the turn slots, so another tenant's turn is prepared, detected and answered (with its badge) while the
flood's work is still held; and the embedding batches take tenants in rotation."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import numpy as np

from memstack.embed import get_embedder
from memstack.embed.batching import BatchingEmbedder
from memstack.tenancy import current_tenant, serving
from memstack.types import UserRef, Vector
from memstack_testing.openai_server import RecordedRequest

from .conftest import Rig, memories, until

VEGETARIAN = memories(("User is vegetarian", "preference", 0.95))
FLOOD = 40  # more turns than the engine's 32 slots


async def test_a_flooding_tenant_leaves_room_for_another_tenants_turn_and_its_badge(rig: Rig) -> None:
    """Tenant A floods: 40 turns whose detections are all held at the classifier (as a slow classifier or a long
    queue would hold them). Tenant B then says one thing worth remembering. B's detection and the work before its
    model call are admitted beside the flood, so B's reply comes with its badge while every one of A's detections
    is still held; with first come, first served (or rotation alone), A's held detections fill every slot and B
    waits for them."""
    held = asyncio.Event()
    answered_a: list[str] = []  # A's classifier answers, in order

    async def classify(request: RecordedRequest) -> object:
        text = json.dumps(request.messages)
        if "flood" in text:
            await held.wait()  # released by the test; an attempt times out (and is asked again) after 8 s
            answered_a.append(text)
            return {"memories": []}
        return VEGETARIAN

    rig.classify = classify
    async with rig.engine(badge_wait_s=10.0) as ms:
        flood = [
            asyncio.create_task(ms.chat(UserRef(f"a-{n}", tenant="tenant-a"), f"flood message {n}"))
            for n in range(FLOOD)
        ]
        await _settled(rig)  # A's flood has taken every slot it may: its detections are in and held
        quiet = asyncio.create_task(ms.chat(UserRef("b", tenant="tenant-b"), "I'm vegetarian."))
        done, _ = await asyncio.wait({quiet}, timeout=30.0)  # a bound, not a measurement: ends a failing run
        served_a_before_b = len(answered_a)
        asked_a = [json.dumps(r.messages) for r in rig.classifier_requests() if "flood" in json.dumps(r.messages)]
        held.set()
        result = await quiet
        await asyncio.gather(*flood)
        assert done == {quiet}, "tenant B's turn waited behind tenant A's held work"
        # B was answered while A's detections were held at their first attempt: none answered, none timed out and
        # asked again (B did not wait for A's work to give up its slots).
        assert served_a_before_b == 0
        assert len(asked_a) == len(set(asked_a))
        assert [m.content for m in result.memory_updates] == ["User is vegetarian"]  # the badge, not the race
        assert len(answered_a) == FLOOD  # and the flood is served in full afterwards
        assert await ms.wait_idle()


async def _settled(rig: Rig) -> None:
    """Wait until the flood stops making progress (no new chat or classifier call for a while): every one of its
    turns is held at the classifier, waiting for its detection, or waiting for a slot."""
    await until(lambda: len(rig.classifier_requests()) >= 4, timeout=30.0)
    seen, still = (-1, -1), 0
    while still < 20:
        now = (len(rig.classifier_requests()), len(rig.chat_requests()))
        still = still + 1 if now == seen else 0
        seen = now
        await asyncio.sleep(0.05)


class _Recording:
    """An embedder that records, per batch, whose texts it embedded (hash vectors)."""

    def __init__(self) -> None:
        self.inner = get_embedder("hash:8")
        self.batches: list[list[str]] = []
        self.gate = asyncio.Event()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    async def embed(self, texts: Sequence[str]) -> Vector:
        self.batches.append([t.split(":")[0] for t in texts])
        await self.gate.wait()
        return await self.inner.embed(texts)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_embedding_batches_take_tenants_in_rotation() -> None:
    """While a batch is embedded, tenant A queues 200 calls and then tenant B one: B's text is in the very next
    batch, not after A's 200 (three batches of 64 later, first come first served)."""
    inner = _Recording()
    embedder = BatchingEmbedder(inner, max_batch=64)

    async def call(tenant: str, n: int) -> Vector:
        with serving(tenant):
            assert current_tenant() == tenant
            return await embedder.embed([f"{tenant}:{n}"])

    first = asyncio.create_task(call("a", -1))  # the batch being embedded
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    flood = [asyncio.create_task(call("a", n)) for n in range(200)]
    await asyncio.sleep(0)
    quiet = asyncio.create_task(call("b", 0))
    await asyncio.sleep(0)
    inner.gate.set()
    vectors = await asyncio.gather(first, *flood, quiet)
    assert "b" in inner.batches[1]  # the batch after the one running when B asked
    assert all(len(b) <= 64 for b in inner.batches) and sum(len(b) for b in inner.batches) == 202
    expected = await inner.inner.embed(["b:0"])
    assert np.allclose(vectors[-1], expected)  # and each caller gets its own vector back
    await embedder.aclose()
