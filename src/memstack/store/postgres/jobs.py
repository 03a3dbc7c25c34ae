"""The PostgreSQL store's ``JobStore`` role (:class:`~memstack.store._jobs.Jobs`): durable background work in the
``jobs`` table. Times are the server's (``now()``, the time of the write's transaction), so leases do not depend on
the clocks of the machines running the workers; a claim skips the rows another claim holds (``FOR UPDATE SKIP
LOCKED``), so workers in several processes (or on several hosts) sharing the database never claim the same job and
never wait on each other's claims.
"""

from __future__ import annotations

from datetime import timedelta

from memstack.store._jobs import Jobs
from memstack.store.postgres._db import Database
from memstack.store.postgres._sql import PgSql

__all__ = ["PgJobs"]


class PgJobs(Jobs):
    """Jobs in PostgreSQL; see :class:`~memstack.store.base.JobStore`."""

    _later = "now() + make_interval(secs => ?)"
    _claim_lock = " FOR UPDATE SKIP LOCKED"

    def __init__(self, db: Database, *, retention: timedelta = timedelta(days=7)) -> None:
        super().__init__(PgSql(db), retention=retention)

    def _after(self, seconds: float) -> float:
        return seconds
