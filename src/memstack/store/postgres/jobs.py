"""The PostgreSQL store's ``JobStore`` role: durable background work in the ``jobs`` table.

Claiming is one ``UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED)``: workers in several processes (or on
several hosts) sharing the database never claim the same job and never wait on each other's claims. Times are the
server's (``now()``), so leases do not depend on the clocks of the machines running the workers. Finished jobs keep
their key and result for ``retention`` (idempotency, inspection) with the payload dropped, then are pruned a batch
at a time as other jobs finish.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from memstack.errors import NotFound
from memstack.store._jobs import (
    COLUMNS,
    PRUNE_BATCH,
    JobReads,
    check_claim,
    check_enqueue,
    check_error,
    check_lease_s,
    job_json,
    job_user,
)
from memstack.store.base import DEFAULT_LEASE_S
from memstack.store.postgres._db import Database
from memstack.store.postgres._sql import PgSql
from memstack.types import Job, JobStatus, new_id

__all__ = ["PgJobs", "migrate_job_users"]


async def migrate_job_users(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    """Migration ``0015_job_users``: the user a job works for (from its payload), so erasing a user removes their
    jobs, finished ones (whose payload is dropped) included."""
    await conn.execute(b"ALTER TABLE jobs ADD COLUMN tenant text, ADD COLUMN user_id text")
    await conn.execute(
        b"UPDATE jobs SET tenant = payload->>'tenant', user_id = payload->>'user_id' "
        b"WHERE jsonb_typeof(payload->'tenant') = 'string' AND jsonb_typeof(payload->'user_id') = 'string'"
    )
    await conn.execute(b"CREATE INDEX jobs_by_user ON jobs (tenant, user_id)")


def _json(value: Mapping[str, Any], what: str) -> Jsonb:
    job_json(value, what)  # InputError unless it is JSON
    return Jsonb(dict(value))


class PgJobs(JobReads):
    """Jobs in PostgreSQL; see :class:`~memstack.store.base.JobStore`."""

    def __init__(self, db: Database, *, retention: timedelta = timedelta(days=7)) -> None:
        super().__init__(PgSql(db))
        self._db = db
        self.retention = retention

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
        body = _json(payload, "payload")
        status = JobStatus.RUNNING if owner is not None else JobStatus.PENDING
        async with self._db.writing(single=True) as conn:
            cur = await conn.execute(
                "INSERT INTO jobs (id, kind, key, payload, status, attempts, owner, lease_until, created_at, "
                "updated_at, tenant, user_id) VALUES (%s, %s, %s, %s, %s, %s, %s, "
                "CASE WHEN %s::text IS NULL THEN NULL ELSE now() + make_interval(secs => %s) END, now(), now(), "
                f"%s, %s) ON CONFLICT (kind, key) DO NOTHING RETURNING {COLUMNS}",
                (
                    new_id("job"),
                    kind,
                    key,
                    body,
                    status.value,
                    int(owner is not None),
                    owner,
                    owner,
                    lease,
                    *job_user(dict(payload)),
                ),
            )
            row = await cur.fetchone()
            if row is None:
                cur = await conn.execute(f"SELECT {COLUMNS} FROM jobs WHERE kind = %s AND key = %s", (kind, key))
                row = await cur.fetchone()
        assert row is not None
        return self._job(row)

    async def claim_pending(
        self, kind: str | None, limit: int, *, owner: str | None = None, lease_s: float = DEFAULT_LEASE_S
    ) -> builtins.list[Job]:
        who, lease = check_claim(kind, limit, owner, lease_s)
        async with self._db.connection() as conn:
            cur = await conn.execute(
                "UPDATE jobs SET status = 'running', owner = %s, lease_until = now() + make_interval(secs => %s), "
                "attempts = attempts + 1, run_after = NULL, updated_at = now() WHERE id IN ("
                "SELECT id FROM jobs WHERE status IN ('pending', 'running') "
                "AND ((status = 'pending' AND (run_after IS NULL OR run_after <= now())) "
                "OR (status = 'running' AND (lease_until IS NULL OR lease_until < now()))) "
                "AND (%s::text IS NULL OR kind = %s) ORDER BY created_at, id LIMIT %s FOR UPDATE SKIP LOCKED) "
                f"RETURNING {COLUMNS}",
                (who, lease, kind, kind, limit),
            )
            rows = await cur.fetchall()
        return sorted((self._job(r) for r in rows), key=lambda j: (j.created_at, j.id))

    async def checkpoint(self, job_id: str, state: Mapping[str, Any], *, lease_s: float = DEFAULT_LEASE_S) -> Job:
        body = _json(state, "state")
        lease = check_lease_s(lease_s)
        async with self._db.writing(single=True) as conn:
            cur = await conn.execute(
                "UPDATE jobs SET state = %s, lease_until = CASE WHEN status = 'running' "
                "THEN now() + make_interval(secs => %s) ELSE lease_until END, updated_at = now() "
                f"WHERE id = %s RETURNING {COLUMNS}",
                (body, lease, job_id),
            )
            row = await cur.fetchone()
        if row is None:
            raise NotFound("job", job_id)
        return self._job(row)

    async def complete(self, job_id: str, result: Mapping[str, Any] | None = None) -> None:
        body = _json(result, "result") if result is not None else None
        async with self._db.writing() as conn:
            await self._change(
                conn,
                job_id,
                "status = 'done', payload = '{}', result = %s, error = NULL, lease_until = NULL, updated_at = now()",
                (body,),
            )
            await self._prune(conn)

    async def fail(self, job_id: str, error: str, *, retry_at: datetime | None) -> None:
        message = check_error(error)
        async with self._db.writing() as conn:
            if retry_at is not None:
                sets = (
                    "status = 'pending', error = %s, run_after = %s, owner = NULL, lease_until = NULL, "
                    "updated_at = now()"
                )
                await self._change(conn, job_id, sets, (message, retry_at))
            else:
                sets = "status = 'failed', error = %s, run_after = NULL, lease_until = NULL, updated_at = now()"
                await self._change(conn, job_id, sets, (message,))
                await self._prune(conn)

    @staticmethod
    async def _change(conn: Any, job_id: str, sets: str, args: tuple[Any, ...]) -> None:
        cur = await conn.execute(f"UPDATE jobs SET {sets} WHERE id = %s", (*args, job_id))
        if cur.rowcount == 0:
            raise NotFound("job", job_id)

    async def _prune(self, conn: Any) -> None:
        await conn.execute(
            "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE status IN ('done', 'failed') "
            "AND updated_at < now() - make_interval(secs => %s) LIMIT %s)",
            (self.retention.total_seconds(), PRUNE_BATCH),
        )
