"""Rows to domain values and back, and the checks on what callers pass in (before any SQL runs)."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memstack.errors import DimensionMismatch, InputError
from memstack.types import Category, DeletedBy, HistoryAction, Memory, MemoryEvent, Source, UserRef, Vector

__all__ = [
    "COLUMNS",
    "check_actor",
    "check_agent",
    "check_k",
    "event_from_row",
    "memory_from_row",
    "parse_category",
    "parse_source",
    "text_query",
    "unit_matrix",
    "unit_vector",
    "user_lock_key",
    "utc",
]

#: Columns of ``memories`` that make a :class:`Memory` (without its embedding), in ``memory_from_row`` order.
COLUMNS = (
    "id, tenant, user_id, agent_id, content, category, source, confidence, is_active, deleted_by, "
    "created_at, updated_at, observed_at, expires_at, merged_into, source_turn_ids"
)
N_COLUMNS = len(COLUMNS.split(","))

_WORD = re.compile(r"\w+")


def utc(value: datetime | None) -> datetime | None:
    """As stored: aware, UTC, microseconds (naive values are taken as UTC)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def user_lock_key(user: UserRef, salt: str = "memories") -> int:
    """A signed 64-bit key for ``pg_advisory_xact_lock``: one per (tenant, user) and purpose."""
    digest = hashlib.blake2b(f"{salt}\x1f{user.tenant}\x1f{user.user_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def text_query(text: str, *, any_word: bool) -> str | None:
    """A ``to_tsquery('simple', …)`` string of the words of ``text`` (``None`` when it has none).

    Only ``\\w+`` words reach PostgreSQL, each quoted as a lexeme: search syntax typed by a user (``&``, ``!``,
    ``:*``, quotes) is searched for as words, never executed."""
    words = dict.fromkeys(w.lower() for w in _WORD.findall(text))
    if not words:
        return None
    return (" | " if any_word else " & ").join(f"'{w}'" for w in words)


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


def parse_category(value: object) -> Category:
    return value if isinstance(value, Category) else Category.parse(str(value))


def parse_source(value: object) -> Source:
    try:
        return Source(str(value).strip().lower())
    except ValueError:
        allowed = ", ".join(s.value for s in Source)
        raise InputError(f"unknown memory source {value!r}; use one of: {allowed}") from None


def unit_vector(vector: Any, dim: int) -> Vector:
    """``vector`` as one unit-length float32 row of length ``dim``; wrong shapes and non-finite values are refused."""
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
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if (norms == 0).any():
        raise InputError("vector is all zeros and has no direction; embed some text first")
    out: Vector = np.ascontiguousarray(arr / norms, dtype=np.float32)
    return out


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
    )


def event_from_row(row: tuple[Any, ...]) -> MemoryEvent:
    id_, memory_id, action, before, after, at, actor, note = row
    return MemoryEvent(
        id=int(id_),
        memory_id=memory_id,
        action=HistoryAction(action),
        before=before,
        after=after,
        at=at,
        actor=actor,
        note=note,
    )
