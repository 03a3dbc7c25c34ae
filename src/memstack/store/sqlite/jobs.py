"""The SQLite store's ``JobStore`` role (:class:`~memstack.store._jobs.Jobs`): durable background work in the
``jobs`` table of the same file, with this machine's clock (every process sharing the file runs on it): a time is
passed as the time itself, read inside the write's transaction. Every write is one write transaction on the
database thread, which holds the whole file, so claiming is atomic: two workers (threads or processes) never claim
the same job.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

from memstack.store._jobs import Jobs
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._sql import SQLiteSql
from memstack.types import utcnow

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


class SQLiteJobs(Jobs):
    """Jobs in the store's SQLite file; see :class:`~memstack.store.base.JobStore`."""

    _later = "?"

    def __init__(self, core: Core, *, retention: timedelta = timedelta(days=7)) -> None:
        super().__init__(SQLiteSql(core), retention=retention)

    def _after(self, seconds: float) -> datetime:
        return utcnow() + timedelta(seconds=seconds)
