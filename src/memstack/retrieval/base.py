"""The retriever role: passages in, ranked hits out."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from memstack.retrieval.retriever import Hit, Passage
from memstack.types import Vector

__all__ = ["Retriever"]


@runtime_checkable
class Retriever(Protocol):
    """Ranks the passages it was given; ``HybridRetriever`` is the implementation."""

    def __len__(self) -> int: ...

    def add(self, passages: Sequence[Passage], vectors: Vector | None = None) -> None:
        """Append passages, oldest first within a thread, with one vector row each (or none)."""
        ...

    def search(
        self, query: str, query_vector: Vector | None = None, *, k: int = 10, now: datetime | None = None
    ) -> list[Hit]:
        """The ``k`` best passages for ``query``, best first; ``now`` resolves "last week" and the like."""
        ...

    def windows(self, hits: Sequence[Hit], *, before: int | None = None) -> list[list[Passage]]:
        """The hits with the passages before them, merged so no passage appears twice."""
        ...
