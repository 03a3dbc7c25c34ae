"""Checks on what callers pass to a store, shared by both backends (they run before any SQL).

Each check returns the value as the store keeps it, or raises :class:`~memstack.errors.InputError` (or
:class:`~memstack.errors.DimensionMismatch`) with a message that says what to pass instead.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any, overload

import numpy as np

from memstack.errors import DimensionMismatch, InputError
from memstack.types import Category, Source, Vector, check_data

__all__ = [
    "COLUMNS",
    "check_actor",
    "check_agent",
    "check_definition",
    "check_k",
    "parse_category",
    "parse_source",
    "unit_matrix",
    "unit_vector",
    "utc",
]

#: Columns of ``memories`` that make a :class:`~memstack.types.Memory` (without the embedding), in the order
#: :func:`memstack.store._memory_reads.memory_from_row` reads them.
COLUMNS = (
    "id, tenant, user_id, agent_id, content, category, source, confidence, is_active, deleted_by, "
    "created_at, updated_at, observed_at, expires_at, merged_into, source_turn_ids, metadata, valid_from, valid_to"
)


@overload
def utc(value: datetime) -> datetime: ...
@overload
def utc(value: None) -> None: ...
@overload
def utc(value: datetime | None) -> datetime | None: ...
def utc(value: datetime | None) -> datetime | None:
    """As stored: aware, UTC, microseconds (naive values are taken as UTC)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def check_k(k: int) -> int:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InputError(f"k must be a whole number of at least 1, got {k!r}")
    return k


def check_actor(actor: str) -> str:
    if not isinstance(actor, str) or not actor or len(actor) > 50 or not actor.isprintable():
        raise InputError(f"actor must be 1-50 printable characters such as 'user', 'ai' or 'system', got {actor!r}")
    return actor


def check_agent(agent_id: str | None) -> None:
    if agent_id is not None and (
        not isinstance(agent_id, str) or not agent_id or len(agent_id) > 200 or not agent_id.isprintable()
    ):
        raise InputError(f"agent_id must be 1-200 printable characters or None, got {agent_id!r}")


def check_definition(definition: dict[str, Any]) -> str:
    """An agent definition as the stores keep it: plain JSON data (its text, keys sorted) with storable strings."""
    check_data(definition, "the agent definition")
    try:
        return json.dumps(definition, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InputError(f"the agent definition is not plain JSON data ({exc})") from None


def parse_category(value: object) -> Category:
    return value if isinstance(value, Category) else Category.parse(str(value))


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
    """``matrix`` as unit-length float32 rows (exactly ``rows`` of them when given)."""
    arr = np.asarray(matrix, dtype=np.float32)
    if arr.ndim != 2:
        raise InputError(f"expected a matrix with one {dim}-d vector per row, got shape {arr.shape}")
    if arr.shape[1] != dim:
        raise DimensionMismatch(dim, int(arr.shape[1]))
    if rows is not None and arr.shape[0] != rows:
        raise InputError(f"got {arr.shape[0]} vectors for {rows} memories; pass exactly one vector per memory")
    if not np.isfinite(arr).all():
        raise InputError("vector contains NaN or infinite values; check the embedder's output")
    # Scaling each row by its largest magnitude first keeps the norm finite for values too large to square.
    peak = np.abs(arr).max(axis=1, keepdims=True)
    if (peak == 0).any():
        raise InputError("vector is all zeros and has no direction; embed some text first")
    scaled = arr / peak
    out: Vector = np.ascontiguousarray(scaled / np.linalg.norm(scaled, axis=1, keepdims=True), dtype=np.float32)
    return out
