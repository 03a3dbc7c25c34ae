"""The PostgreSQL store's ``JobStore`` role (:class:`~memstack.store._jobs.Jobs`): durable background work in the
``jobs`` table. Times are the server's (``now()``, the time of the write's transaction), so leases do not depend on
the clocks of the machines running the workers; a claim skips the rows another claim holds (``FOR UPDATE SKIP
LOCKED``), so workers in several processes (or on several hosts) sharing the database never claim the same job and
never wait on each other's claims.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import psycopg

from memstack.store._jobs import Jobs
from memstack.store.postgres._db import Database
from memstack.store.postgres._sql import PgSql

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


class PgJobs(Jobs):
    """Jobs in PostgreSQL; see :class:`~memstack.store.base.JobStore`."""

    _later = "now() + make_interval(secs => ?)"
    _claim_lock = " FOR UPDATE SKIP LOCKED"

    def __init__(self, db: Database, *, retention: timedelta = timedelta(days=7)) -> None:
        super().__init__(PgSql(db), retention=retention)

    def _after(self, seconds: float) -> float:
        return seconds
