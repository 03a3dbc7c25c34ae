"""Concurrent embedding calls coalesced into shared batches (the engine wraps its embedder in this).

A busy process embeds many short texts at once: each turn's message, its reply, memory candidates, queries. One
ONNX run per text costs several times the CPU per text of a batch, and runs started side by side contend for the
same cores. :class:`BatchingEmbedder` queues the calls that arrive while a batch is being embedded and embeds them
together in the next one (up to ``max_batch`` texts; a caller's texts are never split across batches unless it
asks for more than that). There is no waiting window: a lone call is embedded at once. Texts are sorted by length
inside a batch, so short texts are not padded to the length of a long one.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence

import numpy as np

from memstack.embed.base import Embedder
from memstack.types import Vector

__all__ = ["BatchingEmbedder"]


class BatchingEmbedder:
    """An :class:`~memstack.embed.Embedder` over ``inner`` whose concurrent calls share batches."""

    def __init__(self, inner: Embedder, *, max_batch: int = 64) -> None:
        self.inner = inner
        self._max_batch = max_batch
        self._queue: deque[tuple[list[str], asyncio.Future[Vector]]] = deque()
        self._worker: asyncio.Task[None] | None = None
        self.batches = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def __getattr__(self, name: str) -> object:  # the inner embedder's extras (embed_sync, settings)
        return getattr(self.inner, name)

    async def embed(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        future: asyncio.Future[Vector] = asyncio.get_running_loop().create_future()
        self._queue.append((list(texts), future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain(), name="memstack-embed-batches")
        return await asyncio.shield(future)

    async def _drain(self) -> None:
        while self._queue:
            batch: list[tuple[list[str], asyncio.Future[Vector]]] = [self._queue.popleft()]
            size = len(batch[0][0])
            while self._queue and size + len(self._queue[0][0]) <= self._max_batch:
                batch.append(self._queue.popleft())
                size += len(batch[-1][0])
            texts = [t for asked, _ in batch for t in asked]
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            self.batches += 1
            try:
                sorted_vectors = await self.inner.embed([texts[i] for i in order])
            except BaseException as exc:  # every caller of the batch gets the embedder's own error
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                        future.exception()  # retrieved: a caller that went away must not log it
                if not isinstance(exc, Exception):
                    raise
                continue
            vectors = np.empty_like(sorted_vectors)
            vectors[order] = sorted_vectors
            start = 0
            for asked, future in batch:
                if not future.done():
                    future.set_result(vectors[start : start + len(asked)])
                start += len(asked)

    async def aclose(self) -> None:
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
        for _, future in self._queue:
            future.cancel()
        self._queue.clear()
        await self.inner.aclose()
