"""The SQLite store's ``JobStore`` role (:class:`~memstack.store._jobs.Jobs`): durable background work in the
``jobs`` table of the same file, with this machine's clock (every process sharing the file runs on it): a time is
passed as the time itself, read inside the write's transaction. Every write is one write transaction on the
database thread, which holds the whole file, so claiming is atomic: two workers (threads or processes) never claim
the same job.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from memstack.store._jobs import Jobs
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._sql import SQLiteSql
from memstack.types import utcnow

__all__ = ["SQLiteJobs"]


class SQLiteJobs(Jobs):
    """Jobs in the store's SQLite file; see :class:`~memstack.store.base.JobStore`."""

    _later = "?"

    def __init__(self, core: Core, *, retention: timedelta = timedelta(days=7)) -> None:
        super().__init__(SQLiteSql(core), retention=retention)

    def _after(self, seconds: float) -> datetime:
        return utcnow() + timedelta(seconds=seconds)
