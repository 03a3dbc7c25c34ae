"""Conversions between database rows and domain values, and checks on what callers pass in."""

from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memstack.errors import DimensionMismatch, InputError
from memstack.types import Category, DeletedBy, HistoryAction, Memory, MemoryEvent, Source, UserRef, Vector

__all__ = [
    "CATEGORY_CODES",
    "COLUMNS",
    "event_from_row",
    "from_ts",
    "fts_match",
    "fts_owner",
    "memory_from_row",
    "parse_category",
    "parse_source",
    "to_ts",
    "unit_matrix",
    "unit_vector",
]

#: Columns of ``memories`` that make a :class:`Memory` (without the embedding), in ``memory_from_row`` order.
COLUMNS = (
    "id, tenant, user_id, agent_id, content, category, source, confidence, is_active, deleted_by, "
    "created_at, updated_at, observed_at, expires_at, merged_into, source_turn_ids"
)

#: Small integer per category, used by the in-memory vector cache for filtering.
CATEGORY_CODES: dict[Category, int] = {c: i for i, c in enumerate(Category)}

_WORD = re.compile(r"\w+", re.UNICODE)


def to_ts(value: datetime) -> str:
    """UTC ISO-8601 with microseconds: sorts as text in time order. Naive datetimes are taken as UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def from_ts(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value is not None else None


def fts_owner(user: UserRef) -> str:
    """One FTS token per (tenant, user): narrows text search to that user's postings."""
    digest = hashlib.blake2b(f"{user.tenant}\x1f{user.user_id}".encode(), digest_size=10).hexdigest()
    return f"u{digest}x"


def fts_match(user: UserRef, text: str, *, any_word: bool) -> str | None:
    """An FTS5 query for the words of ``text`` within ``user``'s memories, or ``None`` if it has no words.

    Words are quoted, so FTS syntax typed by a user (``NEAR``, ``*``, quotes) is searched for, never executed."""
    words = _WORD.findall(text.lower())
    if not words:
        return None
    joined = (" OR " if any_word else " AND ").join(f'"{w}"' for w in dict.fromkeys(words))
    return f"fts_owner : {fts_owner(user)} AND content : ({joined})"


def parse_category(value: object) -> Category:
    if isinstance(value, Category):
        return value
    return Category.parse(str(value))


def parse_source(value: object) -> Source:
    try:
        return Source(str(value).strip().lower())
    except ValueError:
        allowed = ", ".join(s.value for s in Source)
        raise InputError(f"unknown memory source {value!r}; use one of: {allowed}") from None


def unit_vector(vector: Any, dim: int) -> Vector:
    """``vector`` as a unit-length float32 row of length ``dim``; wrong shapes and non-finite values are refused."""
    arr = np.asarray(vector, dtype=np.float32)
    if arr.ndim == 2 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.ndim != 1:
        raise InputError(f"expected one vector of {dim} numbers, got an array of shape {arr.shape}")
    if arr.shape[0] != dim:
        raise DimensionMismatch(dim, int(arr.shape[0]))
    row: Vector = unit_matrix(arr[None, :], dim)[0]
    return row


def unit_matrix(matrix: Any, dim: int, rows: int | None = None) -> Vector:
    """``matrix`` as unit-length float32 rows (``rows`` of them when given)."""
    arr = np.asarray(matrix, dtype=np.float32)
    if arr.ndim != 2:
        raise InputError(f"expected a matrix with one {dim}-d vector per row, got shape {arr.shape}")
    if arr.shape[1] != dim:
        raise DimensionMismatch(dim, int(arr.shape[1]))
    if rows is not None and arr.shape[0] != rows:
        raise InputError(f"got {arr.shape[0]} vectors for {rows} memories; pass exactly one vector per memory")
    if not np.isfinite(arr).all():
        raise InputError("vector contains NaN or infinite values; check the embedder's output")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if (norms == 0).any():
        raise InputError("vector is all zeros and has no direction; embed some text first")
    out: Vector = np.ascontiguousarray(arr / norms, dtype=np.float32)
    return out


def memory_from_row(row: sqlite3.Row | tuple[Any, ...], embedding: bytes | None = None) -> Memory:
    vec = np.frombuffer(embedding, dtype="<f4").astype(np.float32) if embedding is not None else None
    confidence = float(row[7])
    return Memory(
        id=row[0],
        tenant=row[1],
        user_id=row[2],
        agent_id=row[3],
        content=row[4],
        category=Category(row[5]),
        source=Source(row[6]),
        confidence=confidence if math.isfinite(confidence) else 0.0,
        is_active=bool(row[8]),
        deleted_by=DeletedBy(row[9]) if row[9] is not None else None,
        created_at=datetime.fromisoformat(row[10]),
        updated_at=datetime.fromisoformat(row[11]),
        observed_at=from_ts(row[12]),
        expires_at=from_ts(row[13]),
        merged_into=row[14],
        source_turn_ids=tuple(json.loads(row[15])),
        embedding=vec,
    )


def event_from_row(row: tuple[Any, ...]) -> MemoryEvent:
    id_, memory_id, action, before, after, at, actor, note = row
    return MemoryEvent(
        id=int(id_),
        memory_id=memory_id,
        action=HistoryAction(action),
        before=json.loads(before) if before is not None else None,
        after=json.loads(after) if after is not None else None,
        at=datetime.fromisoformat(at),
        actor=actor,
        note=note,
    )
