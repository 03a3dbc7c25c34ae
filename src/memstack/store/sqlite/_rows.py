"""Conversions between database rows and domain values: times as sortable text, a user's full-text owner token,
metadata as JSON text and its filters, a memory from its row (the checks on what callers pass in are both backends':
:mod:`memstack.store._checks`)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memstack.store._memory_reads import memory_from_row as neutral_memory
from memstack.types import Memory, UserRef

__all__ = [
    "from_ts",
    "fts_owner",
    "memory_from_row",
    "metadata_conditions",
    "metadata_text",
    "to_ts",
]

#: Small integer per category, used by the in-memory vector cache for filtering.


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


def _turns(value: str) -> tuple[str, ...]:
    return () if value == "[]" else tuple(json.loads(value))


def memory_from_row(row: sqlite3.Row | tuple[Any, ...], embedding: bytes | None = None) -> Memory:
    """A :class:`Memory` from the ``COLUMNS`` of one row (with the embedding when its blob is given)."""
    vector = np.frombuffer(embedding, dtype="<f4").astype(np.float32) if embedding is not None else None
    return neutral_memory(row, vector, when=datetime.fromisoformat, turns=_turns)
