"""A deterministic bag-of-words hashing embedder for unit tests only.

It is never a default and is rejected by the engine unless asked for by name (``hash:<dim>``).
Texts sharing words (:func:`memstack.text.words`) get similar vectors, which is enough to exercise stores and ranking.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memstack.embed.base import normalize
from memstack.text import words
from memstack.types import Vector

__all__ = ["HashingEmbedder"]


class HashingEmbedder:
    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.name = f"hash:{dim}"

    def embed_sync(self, texts: Sequence[str]) -> Vector:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in words(text):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                h = int.from_bytes(digest, "little")
                out[row, h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        return normalize(out)

    async def embed(self, texts: Sequence[str]) -> Vector:
        return self.embed_sync(texts)

    async def aclose(self) -> None:
        return None
