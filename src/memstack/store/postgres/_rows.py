"""A memory from its row (the checks on what callers pass in, before any SQL runs, are both backends':
:mod:`memstack.store._checks`; a user's advisory-lock key is :func:`memstack.store.fence.user_lock_key`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from memstack.store._checks import COLUMNS
from memstack.store._memory_reads import memory_from_row as neutral_memory
from memstack.types import Memory

__all__ = ["N_COLUMNS", "memory_from_row"]

N_COLUMNS = len(COLUMNS.split(","))


def _same(value: Any) -> Any:
    return value


def _turns(value: list[str] | None) -> tuple[str, ...]:
    return tuple(value or ())


def memory_from_row(row: tuple[Any, ...] | list[Any], embedding: Any = None) -> Memory:
    """A :class:`Memory` from the first ``len(COLUMNS)`` values of ``row``."""
    vector = None
    if embedding is not None:
        vector = np.asarray(embedding.to_numpy() if hasattr(embedding, "to_numpy") else embedding, dtype=np.float32)
    return neutral_memory(row, vector, when=_same, turns=_turns)
