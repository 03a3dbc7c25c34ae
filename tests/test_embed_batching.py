"""``BatchingEmbedder``: concurrent calls share batches and each caller gets its own rows, in its own order."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from memstack.embed import get_embedder
from memstack.embed.batching import BatchingEmbedder
from memstack.errors import ProviderError


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
