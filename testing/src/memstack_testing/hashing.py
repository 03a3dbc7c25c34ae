"""A deterministic bag-of-words hashing embedder, for tests: ``hash:<dim>``.

Texts sharing words (:func:`memstack.text.words`) get similar vectors, which is enough to exercise stores, ranking
and dedup without loading a model, in microseconds and the same on every machine.

It lives here, with the other fakes, and not in :mod:`memstack.embed`, because it is not a feature: its vectors
know nothing of meaning ("I quit my job" and "I resigned" share no word, so no similarity), and a store filled with
them by a mistyped setting would answer searches badly without saying so. So the runtime does not know the name:
``hash:<dim>`` reaches it through the ``memstack.embedders`` entry point this distribution declares
(:func:`from_spec`), and where ``memstack-testing`` is not installed :func:`memstack.embed.get_embedder` answers it
with :class:`~memstack.errors.MissingExtra` naming the install command.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memstack.embed import normalize
from memstack.errors import ConfigError
from memstack.text import words
from memstack.types import Vector

__all__ = ["HashingEmbedder", "from_spec"]


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


def from_spec(model: str, **options: object) -> HashingEmbedder:
    """The ``memstack.embedders`` entry point: ``hash:<dim>`` (``hash`` alone: 64 dimensions). No options."""
    if not (model or "64").isdigit() or int(model or 64) < 1:
        raise ConfigError(f"embedder 'hash:{model}': hash:<dim> needs a whole number of dimensions, e.g. hash:64")
    if options:
        raise ConfigError(f"the hashing embedder takes no options ({', '.join(sorted(options))})")
    return HashingEmbedder(int(model or 64))
