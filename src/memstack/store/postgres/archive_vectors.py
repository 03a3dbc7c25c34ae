"""The PostgreSQL store's ``ArchiveVectors`` role: vectors of archived messages, read back by recall's index.

Table (migration ``0011_archive_vectors``), as in the SQLite store: one row per message of an archived exchange
(``side`` 0 the user's message, 1 the reply), the speaker's name when imported with one, ``embedding vector(dim)``
(``NULL`` for a blank message), with what recall ranks them by in the database (``search``), written and kept
current by :mod:`memstack.store.vectors.archive` in each ``put``'s transaction.

``seq`` is an identity, and identities are handed out before commit, so two concurrent writers could commit out of
order and a reader paging by ``seq`` would skip the earlier one. Writes of one user therefore take a per-user
transaction lock first: per user, ``seq`` order is commit order.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from memstack.retrieval.archive import ArchiveQuery
from memstack.store._checks import check_k, unit_vector
from memstack.store._vector_rows import ArchiveVectorReads, message_rows, not_archived
from memstack.store.fence import user_lock_key
from memstack.store.postgres._db import Database
from memstack.store.postgres._sql import PgSql
from memstack.store.vectors.archive import ArchiveSearch, insert_messages
from memstack.types import ArchiveMatch, TurnVectors, UserRef

__all__ = ["PgArchiveVectors"]


_TURN_SEQS = (
    "SELECT s.id, t.turn, t.seq, t.session_seq, t.at, t.user_text, t.assistant_text "
    "FROM session_turns t JOIN sessions s ON s.seq = t.session_seq "
    "JOIN unnest(%s::text[], %s::int[]) AS w(sid, turn) ON s.id = w.sid AND t.turn = w.turn "
    "WHERE s.tenant = %s AND s.user_id = %s"
)


class PgArchiveVectors(ArchiveVectorReads):
    """Vectors of archived messages in PostgreSQL."""

    def __init__(self, db: Database, dim: int, search: ArchiveSearch | None = None) -> None:
        super().__init__(PgSql(db))
        self._db = db
        self._dim = dim
        self._search = search or ArchiveSearch(db, dim)

    async def put(self, user: UserRef, vectors: Sequence[TurnVectors]) -> int:
        rows = message_rows(vectors, lambda v: self._db.vector_param(unit_vector(v, self._dim)))
        if not rows:
            return 0
        keys = list(dict.fromkeys((sid, turn) for sid, turn, *_ in rows))
        async with self._db.writing() as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (user_lock_key(user, "archive_vectors"),))
            cur = await conn.execute(
                _TURN_SEQS, ([k[0] for k in keys], [k[1] for k in keys], user.tenant, user.user_id)
            )
            turns = {
                (sid, int(turn)): (int(seq), int(session), int(turn), at, (u, a))
                for sid, turn, seq, session, at, u, a in await cur.fetchall()
            }
            for sid, turn in keys:
                if (sid, turn) not in turns:
                    raise not_archived(sid, turn)
            placed = [(*turns[(sid, turn)], side, speaker, vector) for sid, turn, side, speaker, vector in rows]
            return await insert_messages(conn, user, placed)

    @property
    def embedded(self) -> bool:
        return False

    async def search(
        self, user: UserRef, query: ArchiveQuery, k: int, *, exclude_session: str | None = None
    ) -> builtins.list[ArchiveMatch]:
        return await self._search.search(user, query, check_k(k), exclude_session)
