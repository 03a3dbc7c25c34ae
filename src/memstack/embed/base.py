"""The embedder role: text in, L2-normalised float32 vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from memstack.types import Vector

__all__ = ["Embedder", "normalize"]


@runtime_checkable
class Embedder(Protocol):
    """``name`` identifies the model (vectors of different models never mix); ``dim`` is the vector length."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> Vector:
        """A ``(len(texts), dim)`` float32 matrix of unit-length rows, batched internally."""
        ...

    async def aclose(self) -> None: ...


def normalize(matrix: Vector) -> Vector:
    """Rows scaled to unit length (zero rows stay zero)."""
    m = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vector = (m / norms).astype(np.float32, copy=False)
    return out
