"""A memory from its row, and the advisory-lock key of a user's writes (the checks on what callers pass in, before
any SQL runs, are both backends': :mod:`memstack.store._checks`)."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from memstack.store._checks import COLUMNS
from memstack.types import Category, DeletedBy, Memory, Source, UserRef
from memstack.types.memories import stored_metadata

__all__ = ["N_COLUMNS", "memory_from_row", "user_lock_key"]

N_COLUMNS = len(COLUMNS.split(","))


def user_lock_key(user: UserRef, salt: str = "memories") -> int:
    """A signed 64-bit key for ``pg_advisory_xact_lock``: one per (tenant, user) and purpose."""
    digest = hashlib.blake2b(f"{salt}\x1f{user.tenant}\x1f{user.user_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def memory_from_row(row: tuple[Any, ...] | list[Any], embedding: Any = None) -> Memory:
    """A :class:`Memory` from the first ``len(COLUMNS)`` values of ``row``."""
    vector = None
    if embedding is not None:
        vector = np.asarray(embedding.to_numpy() if hasattr(embedding, "to_numpy") else embedding, dtype=np.float32)
    return Memory(
        id=row[0],
        tenant=row[1],
        user_id=row[2],
        agent_id=row[3],
        content=row[4],
        category=Category(row[5]),
        source=Source(row[6]),
        confidence=float(row[7]),
        is_active=bool(row[8]),
        deleted_by=DeletedBy(row[9]) if row[9] is not None else None,
        created_at=row[10],
        updated_at=row[11],
        observed_at=row[12],
        expires_at=row[13],
        merged_into=row[14],
        source_turn_ids=tuple(row[15] or ()),
        embedding=vector,
        metadata=stored_metadata(row[16]),
        valid_from=row[17],
        valid_to=row[18],
    )
