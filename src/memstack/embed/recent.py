"""Vectors of texts embedded moments ago, so that one turn (or one import) embeds each text once.

The parts of a turn ask for the same texts one after the other, or at the same moment: recall embeds the message
while capture embeds the same sentence as a candidate clause, the guard embeds the message's sentences again, the
update judge embeds a candidate that capture embedded a moment before to find its nearest memories, the news step
embeds a sentence the judge then weighs. Passing vectors along every path would tie the roles together; instead the
engine's embedder (:class:`~memstack.embed.batching.BatchingEmbedder`) remembers, briefly, what it has just embedded,
and a text being embedded is waited for rather than embedded twice.

**What makes two texts the same**: the embedder's own ``cache_key`` where it has one. The local MiniLM model is
uncased, so its key is its tokenizer's normalized text: "User has a dog." and the guard's lowercased "user has a
dog." are one text to it, exactly (the tokens, hence the vector, are a function of the normalized text). An embedder
without ``cache_key`` (a remote model, which may be cased) keys on the text as given.

**Short-lived and bounded** on purpose. An entry lives ``ttl_s`` seconds (a turn's or an import's own reuse happens
within that; a cache that kept a conversation's texts for hours would be a second copy of what users said), at most
``size`` entries. Keys are a digest of the tenant and the text, never the text itself, so the cache holds no user
text, and one tenant's texts never answer another's call (whether a text was embedded recently is not observable
across tenants by timing). :meth:`RecentVectors.clear` drops everything (an erasure calls it) and makes a put that
began before the clear a no-op, so a vector computed for an erased user's text is not kept after the erasure.
Thread-safe: the guard embeds from a worker thread.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from memstack.types import Vector

__all__ = ["RecentVectors"]


class RecentVectors:
    """``size`` entries at most, each kept ``ttl_s`` seconds; ``normalize``: the embedder's ``cache_key`` (texts
    with the same key have the same vector); ``clock``: seconds (monotonic by default)."""

    def __init__(
        self,
        *,
        size: int = 4_096,
        ttl_s: float = 60.0,
        normalize: Callable[[str], str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if size < 0 or ttl_s < 0:
            raise ValueError("size and ttl_s must be at least 0")
        self._size = size
        self._ttl = ttl_s
        self._normalize = normalize
        self._clock = clock
        self._items: OrderedDict[bytes, tuple[float, Vector]] = OrderedDict()  # key -> (expires, row), oldest first
        self._lock = threading.Lock()
        self.generation = 0  # bumped by clear(): a put of an older generation is dropped
        self.hits = 0

    def __len__(self) -> int:
        return len(self._items)

    def key(self, tenant: str, text: str) -> bytes:
        said = self._normalize(text) if self._normalize is not None else text
        return hashlib.blake2b(f"{tenant}\x00{said}".encode(), digest_size=16).digest()

    def get(self, keys: Sequence[bytes]) -> dict[bytes, Vector]:
        """The kept vectors of those keys that have one."""
        now = self._clock()
        with self._lock:
            self._expire(now)
            found = {k: item[1] for k in keys if (item := self._items.get(k)) is not None}
        self.hits += len(found)
        return found

    def put(self, keys: Sequence[bytes], vectors: Vector, *, generation: int) -> None:
        """Keep the vectors (row ``i`` is key ``i``), unless the cache was cleared since ``generation`` was read."""
        if self._size == 0 or self._ttl == 0:
            return
        rows = []
        for row in np.asarray(vectors):
            kept = row.copy()
            kept.flags.writeable = False  # shared by every caller that gets it
            rows.append(kept)
        expires = self._clock() + self._ttl
        with self._lock:
            if generation != self.generation:
                return
            for key, row in zip(keys, rows, strict=True):
                self._items.pop(key, None)
                self._items[key] = (expires, row)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.generation += 1

    def _expire(self, now: float) -> None:
        while self._items:
            expires, _ = next(iter(self._items.values()))
            if expires > now:
                return
            self._items.popitem(last=False)
