"""The PostgreSQL store's ``ArchiveVectors`` role: vectors of archived messages, read back by recall's index.

Table (migration ``0011_archive_vectors``), as in the SQLite store: one row per message of an archived exchange
(``side`` 0 the user's message, 1 the reply), the speaker's name when imported with one, ``embedding vector(dim)``
(``NULL`` for a blank message). Migration ``0013_archive_search`` adds what recall needs to rank a user's archive
in the database (``search``: :mod:`memstack.store.postgres._archive_search`): each message's place in its
conversation, its stems, the message before it, per-user statistics, full-text and HNSW indexes; every ``put``
keeps them current in its transaction.

``seq`` is an identity, and identities are handed out before commit, so two concurrent writers could commit out of
order and a reader paging by ``seq`` would skip the earlier one. Writes of one user therefore take a per-user
transaction lock first: per user, ``seq`` order is commit order.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from memstack.retrieval.archive import ArchiveQuery
from memstack.store._checks import check_k, unit_vector
from memstack.store._fulltext import term_ids
from memstack.store._vector_rows import ArchiveVectorReads, message_rows, not_archived
from memstack.store.postgres._archive_search import ArchiveSearch, message_terms, relink, session_totals
from memstack.store.postgres._db import Database
from memstack.store.postgres._rows import user_lock_key
from memstack.store.postgres._sql import PgSql
from memstack.types import ArchiveMatch, TurnVectors, UserRef

__all__ = ["PgArchiveVectors"]


_TURN_SEQS = (
    "SELECT s.id, t.turn, t.seq, t.session_seq, t.at, t.user_text, t.assistant_text "
    "FROM session_turns t JOIN sessions s ON s.seq = t.session_seq "
    "JOIN unnest(%s::text[], %s::int[]) AS w(sid, turn) ON s.id = w.sid AND t.turn = w.turn "
    "WHERE s.tenant = %s AND s.user_id = %s"
)
_INSERT = (
    "INSERT INTO archive_vectors (turn_seq, tenant, user_id, side, speaker, embedding, session_seq, turn, at, "
    "term_ids, n_terms) VALUES (%s, %s, %s, %s, %s, %s::vector, %s, %s, %s, %s::bigint[], %s) "
    "ON CONFLICT (turn_seq, side) DO NOTHING"
)


class PgArchiveVectors(ArchiveVectorReads):
    """Vectors of archived messages in PostgreSQL."""

    def __init__(self, db: Database, dim: int, search: ArchiveSearch | None = None) -> None:
        super().__init__(PgSql(db))
        self._db = db
        self._dim = dim
        self._search = search or ArchiveSearch()

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
                (sid, int(turn)): (int(seq), int(session), at, (u, a))
                for sid, turn, seq, session, at, u, a in await cur.fetchall()
            }
            for sid, turn in keys:
                if (sid, turn) not in turns:
                    raise not_archived(sid, turn)
            sessions = {session for _, session, _, _ in turns.values()}
            before = await session_totals(conn, user, sessions)
            params = []
            for sid, turn, side, speaker, vector in rows:
                seq, session, at, texts = turns[(sid, turn)]
                ids = term_ids(message_terms(texts[side], speaker)) if vector is not None else []
                params.append((seq, user.tenant, user.user_id, side, speaker, vector, session, turn, at, ids, len(ids)))
            async with conn.cursor() as insert:
                await insert.executemany(_INSERT, params)
                written = insert.rowcount
            if written:
                await relink(conn, user, sessions, before)
        return max(int(written), 0)

    @property
    def embedded(self) -> bool:
        return False

    async def search(
        self, user: UserRef, query: ArchiveQuery, k: int, *, exclude_session: str | None = None
    ) -> builtins.list[ArchiveMatch]:
        k = check_k(k)
        vector = None
        if query.vector is not None:  # checked as any vector, sent as given: the dot product is part of the score
            unit_vector(query.vector, self._dim)
            vector = self._db.vector_param(np.asarray(query.vector, dtype=np.float32).reshape(-1))
        async with self._db.connection() as conn:
            return await self._search.search(conn, user, query, vector, k, exclude_session)
