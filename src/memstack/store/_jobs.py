"""What both backends' ``JobStore`` roles share: the checks on each call (before any SQL), a job's JSON, the user a
job works for, a :class:`~memstack.types.Job` from its row, and reading one job back (:class:`JobReads`). Each
backend keeps its writes in its ``jobs.py``: their times are PostgreSQL's clock (``now()``) and SQLite's local one,
and PostgreSQL claims with ``FOR UPDATE SKIP LOCKED`` where SQLite's write transaction holds the whole file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from memstack.errors import InputError, NotFound
from memstack.store._sql import Row, Sql
from memstack.types import Job, JobStatus, new_id

__all__ = [
    "COLUMNS",
    "PRUNE_BATCH",
    "JobReads",
    "check_claim",
    "check_enqueue",
    "check_error",
    "check_job_name",
    "check_lease_s",
    "job_from_row",
    "job_json",
    "job_user",
]

#: Columns of ``jobs`` that make a :class:`~memstack.types.Job` (``job_from_row``).
COLUMNS = (
    "id, kind, key, payload, status, attempts, created_at, updated_at, owner, lease_until, run_after, state, "
    "result, error"
)
#: Finished jobs past their retention pruned at a time.
PRUNE_BATCH = 100


def check_job_name(value: str, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > 500 or not value.isprintable():
        raise InputError(f"a job's {what} must be 1-500 printable characters, got {value!r}")
    return value


def check_lease_s(lease_s: float) -> float:
    if not lease_s > 0:
        raise InputError(f"lease_s must be a positive number of seconds, got {lease_s}")
    return float(lease_s)


def check_enqueue(kind: str, key: str, owner: str | None, lease_s: float) -> float:
    """The checks of ``enqueue``; returns the lease in seconds."""
    check_job_name(kind, "kind")
    check_job_name(key, "key")
    if owner is not None:
        check_job_name(owner, "owner")
    return check_lease_s(lease_s)


def check_claim(kind: str | None, limit: int, owner: str | None, lease_s: float) -> tuple[str, float]:
    """The checks of ``claim_pending``; returns who claims (a new worker id when ``owner`` is ``None``) and the
    lease in seconds."""
    if limit < 1:
        raise InputError(f"limit must be at least 1, got {limit}")
    if kind is not None:
        check_job_name(kind, "kind")
    who = check_job_name(owner, "owner") if owner is not None else new_id("worker")
    return who, check_lease_s(lease_s)


def check_error(error: str) -> str:
    """A failed job's error as kept: text, at most 2,000 characters."""
    if not isinstance(error, str):
        raise InputError(f"a job's error must be text, got {type(error).__name__}")
    return error[:2000]


def job_json(value: Mapping[str, Any], what: str) -> str:
    """``value`` (a job's ``what``: payload, state, result) as compact JSON text; ``InputError`` unless it is JSON."""
    try:
        return json.dumps(dict(value), ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InputError(f"a job's {what} must be JSON (strings, numbers, lists, objects): {exc}") from None


def job_user(payload: dict[str, Any]) -> tuple[str | None, str | None]:
    """The ``(tenant, user_id)`` a job works for, read from its payload's ``tenant`` and ``user_id`` (both strings),
    else ``(None, None)``: kept beside the job so erasing a user removes their jobs."""
    tenant, user_id = payload.get("tenant"), payload.get("user_id")
    if isinstance(tenant, str) and isinstance(user_id, str):
        return tenant, user_id
    return None, None


def job_from_row(
    row: tuple[Any, ...], *, when: Callable[[Any], datetime], data: Callable[[Any], dict[str, Any] | None]
) -> Job:
    """A :class:`Job` from the ``COLUMNS`` of one row; ``when`` and ``data`` read the backend's time stamp and JSON
    object (``None`` for SQL ``NULL``)."""
    return Job(
        id=str(row[0]),
        kind=str(row[1]),
        key=str(row[2]),
        payload=data(row[3]) or {},
        status=JobStatus(row[4]),
        attempts=int(row[5]),
        created_at=when(row[6]),
        updated_at=when(row[7]),
        owner=row[8],
        lease_until=when(row[9]) if row[9] is not None else None,
        run_after=when(row[10]) if row[10] is not None else None,
        state=data(row[11]) or {},
        result=data(row[12]),
        error=row[13],
    )


class JobReads:
    """``get`` of :class:`~memstack.store.base.JobStore` and a job from its row, over a backend's
    :class:`~memstack.store._sql.Sql`."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    async def get(self, job_id: str) -> Job:
        row = await self._sql.one(f"SELECT {COLUMNS} FROM jobs WHERE id = ?", (job_id,))
        if row is None:
            raise NotFound("job", job_id)
        return self._job(row)

    def _job(self, row: Row) -> Job:
        return job_from_row(row, when=self._sql.when, data=self._data)

    def _data(self, value: Any) -> dict[str, Any] | None:
        """A JSON object column (``None`` for SQL ``NULL``; ``{}`` for anything stored that is not an object)."""
        if value is None:
            return None
        data = self._sql.unjson(value)
        return dict(data) if isinstance(data, dict) else {}
