"""Everything memstack holds about one user, as a whole: exported (data access) or erased (data deletion)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

__all__ = ["ErasureReport", "ImportReport", "RecordKind", "UserRecord", "UserSummary"]

#: The sections of an export, in the order a store yields them.
RecordKind = Literal["memory", "session", "context", "job", "dropped"]


@dataclass(frozen=True, slots=True)
class UserRecord:
    """One item of a user's export: a memory with its history, a session with its facts, turn log and archived
    messages, a stored context manifest, a background job of the user, or the count of automatic captures a full
    tier kept out. ``data`` is plain JSON (the shapes are
    documented in :mod:`memstack.users`)."""

    kind: RecordKind
    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ErasureReport:
    """What an erasure removed: rows per table (every table that can hold the user's data, 0 included), and
    per-user search indexes dropped (PostgreSQL's HNSW index of a very large user)."""

    tenant: str
    user_id: str
    removed: Mapping[str, int] = field(default_factory=dict)
    indexes_dropped: int = 0

    @property
    def total(self) -> int:
        """Rows removed in all."""
        return sum(self.removed.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "user_id": self.user_id,
            "removed": dict(self.removed),
            "indexes_dropped": self.indexes_dropped,
            "total": self.total,
        }


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import of one user wrote: rows per table (``added``), ``unchanged`` when the store held exactly what
    was imported already (an import run twice), and records the source held that were not imported (``skipped``:
    a mem0 memory already imported, a message without text), each counted."""

    tenant: str
    user_id: str
    added: Mapping[str, int] = field(default_factory=dict)
    unchanged: bool = False
    skipped: int = 0

    @property
    def total(self) -> int:
        """Rows written in all."""
        return sum(self.added.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "user_id": self.user_id,
            "added": dict(self.added),
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            "total": self.total,
        }


@dataclass(frozen=True, slots=True)
class UserSummary:
    """One user of a tenant as a list shows it: active memories, sessions, and when either last changed."""

    user_id: str
    memories: int  # active
    sessions: int
    last_active: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "memories": self.memories,
            "sessions": self.sessions,
            "last_active": self.last_active.isoformat() if self.last_active is not None else None,
        }
