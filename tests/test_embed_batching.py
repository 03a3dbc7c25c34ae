"""``BatchingEmbedder``: concurrent calls share batches and each caller gets its own rows, in its own order."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from memstack.embed import get_embedder
from memstack.embed.batching import BatchingEmbedder
from memstack.embed.recent import RecentVectors
from memstack.errors import ProviderError
from memstack.tenancy import serving


async def test_concurrent_calls_share_batches_and_get_their_own_rows() -> None:
    inner = get_embedder("hash:32")
    batching = BatchingEmbedder(inner, max_batch=16)
    calls = [[f"text {i} " + "long " * (i % 7) for i in range(j, j + 3)] for j in range(0, 60, 3)]
    results = await asyncio.gather(*(batching.embed(texts) for texts in calls))
    for texts, vectors in zip(calls, results, strict=True):
        assert np.allclose(vectors, await inner.embed(texts))
    assert batching.batches < len(calls)  # shared: 20 calls in fewer runs
    assert batching.name == inner.name and batching.dim == inner.dim
    assert (await batching.embed([])).shape == (0, 32)


class _Failing:
    name, dim = "failing", 4

    async def embed(self, texts: object) -> object:
        raise ProviderError("embeddings endpoint down", status=503, body="")

    async def aclose(self) -> None:
        return None


async def test_every_caller_of_a_failed_batch_gets_the_error_and_the_next_batch_runs() -> None:
    batching = BatchingEmbedder(_Failing())  # type: ignore[arg-type]
    results = await asyncio.gather(*(batching.embed(["x"]) for _ in range(5)), return_exceptions=True)
    assert all(isinstance(r, ProviderError) for r in results)
    with pytest.raises(ProviderError):
        await batching.embed(["again"])


class _Counting:
    """The hash embedder, counting the texts it is asked to embed; ``gate`` holds each call until set."""

    def __init__(self) -> None:
        self.inner = get_embedder("hash:32")
        self.texts: list[str] = []
        self.gate = asyncio.Event()
        self.gate.set()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    async def embed(self, texts: list[str]) -> object:
        self.texts += texts
        await self.gate.wait()
        return await self.inner.embed(texts)

    async def aclose(self) -> None:
        return None


async def test_a_text_embedded_moments_ago_is_not_embedded_again() -> None:
    inner = _Counting()
    batching = BatchingEmbedder(inner)  # type: ignore[arg-type]
    first = await batching.embed(["User keeps bees.", "User keeps bees.", "User lives in Ghent."])
    assert inner.texts == ["User keeps bees.", "User lives in Ghent."]  # each text once, even within a call
    again = await batching.embed(["User lives in Ghent.", "User rows on Sundays."])
    assert inner.texts[2:] == ["User rows on Sundays."]
    assert np.allclose(again[0], first[2]) and np.allclose(first[0], first[1])
    assert np.allclose(again, await inner.inner.embed(["User lives in Ghent.", "User rows on Sundays."]))
    again[0] += 1.0  # a caller's rows are its own: changing them changes nothing kept
    assert np.allclose((await batching.embed(["User lives in Ghent."]))[0], first[2])


async def test_another_tenant_is_never_answered_from_the_cache() -> None:
    inner = _Counting()
    batching = BatchingEmbedder(inner)  # type: ignore[arg-type]
    with serving("acme"):
        await batching.embed(["User keeps bees."])
    with serving("globex"):
        await batching.embed(["User keeps bees."])
    assert inner.texts == ["User keeps bees."] * 2


async def test_forget_recent_drops_the_vectors_and_a_call_in_flight_keeps_none() -> None:
    inner = _Counting()
    batching = BatchingEmbedder(inner)  # type: ignore[arg-type]
    await batching.embed(["User keeps bees."])
    batching.forget_recent()
    assert len(batching.recent) == 0
    inner.gate.clear()
    flight = asyncio.create_task(batching.embed(["User lives in Ghent."]))
    await asyncio.sleep(0.01)
    batching.forget_recent()  # an erasure while the text is being embedded
    inner.gate.set()
    await flight
    assert len(batching.recent) == 0
    await batching.embed(["User keeps bees."])
    assert inner.texts == ["User keeps bees.", "User lives in Ghent.", "User keeps bees."]


def test_recent_vectors_expire_and_stay_bounded() -> None:
    now = [0.0]
    recent = RecentVectors(size=2, ttl_s=10.0, clock=lambda: now[0])
    a, b, c = (recent.key("t", x) for x in "abc")
    rows = np.eye(3, dtype=np.float32)
    recent.put([a, b, c], rows, generation=recent.generation)
    assert len(recent) == 2 and recent.get([a]) == {}  # the oldest went
    kept = recent.get([b, c])
    assert np.allclose(kept[b], rows[1]) and np.allclose(kept[c], rows[2])
    now[0] = 10.5
    assert recent.get([b, c]) == {} and len(recent) == 0
    assert recent.key("t", "a") != recent.key("u", "a")  # tenants never share a key


async def test_a_text_being_embedded_is_waited_for_not_embedded_twice() -> None:
    inner = _Counting()
    batching = BatchingEmbedder(inner)  # type: ignore[arg-type]
    inner.gate.clear()
    first = asyncio.create_task(batching.embed(["My cousin moved to Lisbon."]))
    await asyncio.sleep(0.01)  # recall's embedding of the message is running
    second = asyncio.create_task(batching.embed(["I like figs.", "My cousin moved to Lisbon."]))  # capture's
    await asyncio.sleep(0.01)
    inner.gate.set()
    one, two = await asyncio.gather(first, second)
    assert inner.texts == ["My cousin moved to Lisbon.", "I like figs."]
    assert np.allclose(one[0], two[1])


class _Uncased(_Counting):
    def cache_key(self, text: str) -> str:
        return text.lower()

    def embed_sync(self, texts: list[str]) -> object:
        self.texts += texts
        return np.full((len(texts), 32), 0.1, dtype=np.float32)


async def test_texts_the_model_reads_alike_share_a_vector_and_the_blocking_call_shares_the_cache() -> None:
    inner = _Uncased()
    batching = BatchingEmbedder(inner)  # type: ignore[arg-type]
    await batching.embed(["User keeps Bees."])
    embed_sync = batching.embed_sync  # the guard's call, in a thread
    rows = await asyncio.to_thread(embed_sync, ["user keeps bees.", "user rows."])  # type: ignore[operator]
    assert inner.texts == ["User keeps Bees.", "user rows."] and rows.shape == (2, 32)
    await batching.embed(["USER ROWS."])
    assert inner.texts == ["User keeps Bees.", "user rows."]
