"""Query embeddings for many concurrent requests: an LRU cache and micro-batching.

Every search embeds its query (all-MiniLM: ~5 ms of one core per text, far less per text in a batch). Under load the
server (1) answers repeated queries from an LRU cache of recent embeddings, and (2) coalesces the misses that arrive
while a batch is being embedded into the next single batch call, so N waiting queries cost one ONNX run instead of N.
There is no waiting window: a lone query is embedded at once; batching happens only when queries queue up anyway.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from memstack.embed import Embedder
from memstack.types import Vector

__all__ = ["QueryEmbedder"]


class QueryEmbedder:
    """``await embed(text)`` → one unit vector; concurrent calls share batches and the cache."""

    def __init__(self, embedder: Embedder, *, cache_size: int = 4096, max_batch: int = 64) -> None:
        self._embedder = embedder
        self._cache: OrderedDict[str, Vector] = OrderedDict()
        self._cache_size = cache_size
        self._max_batch = max_batch
        self._queue: dict[str, asyncio.Future[Vector]] = {}  # waiting for the next batch
        self._running: dict[str, asyncio.Future[Vector]] = {}  # in the batch being embedded
        self._worker: asyncio.Task[None] | None = None
        self.hits = 0
        self.misses = 0
        self.batches = 0

    async def embed(self, text: str) -> Vector:
        cached = self._cache.get(text)
        if cached is not None:
            self._cache.move_to_end(text)
            self.hits += 1
            return cached
        self.misses += 1
        future = self._queue.get(text) or self._running.get(text)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._queue[text] = future
            if self._worker is None or self._worker.done():
                self._worker = asyncio.create_task(self._drain())
        return await asyncio.shield(future)

    async def _drain(self) -> None:
        while self._queue:
            texts = list(self._queue)[: self._max_batch]
            self._running = {t: self._queue.pop(t) for t in texts}
            self.batches += 1
            try:
                vectors = await self._embedder.embed(texts)
            except BaseException as exc:  # every waiter gets the embedder's own error, then the worker stops
                for future in self._running.values():
                    if not future.done():
                        future.set_exception(exc)
                        future.exception()  # retrieved here too: a waiter that went away must not log it
                self._running = {}
                if not isinstance(exc, Exception):
                    raise
                continue
            for text, vector in zip(texts, vectors, strict=True):
                self._remember(text, vector)
                future = self._running[text]
                if not future.done():
                    future.set_result(vector)
            self._running = {}

    def _remember(self, text: str, vector: Vector) -> None:
        if self._cache_size <= 0:
            return
        self._cache[text] = vector
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    async def aclose(self) -> None:
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
        for future in (*self._queue.values(), *self._running.values()):
            future.cancel()
        self._queue, self._running = {}, {}
        self._cache.clear()
