"""The server's query embedder: concurrent misses share one batch call, repeats come from the LRU cache, and an
embedder failure reaches every waiter without wedging later calls."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest

from memstack.errors import ProviderError
from memstack.server.embedding import QueryEmbedder
from memstack.types import Vector
from memstack_testing.hashing import HashingEmbedder


class SlowEmbedder(HashingEmbedder):
    """The deterministic test embedder, slowed down like a real model and recording each batch it is given."""

    def __init__(self) -> None:
        super().__init__(32)
        self.batches: list[list[str]] = []
        self.fail_next = False

    async def embed(self, texts: Sequence[str]) -> Vector:
        self.batches.append(list(texts))
        await asyncio.sleep(0.02)
        if self.fail_next:
            self.fail_next = False
            raise ProviderError("embedding endpoint down", status=503)
        return await super().embed(texts)


async def test_concurrent_queries_share_batches_and_match_direct_embeddings() -> None:
    inner = SlowEmbedder()
    queries = QueryEmbedder(inner, max_batch=16)
    texts = [f"query number {i}" for i in range(40)]
    vectors = await asyncio.gather(*(queries.embed(t) for t in texts))
    assert len(inner.batches) < 10  # one for the first query, then whatever queued meanwhile, 16 at most
    assert max(len(b) for b in inner.batches) <= 16 and sum(len(b) for b in inner.batches) == 40
    expected = await HashingEmbedder(32).embed(texts)
    np.testing.assert_allclose(np.stack(vectors), expected, rtol=1e-6)


async def test_repeats_come_from_the_cache_and_concurrent_duplicates_are_embedded_once() -> None:
    inner = SlowEmbedder()
    queries = QueryEmbedder(inner, cache_size=2)
    await asyncio.gather(*(queries.embed("same text") for _ in range(10)))
    assert inner.batches == [["same text"]]
    await queries.embed("same text")
    assert len(inner.batches) == 1 and queries.hits >= 1
    await queries.embed("b")
    await queries.embed("c")  # the cache holds two: "same text" is evicted
    await queries.embed("same text")
    assert inner.batches[-1] == ["same text"]


async def test_a_failure_reaches_every_waiter_and_the_next_call_works() -> None:
    inner = SlowEmbedder()
    queries = QueryEmbedder(inner)
    inner.fail_next = True
    results = await asyncio.gather(*(queries.embed(f"t{i}") for i in range(3)), return_exceptions=True)
    assert all(isinstance(r, ProviderError) for r in results)
    vector = await queries.embed("t0")
    assert vector.shape == (32,)
    await queries.aclose()
    with pytest.raises(asyncio.CancelledError):
        pending = asyncio.ensure_future(queries.embed("after close"))
        await asyncio.sleep(0)
        await queries.aclose()
        await pending
