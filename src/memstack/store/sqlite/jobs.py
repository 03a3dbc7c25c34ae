"""The SQLite store's ``JobStore`` role: durable background work in the ``jobs`` table of the same file.

Every change is one write transaction on the database thread, so claiming is atomic: two workers (threads or
processes) never claim the same job. Finished jobs keep their key and result for ``retention`` (idempotency,
inspection) with the payload dropped, then are pruned a batch at a time as other jobs finish.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Mapping
from datetime import datetime, timedelta
from functools import partial
from typing import Any

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
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._rows import to_ts
from memstack.store.sqlite._sql import SQLiteSql
from memstack.types import Job, JobStatus, new_id, utcnow

__all__ = ["SQLiteJobs", "migrate_job_users"]


def migrate_job_users(conn: sqlite3.Connection) -> None:
    """Migration ``014_job_users``: the user a job works for (from its payload), so erasing a user removes their
    jobs, finished ones (whose payload is dropped) included."""
    conn.execute("ALTER TABLE jobs ADD COLUMN tenant TEXT")
    conn.execute("ALTER TABLE jobs ADD COLUMN user_id TEXT")
    conn.execute(
        "UPDATE jobs SET tenant = json_extract(payload, '$.tenant'), user_id = json_extract(payload, '$.user_id') "
        "WHERE json_valid(payload) AND json_type(payload, '$.tenant') = 'text' "
        "AND json_type(payload, '$.user_id') = 'text'"
    )
    conn.execute("CREATE INDEX jobs_by_user ON jobs (tenant, user_id)")


class SQLiteJobs(JobReads):
    """Jobs in the store's SQLite file; see :class:`~memstack.store.base.JobStore`."""

    def __init__(self, core: Core, *, retention: timedelta = timedelta(days=7)) -> None:
        super().__init__(SQLiteSql(core))
        self._core = core
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
        lease = timedelta(seconds=check_enqueue(kind, key, owner, lease_s))
        body = job_json(payload, "payload")
        return await self._core.run(partial(self._enqueue_sync, kind, key, body, owner, lease))

    def _enqueue_sync(
        self, kind: str, key: str, payload: str, owner: str | None, lease: timedelta, conn: sqlite3.Connection
    ) -> Job:
        def body(conn: sqlite3.Connection) -> Job:
            now = utcnow()
            status = JobStatus.RUNNING if owner is not None else JobStatus.PENDING
            lease_until = to_ts(now + lease) if owner is not None else None
            row = (new_id("job"), kind, key, payload, status.value, int(owner is not None), owner, lease_until)
            conn.execute(
                "INSERT OR IGNORE INTO jobs (id, kind, key, payload, status, attempts, owner, lease_until, "
                "created_at, updated_at, tenant, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*row, to_ts(now), to_ts(now), *job_user(json.loads(payload))),
            )
            found = conn.execute(f"SELECT {COLUMNS} FROM jobs WHERE kind = ? AND key = ?", (kind, key)).fetchone()
            return self._job(found)

        return self._core.write(conn, body)

    async def claim_pending(
        self, kind: str | None, limit: int, *, owner: str | None = None, lease_s: float = DEFAULT_LEASE_S
    ) -> builtins.list[Job]:
        who, seconds = check_claim(kind, limit, owner, lease_s)
        lease = timedelta(seconds=seconds)
        return await self._core.run(partial(self._claim_sync, kind, limit, who, lease))

    def _claim_sync(
        self, kind: str | None, limit: int, owner: str, lease: timedelta, conn: sqlite3.Connection
    ) -> builtins.list[Job]:
        def body(conn: sqlite3.Connection) -> builtins.list[Job]:
            now = to_ts(utcnow())
            sql = (
                "SELECT id FROM jobs WHERE status IN ('pending', 'running') "
                "AND ((status = 'pending' AND (run_after IS NULL OR run_after <= ?)) "
                "OR (status = 'running' AND (lease_until IS NULL OR lease_until < ?)))"
            )
            args: builtins.list[Any] = [now, now]
            if kind is not None:
                sql += " AND kind = ?"
                args.append(kind)
            sql += " ORDER BY created_at, id LIMIT ?"
            args.append(limit)
            ids = [str(r[0]) for r in conn.execute(sql, args).fetchall()]
            until = to_ts(utcnow() + lease)
            claimed = []
            for job_id in ids:
                conn.execute(
                    "UPDATE jobs SET status = 'running', owner = ?, lease_until = ?, attempts = attempts + 1, "
                    "run_after = NULL, updated_at = ? WHERE id = ?",
                    (owner, until, now, job_id),
                )
                claimed.append(self._fetch(conn, job_id))
            return claimed

        return self._core.write(conn, body)

    async def checkpoint(self, job_id: str, state: Mapping[str, Any], *, lease_s: float = DEFAULT_LEASE_S) -> Job:
        body = job_json(state, "state")
        lease = timedelta(seconds=check_lease_s(lease_s))

        def run(conn: sqlite3.Connection) -> Job:
            now = utcnow()
            self._change(
                conn,
                job_id,
                "state = ?, lease_until = CASE WHEN status = 'running' THEN ? ELSE lease_until END, updated_at = ?",
                (body, to_ts(now + lease), to_ts(now)),
            )
            return self._fetch(conn, job_id)

        return await self._core.run(lambda conn: self._core.write(conn, run))

    async def complete(self, job_id: str, result: Mapping[str, Any] | None = None) -> None:
        body = job_json(result, "result") if result is not None else None

        def run(conn: sqlite3.Connection) -> None:
            self._change(
                conn,
                job_id,
                "status = 'done', payload = '{}', result = ?, error = NULL, lease_until = NULL, updated_at = ?",
                (body, to_ts(utcnow())),
            )
            self._prune(conn)

        await self._core.run(lambda conn: self._core.write(conn, run))

    async def fail(self, job_id: str, error: str, *, retry_at: datetime | None) -> None:
        message = check_error(error)

        def run(conn: sqlite3.Connection) -> None:
            now = to_ts(utcnow())
            if retry_at is not None:
                sets = "status = 'pending', error = ?, run_after = ?, owner = NULL, lease_until = NULL, updated_at = ?"
                self._change(conn, job_id, sets, (message, to_ts(retry_at), now))
            else:
                sets = "status = 'failed', error = ?, run_after = NULL, lease_until = NULL, updated_at = ?"
                self._change(conn, job_id, sets, (message, now))
                self._prune(conn)

        await self._core.run(lambda conn: self._core.write(conn, run))

    # -- database thread ----------------------------------------------------------------------------------------------

    def _fetch(self, conn: sqlite3.Connection, job_id: str) -> Job:
        row = conn.execute(f"SELECT {COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            raise NotFound("job", job_id)
        return self._job(row)

    @staticmethod
    def _change(conn: sqlite3.Connection, job_id: str, sets: str, args: tuple[Any, ...]) -> None:
        cursor = conn.execute(f"UPDATE jobs SET {sets} WHERE id = ?", (*args, job_id))
        if cursor.rowcount == 0:
            raise NotFound("job", job_id)

    def _prune(self, conn: sqlite3.Connection) -> None:
        cutoff = to_ts(utcnow() - self.retention)
        conn.execute(
            "DELETE FROM jobs WHERE id IN "
            "(SELECT id FROM jobs WHERE status IN ('done', 'failed') AND updated_at < ? LIMIT ?)",
            (cutoff, PRUNE_BATCH),
        )
