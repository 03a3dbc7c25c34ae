"""The SQLite store's ``ArchiveVectors`` role: vectors of archived messages, read back by recall's per-user index.

Table (migration ``011_archive_vectors``): ``archive_vectors``, one row per message of an archived exchange
(``side`` 0 the user's message, 1 the reply) with the speaker's name when it was imported with one, and the
float32 vector (``NULL`` for a blank message: recorded, so the backfill does not come back to it, never indexed).
``seq`` numbers the writes; SQLite has one writer at a time, so per user a later write always has a greater ``seq``
than any write a reader could already see. Rows go with their exchange (``ON DELETE CASCADE``).

``search`` reads the user's messages and ranks them in memory (:class:`~memstack.retrieval.archive.UserArchive`):
the reference ranking, O(the user's archive) per query, without the exchanges forgotten memories hide
(:mod:`memstack.store.sqlite.hidden`). Recall normally answers from its own index, kept current
with ``messages(after=...)`` (``embedded``: the store is in this process), and calls this only for a user larger
than that index may hold.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from memstack.retrieval.archive import ArchiveQuery, UserArchive
from memstack.store._checks import check_k
from memstack.store._hidden import hidden_turns
from memstack.store._session_rows import TURN_COLUMNS, check_page, turn_from_row
from memstack.store._vector_rows import message_rows, not_archived
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._rows import unit_vector
from memstack.store.sqlite._sql import SQLiteSql
from memstack.types import MESSAGE_ROLES, ArchivedMessage, ArchivedTurn, ArchiveMatch, TurnVectors, UserRef

__all__ = ["SQLiteArchiveVectors", "migrate_archive_vectors"]


def migrate_archive_vectors(conn: sqlite3.Connection) -> None:
    """Migration ``011_archive_vectors``."""
    conn.execute(
        """
        CREATE TABLE archive_vectors (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            turn_pk INTEGER NOT NULL REFERENCES session_turns (pk) ON DELETE CASCADE,
            tenant TEXT NOT NULL,
            user_id TEXT NOT NULL,
            side INTEGER NOT NULL CHECK (side IN (0, 1)),
            speaker TEXT,
            embedding BLOB,
            UNIQUE (turn_pk, side)
        )
        """
    )
    conn.execute("CREATE INDEX archive_vectors_by_user ON archive_vectors (tenant, user_id, seq)")


#: Messages read per query while building the ranking.
_PAGE = 5000

_MESSAGES = (
    "SELECT v.seq, s.id, t.turn, v.side, CASE v.side WHEN 0 THEN t.user_text ELSE t.assistant_text END, t.at, "
    "v.speaker, v.embedding FROM archive_vectors v JOIN session_turns t ON t.pk = v.turn_pk "
    "JOIN sessions s ON s.pk = t.session_pk "
    "WHERE v.tenant = ? AND v.user_id = ? AND v.seq > ? AND v.embedding IS NOT NULL ORDER BY v.seq LIMIT ?"
)
_MISSING = (
    f"SELECT {TURN_COLUMNS} FROM session_turns t JOIN sessions s ON s.pk = t.session_pk "
    "WHERE NOT EXISTS (SELECT 1 FROM archive_vectors v WHERE v.turn_pk = t.pk) ORDER BY t.pk LIMIT ?"
)
_TURN_PK = (
    "SELECT t.pk FROM session_turns t JOIN sessions s ON s.pk = t.session_pk "
    "WHERE s.tenant = ? AND s.user_id = ? AND s.id = ? AND t.turn = ?"
)
_INSERT = (
    "INSERT INTO archive_vectors (turn_pk, tenant, user_id, side, speaker, embedding) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (turn_pk, side) DO NOTHING"
)


class SQLiteArchiveVectors:
    """Vectors of archived messages; every statement on the database thread."""

    def __init__(self, core: Core) -> None:
        self._core = core
        self._sql = SQLiteSql(core)

    @property
    def embedded(self) -> bool:
        return True

    async def search(
        self, user: UserRef, query: ArchiveQuery, k: int, *, exclude_session: str | None = None
    ) -> builtins.list[ArchiveMatch]:
        check_k(k)
        archive = UserArchive(query.settings)
        while True:
            rows = await self.messages(user, after=archive.seq, limit=_PAGE)
            archive.add(rows)
            if len(rows) < _PAGE:
                break
        archive.hide(await hidden_turns(self._sql, user))
        return archive.rank(query, k, exclude_session=exclude_session)

    async def put(self, user: UserRef, vectors: Sequence[TurnVectors]) -> int:
        dim = self._core.dim
        rows = message_rows(vectors, lambda v: unit_vector(v, dim).astype("<f4").tobytes())
        if not rows:
            return 0

        def body(conn: sqlite3.Connection) -> int:
            written = 0
            pks: dict[tuple[str, int], int] = {}
            for session_id, turn, side, speaker, blob in rows:
                key = (session_id, turn)
                if key not in pks:
                    found = conn.execute(_TURN_PK, (user.tenant, user.user_id, session_id, turn)).fetchone()
                    if found is None:
                        raise not_archived(session_id, turn)
                    pks[key] = int(found[0])
                cur = conn.execute(_INSERT, (pks[key], user.tenant, user.user_id, side, speaker, blob))
                written += cur.rowcount
            return written

        return await self._core.run(lambda conn: self._core.write(conn, body))

    async def messages(self, user: UserRef, *, after: int = 0, limit: int = 1000) -> builtins.list[ArchivedMessage]:
        check_page(limit, max(after, 0))
        args = (user.tenant, user.user_id, after, limit)

        def run(conn: sqlite3.Connection) -> builtins.list[ArchivedMessage]:
            return [_message(row) for row in conn.execute(_MESSAGES, args)]

        return await self._core.run(run)

    async def missing(self, *, limit: int = 100) -> builtins.list[ArchivedTurn]:
        check_page(limit)
        return await self._core.run(lambda conn: [_turn(r) for r in conn.execute(_MISSING, (limit,))])


def _turn(row: tuple[Any, ...]) -> ArchivedTurn:
    return turn_from_row(row, when=datetime.fromisoformat, flags=json.loads)


def _message(row: tuple[Any, ...]) -> ArchivedMessage:
    seq, session_id, turn, side, text, at, speaker, blob = row
    vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    return ArchivedMessage(
        int(seq), session_id, int(turn), MESSAGE_ROLES[side], text, datetime.fromisoformat(at), speaker, vector
    )
