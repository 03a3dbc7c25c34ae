"""The SQLite store's ``ArchiveVectors`` role: vectors of archived messages, read back by recall's per-user index.

Table (migration ``011_archive_vectors``, :data:`memstack.store._tables.ARCHIVE_VECTORS`): ``archive_vectors``, one row
per message of an archived exchange (``side`` 0 the user's message, 1 the reply) with the speaker's name when it was
imported with one, and the float32 vector (``NULL`` for a blank message: recorded, so the backfill does not come back to
it, never indexed). ``seq`` numbers the writes; SQLite has one writer at a time, so per user a later write always has a
greater ``seq`` than any write a reader could already see. Rows go with their exchange (``ON DELETE CASCADE``).

``search`` reads the user's messages and ranks them in memory (:class:`~memstack.retrieval.archive.UserArchive`):
the reference ranking, O(the user's archive) per query, without the exchanges forgotten memories hide
(:mod:`memstack.store.sqlite.hidden`). Recall normally answers from its own index, kept current
with ``messages(after=...)`` (``embedded``: the store is in this process), and calls this only for a user larger
than that index may hold.
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Sequence

from memstack.retrieval.archive import ArchiveQuery, UserArchive
from memstack.store._checks import check_k, unit_vector
from memstack.store._hidden import hidden_turns
from memstack.store._vector_rows import ArchiveVectorReads, message_rows, not_archived
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._sql import SQLiteSql
from memstack.types import ArchiveMatch, TurnVectors, UserRef

__all__ = ["SQLiteArchiveVectors"]


#: Messages read per query while building the ranking.
_PAGE = 5000

_TURN_PK = (
    "SELECT t.pk FROM session_turns t JOIN sessions s ON s.pk = t.session_pk "
    "WHERE s.tenant = ? AND s.user_id = ? AND s.id = ? AND t.turn = ?"
)
_INSERT = (
    "INSERT INTO archive_vectors (turn_pk, tenant, user_id, side, speaker, embedding) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (turn_pk, side) DO NOTHING"
)


class SQLiteArchiveVectors(ArchiveVectorReads):
    """Vectors of archived messages; every statement on the database thread."""

    def __init__(self, core: Core) -> None:
        super().__init__(SQLiteSql(core))
        self._core = core

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
