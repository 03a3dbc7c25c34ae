"""The SQLite store's session leases (:mod:`memstack.store.leases`): the ``session_leases`` table of the same file.

Processes sharing the file (two servers, a server and ``memstack chat``) keep a session's turns in order through
it, as PostgreSQL's do: one row per session ever held, ``owner`` (``NULL`` when free), the fencing ``token`` (bumped
by every take, never reset), ``expires_at`` (Unix seconds of this machine's clock: every process sharing a SQLite
file runs on this machine). Each statement is its own write transaction on the database thread.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

from memstack.store.leases import LeaseKey, LeaseRows
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._sql import SQLiteSql

__all__ = ["SQLiteLeaseTable"]


class SQLiteLeaseTable(LeaseRows):
    """:class:`~memstack.store.leases.LeaseTable` on SQLite: expiries in Unix seconds of this machine's clock."""

    _later = "?"
    _free = "0"

    def __init__(self, core: Core) -> None:
        super().__init__(SQLiteSql(core))
        self._core = core

    def _after(self, seconds: float) -> float:
        return time.time() + seconds

    async def renew(self, owner: str, keys: Sequence[LeaseKey], ttl_s: float) -> set[LeaseKey]:
        def body(conn: sqlite3.Connection) -> set[LeaseKey]:
            until = time.time() + ttl_s
            kept: set[LeaseKey] = set()
            for key in keys:
                cur = conn.execute(
                    "UPDATE session_leases SET expires_at = ? "
                    "WHERE tenant = ? AND user_id = ? AND session_id = ? AND owner = ?",
                    (until, *key, owner),
                )
                if cur.rowcount:
                    kept.add(key)
            return kept

        return await self._core.run(lambda conn: self._core.write(conn, body, fenced=False))
