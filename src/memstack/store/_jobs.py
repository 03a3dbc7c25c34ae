"""Both backends' ``JobStore`` role: the checks on each call (before any SQL), a job's JSON, the user a job works
for, a :class:`~memstack.types.Job` from its row, reading one job back (:class:`JobReads`) and every write
(:class:`Jobs`), each one statement or one transaction.

What the backends keep (their ``jobs.py``) is their clock and how a claim keeps two workers apart. PostgreSQL's
times are the server's (``now()``: the time of the transaction), so leases do not depend on the clocks of the
machines running the workers, and a claim locks the rows it takes and skips those another claim holds (``FOR UPDATE
SKIP LOCKED``): workers in several processes or on several hosts never claim the same job and never wait on each
other's claims. SQLite's times are this machine's (every process sharing a file runs on it), and its write
transaction holds the whole file. Finished jobs keep their key and result for ``retention`` (idempotency,
inspection) with the payload dropped, then are pruned a batch at a time as other jobs finish.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from memstack.errors import InputError, NotFound
from memstack.store._sql import Row, Sql, Tx
from memstack.store.base import DEFAULT_LEASE_S
from memstack.types import Job, JobStatus, new_id

__all__ = [
    "COLUMNS",
    "PRUNE_BATCH",
    "JobReads",
    "Jobs",
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


class Jobs(JobReads):
    """:class:`~memstack.store.base.JobStore` over a backend's ``Sql`` and its clock: every time a write stores or
    compares is :attr:`_later` (SQL for the clock plus ``?`` seconds) with the argument :meth:`_after` gives, read
    inside the write's transaction."""

    #: SQL for a time: the store's clock plus ``?`` seconds.
    _later: str
    #: What follows the ``SELECT`` of the jobs a claim takes (PostgreSQL: skip the rows another claim holds).
    _claim_lock: str = ""

    def __init__(self, sql: Sql, *, retention: timedelta = timedelta(days=7)) -> None:
        super().__init__(sql)
        self.retention = retention

    def _after(self, seconds: float) -> Any:
        """The argument of one :attr:`_later`: ``seconds`` from now."""
        raise NotImplementedError

    async def enqueue(
        self,
        kind: str,
        key: str,
        payload: Mapping[str, Any],
        *,
        owner: str | None = None,
        lease_s: float = DEFAULT_LEASE_S,
    ) -> Job:
        lease = check_enqueue(kind, key, owner, lease_s)
        body = job_json(payload, "payload")
        status = JobStatus.RUNNING if owner is not None else JobStatus.PENDING
        later = self._later

        async def write(tx: Tx) -> Row | None:
            now = self._after(0.0)
            row = await tx.one(
                "INSERT INTO jobs (id, kind, key, payload, status, attempts, owner, lease_until, created_at, "
                f"updated_at, tenant, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, CASE WHEN ? THEN {later} END, {later}, "
                f"{later}, ?, ?) ON CONFLICT (kind, key) DO NOTHING RETURNING {COLUMNS}",
                (
                    new_id("job"), kind, key, self._sql.json_text(body), status.value, int(owner is not None), owner,
                    owner is not None, self._after(lease), now, now, *job_user(json.loads(body)),
                ),
            )  # fmt: skip
            if row is None:  # enqueued before: the job as it is
                row = await tx.one(f"SELECT {COLUMNS} FROM jobs WHERE kind = ? AND key = ?", (kind, key))
            return row

        row = await self._sql.write(write, single=True)
        assert row is not None  # inserted, or there already
        return self._job(row)

    async def claim_pending(
        self, kind: str | None, limit: int, *, owner: str | None = None, lease_s: float = DEFAULT_LEASE_S
    ) -> builtins.list[Job]:
        who, lease = check_claim(kind, limit, owner, lease_s)
        later = self._later
        of_kind = " AND kind = ?" if kind is not None else ""

        async def claim(tx: Tx) -> builtins.list[Row]:
            now = self._after(0.0)
            return await tx.all(
                f"UPDATE jobs SET status = 'running', owner = ?, lease_until = {later}, attempts = attempts + 1, "
                f"run_after = NULL, updated_at = {later} WHERE id IN (SELECT id FROM jobs "
                f"WHERE status IN ('pending', 'running') AND ((status = 'pending' AND (run_after IS NULL OR "
                f"run_after <= {later})) OR (status = 'running' AND (lease_until IS NULL OR lease_until < {later})))"
                f"{of_kind} ORDER BY created_at, id LIMIT ?{self._claim_lock}) RETURNING {COLUMNS}",
                (who, self._after(lease), now, now, now, *([kind] if kind is not None else []), limit),
            )

        # Claims are no user's work: no erasure fence (a claim after an erasure finds the user's jobs gone).
        rows = await self._sql.write(claim, fenced=False, single=True)
        return sorted((self._job(r) for r in rows), key=lambda j: (j.created_at, j.id))

    async def checkpoint(self, job_id: str, state: Mapping[str, Any], *, lease_s: float = DEFAULT_LEASE_S) -> Job:
        body = self._sql.json_text(job_json(state, "state"))
        lease = check_lease_s(lease_s)
        later = self._later

        async def write(tx: Tx) -> Row | None:
            return await tx.one(
                f"UPDATE jobs SET state = ?, lease_until = CASE WHEN status = 'running' THEN {later} "
                f"ELSE lease_until END, updated_at = {later} WHERE id = ? RETURNING {COLUMNS}",
                (body, self._after(lease), self._after(0.0), job_id),
            )

        row = await self._sql.write(write, single=True)
        if row is None:
            raise NotFound("job", job_id)
        return self._job(row)

    async def complete(self, job_id: str, result: Mapping[str, Any] | None = None) -> None:
        body = self._sql.json_text(job_json(result, "result")) if result is not None else None

        async def write(tx: Tx) -> None:
            sets = "status = 'done', payload = '{}', result = ?, error = NULL, lease_until = NULL"
            await self._change(tx, job_id, sets, (body,))
            await self._prune(tx)

        await self._sql.write(write)

    async def fail(self, job_id: str, error: str, *, retry_at: datetime | None) -> None:
        message = check_error(error)

        async def write(tx: Tx) -> None:
            if retry_at is not None:
                sets = "status = 'pending', error = ?, run_after = ?, owner = NULL, lease_until = NULL"
                await self._change(tx, job_id, sets, (message, retry_at))
            else:
                sets = "status = 'failed', error = ?, run_after = NULL, lease_until = NULL"
                await self._change(tx, job_id, sets, (message,))
                await self._prune(tx)

        await self._sql.write(write)

    async def _change(self, tx: Tx, job_id: str, sets: str, args: tuple[Any, ...]) -> None:
        """One job's ``sets``, and its ``updated_at`` now; ``NotFound`` when there is no such job."""
        changed = await tx.execute(
            f"UPDATE jobs SET {sets}, updated_at = {self._later} WHERE id = ?", (*args, self._after(0.0), job_id)
        )
        if changed == 0:
            raise NotFound("job", job_id)

    async def _prune(self, tx: Tx) -> None:
        await tx.execute(
            "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE status IN ('done', 'failed') "
            f"AND updated_at < {self._later} LIMIT ?)",
            (self._after(-self.retention.total_seconds()), PRUNE_BATCH),
        )
