"""The SQLite store's ``UserData`` role: export one user's rows, or erase them in one write transaction.

The erasure's transaction also gives the user a new erasure epoch (``user_erasures``, :mod:`memstack.store.fence`):
SQLite has one writer at a time, so every fenced write after the commit, in any process, reads the new epoch and
is refused. The user's entry in the vector cache is dropped after the commit (other processes drop theirs on seeing
the commit).

Nothing the user said is left in the store's files afterwards:

- the rows' bytes are overwritten with zeros where they lay (every connection runs with ``secure_delete``,
  :mod:`memstack.store.sqlite._db`);
- the full-text indexes (FTS5) keep a deleted row's terms in their older segments until those are merged with the
  segment holding the deletion, so the erasure merges every segment of each index the user had rows in
  (``'optimize'``). That rewrites the whole index, with the write lock held: erasing a user of 1,000 memories
  beside 100,000 memories of other users took 0.16 s instead of 0.01 s (median of 3, ``memstack bench erase
  --others 1000 --runs 3``). An erasure is rare, and this is what it takes for the index to keep no word of the
  user; it is part of the erasure's transaction, so a crash leaves it done or the user not erased;
- the write-ahead log (``-wal``) still holds the pages as they were before (the user's text included) until a
  checkpoint copies the new ones into the database and the log is cut to nothing: right after the commit the
  erasure runs ``PRAGMA wal_checkpoint(TRUNCATE)``, which waits for readers of older snapshots (up to the busy
  timeout). Until it has succeeded the erasure's row says ``purged = 0``; opening the store finishes such purges
  (a process killed between the commit and the checkpoint), and so does the next erasure.
"""

from __future__ import annotations

import builtins
import json
import logging
import sqlite3
import time
from collections.abc import Mapping
from typing import Any

from memstack.store._checks import unit_vector
from memstack.store._fulltext import exchange_terms, text_terms
from memstack.store._outbox import user_erased
from memstack.store._sql import drive
from memstack.store._users import erase_plan, erase_rows
from memstack.store._users_load import Columns, LoadHooks, UserRows
from memstack.store.fence import KEEP_S, erasure_key, new_epoch
from memstack.store.sqlite._core import Core, erasure_epoch
from memstack.store.sqlite._db import transaction
from memstack.store.sqlite._rows import fts_owner
from memstack.store.sqlite._sql import SQLiteSql, tx
from memstack.store.vectors.base import VectorWrite
from memstack.types import ErasureReport, UserRef, Vector, check_id, utcnow

__all__ = ["SQLiteUserData", "finish_purges", "prune_erasures"]

log = logging.getLogger("memstack.store")

#: The tables an erasure empties (:func:`~memstack.store._users.erase_plan`; SQLite has none of its own).
ERASE = erase_plan("pk")

#: (table, its full-text index, the tables whose erased rows mean the index held the user's terms).
_FULLTEXT = (
    ("memories_fts", ("memories", "memory_history")),  # history: memories deleted earlier left terms behind too
    ("session_turns_fts", ("session_turns",)),
)


def _checkpoint(conn: sqlite3.Connection) -> bool:
    """Database thread, outside a transaction: copy the write-ahead log into the database and cut it to zero bytes;
    ``False`` when a reader of an older snapshot kept it from completing within the busy timeout."""
    busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return not busy


def finish_purges(conn: sqlite3.Connection) -> bool:
    """Database thread: empty the write-ahead log for erasures whose purge did not complete (the process died after
    the commit, or a reader held the log); ``False`` when a reader still kept it from completing."""
    open_ = conn.execute("SELECT key, epoch FROM user_erasures WHERE purged = 0").fetchall()
    if not open_:
        return True
    if not _checkpoint(conn):
        return False
    with transaction(conn, write=True):
        conn.executemany("UPDATE user_erasures SET purged = 1 WHERE key = ? AND epoch = ?", open_)
    return True


