"""Migration of existing databases to stored stems (``012_fulltext_terms`` / ``0012_fulltext_terms``) and, on
PostgreSQL, to the archive ranked in the database (``0013_archive_search``).

Each test builds a database as the release before it left it (every earlier migration, rows written the old way),
then opens it with this release: the rows are converted in batches and found by stemmed queries at once.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import psycopg
import pytest

from memstack.retrieval import RetrievalSettings
from memstack.retrieval.archive import ArchiveQuery
from memstack.store.postgres import PostgresStore
from memstack.store.postgres._schema import MIGRATIONS as PG_MIGRATIONS
from memstack.store.sqlite import SQLiteStore
from memstack.store.sqlite._rows import fts_owner
from memstack.store.sqlite._schema import MIGRATIONS as SQLITE_MIGRATIONS
from memstack.text import tokenize
from memstack.types import MemoryFilter, UserRef

from .conftest import DIM, EMBEDDER

ALICE = UserRef("alice")
AT = datetime(2025, 3, 1, 9, 0, tzinfo=UTC).isoformat(timespec="microseconds")
#: More rows than one backfill batch holds.
N_FILLER = 1100
FOUND = "The bakery on Rua Augusta sells pastel de nata"


def _memory_texts() -> list[str]:
    return [f"filler note number {i}" for i in range(N_FILLER)] + [FOUND]


async def test_sqlite_file_from_before_stems_is_converted(tmp_path: Path) -> None:
    path = tmp_path / "memstack.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name, step in SQLITE_MIGRATIONS[: [n for n, _ in SQLITE_MIGRATIONS].index("012_fulltext_terms")]:
        step(conn)
        conn.execute("INSERT INTO _migrations VALUES (?, ?)", (name, AT))
    owner = fts_owner(ALICE)
    blob = np.ones(DIM, dtype="<f4").tobytes()
    rows = [
        (i + 1, f"mem_{i}", "default", "alice", None, text, "fact", "manual", 1.0, 1, None, AT, AT, "[]", owner, blob)
        for i, text in enumerate(_memory_texts())
    ]
    conn.executemany(
        "INSERT INTO memories (pk, id, tenant, user_id, agent_id, content, category, source, confidence, is_active, "
        "deleted_by, created_at, updated_at, source_turn_ids, fts_owner, embedding) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.execute("INSERT INTO memories_fts (rowid, content, fts_owner) SELECT pk, content, fts_owner FROM memories")
    conn.execute(
        "INSERT INTO sessions (pk, tenant, user_id, id, turn_count, created_at, updated_at) "
        "VALUES (1, 'default', 'alice', 's1', 1, ?, ?)",
        (AT, AT),
    )
    conn.execute(  # the old insert trigger indexes the raw text
        "INSERT INTO session_turns (session_pk, tenant, user_id, turn, user_text, assistant_text, at, status, "
        "fts_owner) VALUES (1, 'default', 'alice', 1, 'Where to buy bread?', ?, ?, 'summarized', ?)",
        (FOUND, AT, owner),
    )
    conn.execute("COMMIT")
    conn.close()

    async with await SQLiteStore.open(path, dim=DIM, embedder=EMBEDDER) as store:
        [hit] = await store.index.search_text(ALICE, "bakeries", 5)
        assert hit.memory.content == FOUND
        assert [m.content for m in await store.index.list(ALICE, MemoryFilter(text="bakeries nata"))] == [FOUND]
        assert len(await store.index.list(ALICE, MemoryFilter(text="numbers", limit=2000))) == N_FILLER
        assert [h.turn_id for h in await store.archive.search(ALICE, "bakeries", 5)] == ["s1:1"]
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
    conn.execute("INSERT INTO session_turns_fts (session_turns_fts) VALUES ('integrity-check')")
    terms, n_terms = conn.execute("SELECT terms, n_terms FROM memories WHERE content = ?", (FOUND,)).fetchone()
    assert terms.split() == tokenize(FOUND) and n_terms == len(tokenize(FOUND))
    conn.close()


@pytest.mark.postgres
async def test_postgres_database_from_before_stems_is_converted(postgres_url: str) -> None:
    names = [n for n, _ in PG_MIGRATIONS]
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        await conn.execute("CREATE TABLE memstack_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL)")
        for name, migration in PG_MIGRATIONS[: names.index("0012_fulltext_terms")]:
            async with conn.transaction():
                await migration(conn, DIM)
                await conn.execute("INSERT INTO memstack_migrations VALUES (%s, now())", (name,))
        vector = "[" + ",".join(["1"] * DIM) + "]"
        async with conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO memories (id, tenant, user_id, content, category, source, confidence, created_at, "
                "updated_at, embedding) VALUES (%s, 'default', 'alice', %s, 'fact', 'manual', 1, %s, %s, %s::vector)",
                [(f"mem_{i}", text, AT, AT, vector) for i, text in enumerate(_memory_texts())],
            )
        await conn.execute(
            "INSERT INTO sessions (tenant, user_id, id, turn_count, created_at, updated_at) "
            "VALUES ('default', 'alice', 's1', 1, %s, %s)",
            (AT, AT),
        )
        await conn.execute(
            "INSERT INTO session_turns (session_seq, tenant, user_id, turn, user_text, assistant_text, at, status) "
            "SELECT seq, 'default', 'alice', 1, 'Where to buy bread?', %s, %s, 'summarized' FROM sessions",
            (FOUND, AT),
        )
        await conn.execute(  # recall's vectors of both messages, as 0011_archive_vectors kept them
            "INSERT INTO archive_vectors (turn_seq, tenant, user_id, side, speaker, embedding) "
            "SELECT seq, 'default', 'alice', side, 'Ann', %s::vector FROM session_turns, (VALUES (0), (1)) AS s(side)",
            (vector,),
        )

    store = await PostgresStore.open(postgres_url, dim=DIM, embedder=EMBEDDER)
    try:
        [hit] = await store.index.search_text(ALICE, "bakeries", 5)
        assert hit.memory.content == FOUND
        assert [m.content for m in await store.index.list(ALICE, MemoryFilter(text="bakeries nata"))] == [FOUND]
        assert len(await store.index.list(ALICE, MemoryFilter(text="numbers", limit=2000))) == N_FILLER
        assert [h.turn_id for h in await store.archive.search(ALICE, "bakeries", 5)] == ["s1:1"]
        query = ArchiveQuery.of("bakeries", np.ones(DIM), RetrievalSettings())
        found = await store.archive_vectors.search(ALICE, query, 5)
        assert [m.message.id for m in found][:1] == ["s1:1:assistant"]
        assert found[0].previous is not None and found[0].previous.id == "s1:1:user"
    finally:
        await store.close()
    async with await psycopg.AsyncConnection.connect(postgres_url) as conn:
        cur = await conn.execute("SELECT messages, terms, key_terms, threads FROM archive_stats")
        n_user, n_reply = len(tokenize("Ann: Where to buy bread?")), len(tokenize(f"Ann: {FOUND}"))
        assert await cur.fetchall() == [(2, n_user + n_reply, n_user + n_user + n_reply, 1)]
        cur = await conn.execute("SELECT terms, n_terms FROM memories WHERE content = %s", (FOUND,))
        assert await cur.fetchone() == (tokenize(FOUND), len(tokenize(FOUND)))
        cur = await conn.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE '%%_terms'")
        assert {"memories_terms", "session_turns_terms"} <= {r[0] for r in await cur.fetchall()}
