"""Migration ``0012_fulltext_terms``: full text indexed from stems computed in Python (:mod:`memstack.store._fulltext`).

Before it, ``memories.tsv`` and ``session_turns.tsv`` were generated ``to_tsvector('simple', …)`` columns: the raw
words, never stemmed ("run" did not find "running", "bakeries" did not find "bakery"), ranked by ``ts_rank_cd`` /
``ts_rank``, which have no document frequency. After it both tables hold ``terms text[]`` (the stems, in order, as
:mod:`memstack.text` computes them for the SQLite store too) and ``n_terms`` behind a GIN index, and searches rank
with BM25 over the user's own rows, in SQL (:func:`memstack.store._fulltext.pg_bm25`).

Existing rows are converted in batches of :data:`BATCH` inside the migration's transaction; the GIN indexes are
built after the backfill (one bulk build instead of an index update per row).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg

from memstack.store._fulltext import exchange_terms, text_terms

__all__ = ["BATCH", "migrate_fulltext_terms"]

#: Rows converted per batch.
BATCH = 1000

Conn = psycopg.AsyncConnection[Any]


async def _backfill(conn: Conn, table: str, columns: str, terms_of: Callable[..., list[str]]) -> None:
    last = 0
    while True:
        cur = await conn.execute(
            f"SELECT seq, {columns} FROM {table} WHERE seq > %s ORDER BY seq LIMIT %s".encode(), (last, BATCH)
        )
        batch = await cur.fetchall()
        if not batch:
            return
        seqs, terms, counts = [], [], []
        for seq, *texts in batch:
            found = terms_of(*texts)
            seqs.append(seq)
            terms.append(" ".join(found))
            counts.append(len(found))
        # One statement per batch; each row's terms travel space-joined (a stem never holds a space).
        await conn.execute(
            f"UPDATE {table} AS d SET terms = string_to_array(b.terms, ' '), n_terms = b.n_terms "
            "FROM unnest(%s::bigint[], %s::text[], %s::int[]) AS b(seq, terms, n_terms) "
            "WHERE d.seq = b.seq AND b.n_terms > 0".encode(),
            (seqs, terms, counts),
        )
        last = int(batch[-1][0])


async def migrate_fulltext_terms(conn: Conn, dim: int) -> None:
    """Migration ``0012_fulltext_terms``."""
    for table in ("memories", "session_turns"):
        await conn.execute(  # dropping the generated column drops its GIN index with it
            f"ALTER TABLE {table} DROP COLUMN tsv, ADD COLUMN terms text[] NOT NULL DEFAULT '{{}}', "
            "ADD COLUMN n_terms integer NOT NULL DEFAULT 0".encode()
        )
    await _backfill(conn, "memories", "content", text_terms)
    await _backfill(conn, "session_turns", "user_text, assistant_text", exchange_terms)
    await conn.execute(b"CREATE INDEX memories_terms ON memories USING gin (terms)")
    await conn.execute(b"CREATE INDEX session_turns_terms ON session_turns USING gin (terms)")
