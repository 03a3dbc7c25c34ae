"""Concurrent embedding calls coalesced into shared batches (the engine wraps its embedder in this).

A busy process embeds many short texts at once: each turn's message, its reply, memory candidates, queries. One
ONNX run per text costs several times the CPU per text of a batch, and runs started side by side contend for the
same cores. :class:`BatchingEmbedder` queues the calls that arrive while a batch is being embedded and embeds them
together in the next one (up to ``max_batch`` texts; a caller's texts are never split across batches unless it
asks for more than that). There is no waiting window: a lone call is embedded at once. Texts are sorted by length
inside a batch, so short texts are not padded to the length of a long one.

Calls queue per tenant (:func:`memstack.tenancy.current_tenant`, set by the turn's admission), and a batch is filled
from the tenants in rotation, one call each per round: a tenant that floods the embedder (an import, a burst of
turns) cannot push another tenant's call behind its whole backlog; the other call is in the next batch, or the one
after when the flood's call at the head of the rotation fills a batch by itself. A lone tenant's calls keep their
order and fill batches as before.

Texts embedded moments ago by the same tenant are answered from :class:`~memstack.embed.recent.RecentVectors`
(``recent_size`` entries kept ``recent_ttl_s`` seconds; 0 turns it off), a text another call is having embedded
right now is waited for, and only the others are queued, each once however often a call repeats it: a turn's
message is embedded once for recall and capture, its candidate once for the nearest memories and the update judge.
The blocking ``embed_sync`` (the guard's, from a worker thread) reads and fills the same cache, and a caller that
holds stored vectors of texts about to be embedded (a turn's recalled memories) hands them in (:meth:`known`).
:meth:`BatchingEmbedder.forget_recent` drops it (an erasure calls it; a benchmark that times cold work does too).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Sequence

import numpy as np

from memstack.embed.base import Embedder
from memstack.embed.recent import RecentVectors
from memstack.tenancy import current_tenant
from memstack.types import Vector

__all__ = ["BatchingEmbedder"]

_Call = tuple[list[str], asyncio.Future[Vector]]


class BatchingEmbedder:
    """An :class:`~memstack.embed.Embedder` over ``inner`` whose concurrent calls share batches."""

    def __init__(
        self, inner: Embedder, *, max_batch: int = 64, recent_size: int = 4_096, recent_ttl_s: float = 60.0
    ) -> None:
        self.inner = inner
        normalize = getattr(inner, "cache_key", None)
        self.recent = RecentVectors(size=recent_size, ttl_s=recent_ttl_s, normalize=normalize)
        self._max_batch = max_batch
        self._queues: OrderedDict[str, deque[_Call]] = OrderedDict()  # by tenant, in rotation order
        self._pending: dict[bytes, tuple[asyncio.Future[Vector], int]] = {}  # being embedded: its call, its row
        self._worker: asyncio.Task[None] | None = None
        self.batches = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def __getattr__(self, name: str) -> object:  # the inner embedder's extras (settings, embed_sync)
        value = getattr(self.inner, name)
        return self._embed_sync if name == "embed_sync" else value

    async def embed(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        tenant, generation = current_tenant(), self.recent.generation
        keys = [self.recent.key(tenant, t) for t in texts]
        found = self.recent.get(keys)
        waiting = {k: self._pending[k] for k in keys if k not in found and k in self._pending}
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found and key not in waiting:
                missing.setdefault(key, text)
        if missing:
            future: asyncio.Future[Vector] = asyncio.get_running_loop().create_future()
            for row, key in enumerate(missing):
                self._pending[key] = (future, row)
            self._queues.setdefault(tenant, deque()).append((list(missing.values()), future))
            if self._worker is None or self._worker.done():
                self._worker = asyncio.create_task(self._drain(), name="memstack-embed-batches")
            try:
                fresh = await asyncio.shield(future)
            finally:
                for key in missing:
                    if self._pending.get(key, (None, 0))[0] is future:
                        del self._pending[key]
            self.recent.put(list(missing), fresh, generation=generation)
            found.update(zip(missing, fresh, strict=True))
        for key, (other, row) in waiting.items():
            found[key] = (await asyncio.shield(other))[row]
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def _embed_sync(self, texts: Sequence[str]) -> Vector:
        """The inner embedder's blocking call, through the same cache of recent vectors."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        tenant, generation = current_tenant(), self.recent.generation
        keys = [self.recent.key(tenant, t) for t in texts]
        found = self.recent.get(keys)
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found:
                missing.setdefault(key, text)
        if missing:
            blocking = self.inner.embed_sync  # type: ignore[attr-defined]
            fresh = np.asarray(blocking(list(missing.values())), dtype=np.float32)
            self.recent.put(list(missing), fresh, generation=generation)
            found.update(zip(missing, fresh, strict=True))
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    @property
    def generation(self) -> int:
        """Bumped by :meth:`forget_recent`: read it before fetching vectors to hand to :meth:`known`."""
        return self.recent.generation

    def known(self, texts: Sequence[str], vectors: Vector, *, generation: int) -> None:
        """Vectors the caller already holds for ``texts`` (a memory's stored embedding, read with its row), kept
        as if just embedded for the running tenant: the guard, about to read those texts, embeds none of them. Not
        kept when :meth:`forget_recent` ran since ``generation`` was read (an erasure meanwhile)."""
        if texts:
            tenant = current_tenant()
            self.recent.put([self.recent.key(tenant, t) for t in texts], vectors, generation=generation)

    def forget_recent(self) -> None:
        """Drop the vectors of recently embedded texts (see :mod:`memstack.embed.recent`)."""
        self.recent.clear()

    def _next_batch(self) -> list[_Call]:
        """Calls for one batch: the tenants in rotation, one call each per round, while they fit (the first call
        always goes, however large). A tenant whose next call does not fit keeps its place at the head."""
        batch: list[_Call] = []
        size = 0
        while self._queues:
            tenant, queue = next(iter(self._queues.items()))
            if batch and size + len(queue[0][0]) > self._max_batch:
                break
            call = queue.popleft()
            batch.append(call)
            size += len(call[0])
            if queue:
                self._queues.move_to_end(tenant)
            else:
                del self._queues[tenant]
        return batch

    async def _drain(self) -> None:
        while self._queues:
            batch = self._next_batch()
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
        for queue in self._queues.values():
            for _, future in queue:
                future.cancel()
        self._queues.clear()
        await self.inner.aclose()
