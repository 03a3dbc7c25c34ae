"""Durable background work (memory detection, summaries): recorded before it starts, resumed after a crash."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

__all__ = ["Job", "JobStatus"]


class JobStatus(StrEnum):
    PENDING = "pending"  # recorded, waiting to run (or to be retried after ``run_after``)
    RUNNING = "running"  # claimed by ``owner`` until ``lease_until``; a lapsed lease makes it claimable again
    DONE = "done"  # finished; ``result`` holds the outcome (the payload is dropped)
    FAILED = "failed"  # given up; ``error`` says why


@dataclass(frozen=True, slots=True)
class Job:
    """One unit of durable background work (a memory detection, a consolidation…), recorded before it starts.

    ``key`` makes recording idempotent: enqueueing the same key again returns the recorded job. ``state`` is the
    worker's checkpoint (what is already done), so a resumed job continues instead of starting over."""

    id: str
    kind: str
    key: str
    payload: Mapping[str, Any]
    status: JobStatus
    attempts: int
    created_at: datetime
    updated_at: datetime
    owner: str | None = None
    lease_until: datetime | None = None
    run_after: datetime | None = None
    state: Mapping[str, Any] = field(default_factory=dict)
    result: Mapping[str, Any] | None = None
    error: str | None = None
