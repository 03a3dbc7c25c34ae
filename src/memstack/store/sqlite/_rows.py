"""Conversions between database rows and domain values: times as sortable text, a user's full-text owner token,
metadata as JSON text and its filters, a memory from its row (the checks on what callers pass in are both backends':
:mod:`memstack.store._checks`)."""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memstack.types import Category, DeletedBy, Memory, Source, UserRef
from memstack.types.memories import stored_metadata

__all__ = [
    "CATEGORY_CODES",
    "from_ts",
    "fts_owner",
    "memory_from_row",
    "metadata_conditions",
    "metadata_text",
    "to_ts",
]

#: Small integer per category, used by the in-memory vector cache for filtering.
CATEGORY_CODES: dict[Category, int] = {c: i for i, c in enumerate(Category)}


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


# Plain dict lookups: calling an Enum class to convert a value is several times slower, and rows are hot.
_CATEGORIES = {c.value: c for c in Category}
_SOURCES = {s.value: s for s in Source}
_DELETED_BY = {d.value: d for d in DeletedBy}
_fromiso = datetime.fromisoformat


def metadata_text(metadata: Mapping[str, Any]) -> str:
    """A memory's metadata as the column keeps it: compact JSON text (``{}`` when empty)."""
    if not metadata:
        return "{}"
    return json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def metadata_conditions(wanted: Mapping[str, Any], table: str = "memories") -> tuple[str, list[Any]]:
    """SQL (`` AND …``) and its parameters keeping the rows of ``table`` whose metadata holds every key of the checked
    filter ``wanted`` with the same value (:func:`memstack.types.check_metadata_filter`: JSON types as stored, so
    ``true`` is no number and a string ``"1"`` no number either; numbers by value)."""
    sql: list[str] = []
    args: list[Any] = []
    for key, value in wanted.items():
        extra: list[Any]
        if isinstance(value, bool):
            test, extra = f"type = '{'true' if value else 'false'}'", []
        elif value is None:
            test, extra = "type = 'null'", []
        elif isinstance(value, int | float):
            test, extra = "type IN ('integer', 'real') AND atom = ?", [value]
        else:
            test, extra = "type = 'text' AND atom = ?", [value]
        sql.append(f" AND EXISTS (SELECT 1 FROM json_each({table}.metadata) WHERE key = ? AND {test})")
        args += [key, *extra]
    return "".join(sql), args


def memory_from_row(row: sqlite3.Row | tuple[Any, ...], embedding: bytes | None = None) -> Memory:
    """A :class:`Memory` from the ``COLUMNS`` of one row (with the embedding when its blob is given)."""
    (id_, tenant, user_id, agent_id, content, category, source, confidence, is_active, deleted_by) = row[:10]
    created, updated, observed, expires, merged_into, turns, metadata, valid_from, valid_to = row[10:19]
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
        metadata=stored_metadata(metadata),
        valid_from=_fromiso(valid_from) if valid_from is not None else None,
        valid_to=_fromiso(valid_to) if valid_to is not None else None,
    )