def prune_erasures(conn: sqlite3.Connection) -> None:
    """Database thread, when the store opens: forget erasures older than ``KEEP_S`` whose purge is done (erasures
    also do it as they commit), so a store without later erasures does not keep their digests."""
    cutoff = time.time() - KEEP_S
    if conn.execute("SELECT 1 FROM user_erasures WHERE erased_at < ? AND purged = 1 LIMIT 1", (cutoff,)).fetchone():
        with transaction(conn, write=True):
            conn.execute("DELETE FROM user_erasures WHERE erased_at < ? AND purged = 1", (cutoff,))


def _terms(terms: builtins.list[str]) -> Columns:
    return {"terms": ("?", " ".join(terms)), "n_terms": ("?", len(terms))}


class SQLiteUserData(UserRows):
    """One user's rows in the store's SQLite file; see :class:`~memstack.store.base.UserData` (``export``,
    ``list`` and ``load``: :class:`~memstack.store._users_load.UserRows`)."""

    def __init__(self, core: Core) -> None:
        super().__init__(SQLiteSql(core))
        self._core = core
        self._hooks = LoadHooks(
            memory=self._memory_columns,
            turn=lambda user, u, a: {"fts_owner": ("?", fts_owner(user))} | _terms(exchange_terms(u, a)),
            array=lambda items: json.dumps(items),
            # The memories' full-text rows are written by their writers, not by a trigger (_schema.py): all at once.
            after_memories=(
                "INSERT INTO memories_fts (rowid, terms, fts_owner) SELECT pk, terms, fts_owner FROM memories "
                "WHERE tenant = ? AND user_id = ? AND id IN (SELECT value FROM json_each(?))"
            ),
        )

    def _memory_columns(self, user: UserRef, content: str, vector: Vector) -> Columns:
        blob = unit_vector(vector, self._core.dim).astype("<f4").tobytes()
        return {"fts_owner": ("?", fts_owner(user)), "embedding": ("?", blob)} | _terms(text_terms(content))

    async def _loaded(self, user: UserRef, document: Mapping[str, builtins.list[dict[str, Any]]]) -> None:
        self._core.vectors.invalidate(user)  # the user's memories are read again, with the imported ones

    async def epoch(self, user: UserRef) -> int:
        check_id(user.user_id, "user_id")
        return await self._core.run(lambda conn: erasure_epoch(conn, user))

    async def erase(self, user: UserRef) -> ErasureReport:
        check_id(user.user_id, "user_id")
        removed = await self._core.run(lambda conn: self._erase_rows(conn, user))
        await self._core.run(lambda conn: self._purge_log(conn, user))
        return ErasureReport(user.tenant, user.user_id, removed)

    def _erase_rows(self, conn: sqlite3.Connection, user: UserRef) -> dict[str, int]:
        """Database thread: the erasure's transaction: the user's rows, their terms in the full-text indexes, and
        their new epoch."""

        def body(conn: sqlite3.Connection) -> dict[str, int]:
            removed = drive(erase_rows(tx(conn), ERASE, user))
            for fts, tables in _FULLTEXT:
                if any(removed[t] for t in tables):
                    conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('optimize')")
            now = time.time()
            conn.execute(
                "INSERT INTO user_erasures (key, epoch, erased_at, purged) VALUES (?, ?, ?, 0) ON CONFLICT (key) "
                "DO UPDATE SET epoch = excluded.epoch, erased_at = excluded.erased_at, purged = 0",
                (erasure_key(user), new_epoch(), now),
            )
            conn.execute("DELETE FROM user_erasures WHERE erased_at < ?", (now - KEEP_S,))
            drive(user_erased(tx(conn), self._sql, user, at=utcnow(), removed=sum(removed.values())))
            return removed

        removed = self._core.write(conn, body)
        self._core.vectors.committed(user, VectorWrite(stale=True))  # before any later write: nothing of theirs held
        return removed

    def _purge_log(self, conn: sqlite3.Connection, user: UserRef) -> None:
        """Database thread, after the commit: the write-ahead log emptied (see the module docstring)."""
        if not finish_purges(conn):
            log.warning(
                "erased %s/%s, but a reader of an older snapshot kept the write-ahead log of %s from being emptied: "
                "the erased text stays in that file until the next erasure or the next start",
                user.tenant,
                user.user_id,
                self._core.db.path,
            )
