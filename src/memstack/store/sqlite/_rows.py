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
    if isinstance(value, Source):
        return value
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
    with np.errstate(over="ignore", invalid="ignore"):
        norm = math.sqrt(float(arr @ arr))
    if not math.isfinite(norm):  # NaN or inf in the vector, or finite values too large to square in float32
        if not np.isfinite(arr).all():
            raise InputError("vector contains NaN or infinite values; check the embedder's output")
        arr = arr / np.abs(arr).max()
        norm = math.sqrt(float(arr @ arr))
    if norm == 0.0:
        raise InputError("vector is all zeros and has no direction; embed some text first")
    out: Vector = arr / np.float32(norm)
    return out


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


# Plain dict lookups: calling an Enum class to convert a value is several times slower, and rows are hot.
_CATEGORIES = {c.value: c for c in Category}
_SOURCES = {s.value: s for s in Source}
_DELETED_BY = {d.value: d for d in DeletedBy}
_fromiso = datetime.fromisoformat


def memory_from_row(row: sqlite3.Row | tuple[Any, ...], embedding: bytes | None = None) -> Memory:
    """A :class:`Memory` from the ``COLUMNS`` of one row (with the embedding when its blob is given)."""
    (id_, tenant, user_id, agent_id, content, category, source, confidence, is_active, deleted_by) = row[:10]
    created, updated, observed, expires, merged_into, turns = row[10:16]
    return Memory(
        id=id_,
        tenant=tenant,
        user_id=user_id,
        agent_id=agent_id,
        content=content,
        category=_CATEGORIES[category],
        source=_SOURCES[source],
        confidence=float(confidence) if math.isfinite(confidence) else 0.0,
        is_active=bool(is_active),
        deleted_by=_DELETED_BY[deleted_by] if deleted_by is not None else None,
        created_at=_fromiso(created),
        updated_at=_fromiso(updated),
        observed_at=_fromiso(observed) if observed is not None else None,
        expires_at=_fromiso(expires) if expires is not None else None,
        merged_into=merged_into,
        source_turn_ids=() if turns == "[]" else tuple(json.loads(turns)),
        embedding=np.frombuffer(embedding, dtype="<f4").astype(np.float32) if embedding is not None else None,
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
