"""A memory from its row, and the advisory-lock key of a user's writes (the checks on what callers pass in, before
any SQL runs, are both backends': :mod:`memstack.store._checks`)."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from memstack.store._checks import COLUMNS
from memstack.store._memory_reads import memory_from_row as neutral_memory
from memstack.types import Memory, UserRef

__all__ = ["N_COLUMNS", "memory_from_row", "user_lock_key"]

N_COLUMNS = len(COLUMNS.split(","))


def user_lock_key(user: UserRef, salt: str = "memories") -> int:
    """A signed 64-bit key for ``pg_advisory_xact_lock``: one per (tenant, user) and purpose."""
    digest = hashlib.blake2b(f"{salt}\x1f{user.tenant}\x1f{user.user_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


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
