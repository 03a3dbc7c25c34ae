"""The PostgreSQL schema: pgvector, ordered named migrations, and the embedding model the database was made for.

``prepare(conn, dim, embedder)`` runs when a store opens, as one transaction under a transaction-scoped advisory
lock, so two processes starting at once take turns (the second finds the migrations applied and only checks the
model), also through a transaction-pooling pooler. Each migration runs in a savepoint of its own together with the
row that records it in ``memstack_migrations``.

Schema (migration ``0001_memories``):

- ``memories``: one row per memory with ``embedding vector(dim)`` (unit length: the store normalises every vector);
  ``seq`` (identity) orders inserts; the embedding comes right after it, ahead of every variable-length text
  column, so a scan reaches it without walking the row. (Its ``tsv`` column, the content's unstemmed words, was
  replaced by migration ``0012_fulltext_terms``: ``terms text[]``, the stems :mod:`memstack.text` computes, and
  ``n_terms``, behind a GIN index; see ``_terms.py``.)
- a partial btree ``(tenant, user_id) WHERE is_active``: every per-user read starts there; a second btree over all
  rows serves listings that include forgotten memories.
- ``memory_history``: append-only, ``before``/``after`` as ``jsonb``; it outlives permanently deleted memories.
- ``memory_ann_indexes``: users large enough to have their own HNSW index (:mod:`memstack.store.vectors.hnsw`,
  which also checks pgvector's version); the indexes themselves are partial
  ``hnsw (embedding vector_cosine_ops) WHERE tenant = … AND user_id = … AND is_active``.
- ``memstack_meta``: the embedding model and dimension the vectors were made with.

The tables both backends hold are written once in :mod:`memstack.store._tables` (``_ddl`` spells them for
PostgreSQL); what is PostgreSQL's alone (``memories``, its full-text and vector indexes) is here.

Migration ``0021_memory_metadata``: ``memories.metadata jsonb`` (``{}`` when none), the caller's JSON object.

Migration ``0002_context_manifests``: ``context_manifests``, one ``jsonb`` manifest per response (what the model
saw), keyed by context id, listed per (tenant, user) newest first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
from psycopg import sql

from memstack.errors import ConfigError, MigrationError, ReembedInProgress
from memstack.store import _tables as t
from memstack.store._tables import POSTGRES, render
from memstack.store.postgres._fence import fence_function, prune_erasures
from memstack.store.postgres._terms import migrate_fulltext_terms
from memstack.store.reembed import target_from_meta
from memstack.store.vectors.archive import migrate_archive_search
from memstack.store.vectors.hnsw import ANN_INDEXES, ensure_pgvector
from memstack.types import Category, DeletedBy, Source

__all__ = ["MIGRATIONS", "prepare", "reembed_target"]

#: Session advisory lock held while the schema is checked and migrated ("memstack" in ASCII).
_MIGRATION_LOCK = 0x6D656D737461636B

Migration = Callable[[psycopg.AsyncConnection[Any], int], Awaitable[None]]


def _in(values: list[str]) -> sql.Composed:
    return sql.SQL(", ").join(sql.Literal(v) for v in values)


async def _memories(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    statements: list[sql.SQL | sql.Composed] = [
        sql.SQL(
            """
            CREATE TABLE memories (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                embedding vector({dim}) NOT NULL,
                is_active boolean NOT NULL DEFAULT true,
                confidence double precision NOT NULL CHECK (confidence BETWEEN 0 AND 1),
                created_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL,
                observed_at timestamptz,
                expires_at timestamptz,
                id text NOT NULL UNIQUE,
                tenant text NOT NULL,
                user_id text NOT NULL,
                agent_id text,
                content text NOT NULL,
                category text NOT NULL CHECK (category IN ({categories})),
                source text NOT NULL CHECK (source IN ({sources})),
                deleted_by text CHECK (deleted_by IN ({deleted_by})),
                merged_into text,
                source_turn_ids text[] NOT NULL DEFAULT '{{}}',
                tsv tsvector GENERATED ALWAYS AS
                    (to_tsvector('simple', regexp_replace(content, '\\W+', ' ', 'g'))) STORED
            )
            """
        ).format(
            categories=_in([c.value for c in Category]),
            sources=_in([s.value for s in Source]),
            deleted_by=_in([d.value for d in DeletedBy]),
            dim=sql.Literal(dim),
        ),
        sql.SQL("CREATE INDEX memories_user_active ON memories (tenant, user_id) WHERE is_active"),
        sql.SQL("CREATE INDEX memories_user_all ON memories (tenant, user_id, created_at)"),
        sql.SQL("CREATE INDEX memories_tsv ON memories USING gin (tsv)"),
    ]
    for statement in statements:
        await conn.execute(statement)


async def reembed_target(conn: psycopg.AsyncConnection[Any]) -> tuple[str, int] | None:
    """The model a reembed in progress is switching to, or ``None``."""
    cur = await conn.execute(
        "SELECT key, value FROM memstack_meta WHERE key IN ('reembed_embedder', 'reembed_dim')", prepare=False
    )
    return target_from_meta({str(k): str(v) for k, v in await cur.fetchall()})


def _ddl(*statements: str, then: Migration | None = None) -> Migration:
    """A migration running shared DDL (:mod:`memstack.store._tables`) in PostgreSQL's spelling, then ``then``."""

    async def step(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
        for statement in render(statements, POSTGRES, dim=dim):
            await conn.execute(statement.encode())
        if then is not None:
            await then(conn, dim)

    return step


async def _fill_job_users(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    await conn.execute(
        b"UPDATE jobs SET tenant = payload->>'tenant', user_id = payload->>'user_id' "
        b"WHERE jsonb_typeof(payload->'tenant') = 'string' AND jsonb_typeof(payload->'user_id') = 'string'"
    )
    await conn.execute(b"CREATE INDEX jobs_by_user ON jobs (tenant, user_id)")


async def _sessions_tsv(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    await conn.execute(b"CREATE INDEX session_turns_tsv ON session_turns USING gin (tsv)")


#: ``0001_memories``: the memories (above), their history, the model's record and the users' own HNSW indexes.
_HISTORY_INDEX = "CREATE INDEX memory_history_memory ON memory_history (tenant, user_id, memory_id, id)"
_META = "CREATE TABLE memstack_meta (key text PRIMARY KEY, value text NOT NULL)"

#: The schema's history, oldest first. Append only: never edit or reorder an applied migration.
MIGRATIONS: list[tuple[str, Migration]] = [
    ("0001_memories", _ddl(*t.MEMORY_HISTORY, _META, _HISTORY_INDEX, ANN_INDEXES, then=_memories)),
    ("0002_context_manifests", _ddl(*t.CONTEXT_MANIFESTS)),
    ("0003_jobs", _ddl(*t.JOBS)),
    ("0004_sessions", _ddl(*t.SESSIONS, then=_sessions_tsv)),
    ("0008_api_keys", _ddl(*t.API_KEYS)),
    ("0009_agents", _ddl(*t.AGENTS)),
    ("0010_reembed", _ddl(*t.REEMBED_VECTORS)),
    ("0011_archive_vectors", _ddl(*t.ARCHIVE_VECTORS)),
    ("0012_fulltext_terms", migrate_fulltext_terms),
    ("0013_archive_search", migrate_archive_search),
    ("0014_session_leases", _ddl(*t.SESSION_LEASES)),
    ("0015_job_users", _ddl(*t.JOB_USERS, then=_fill_job_users)),
    ("0016_chat_threads", _ddl(*t.CHAT_THREADS)),
    ("0017_idempotency_keys", _ddl(*t.IDEMPOTENCY_KEYS)),
    ("0018_capture_drops", _ddl(*t.CAPTURE_DROPS)),
    ("0019_hidden_items", _ddl(*t.HIDDEN_ITEMS)),
    ("0020_user_erasures", _ddl(*t.USER_ERASURES, then=fence_function)),
    ("0021_memory_metadata", _ddl(*t.MEMORY_METADATA)),
    ("0022_webhooks", _ddl(*t.WEBHOOKS)),
    ("0023_memory_validity", _ddl(*t.MEMORY_VALIDITY)),
]


async def prepare(
    conn: psycopg.AsyncConnection[Any], *, dim: int, embedder: str, where: str, check_model: bool = True
) -> None:
    """Make sure pgvector is there, migrate, and check the embedding model (under the migration lock);
    ``check_model=False`` (``memstack reembed``) leaves the model alone.

    All of it is one transaction under a transaction-scoped advisory lock (each migration in a savepoint of its
    own), so concurrent openers wait for each other, and it works through a transaction-pooling pooler, where a
    session-level lock could be taken on one server connection and released on another."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        await ensure_pgvector(conn, where)
        await _migrate(conn, dim)
        await prune_erasures(conn)
        if check_model:
            await _check_model(conn, dim, embedder, where)


async def _migrate(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    await conn.execute(
        "CREATE TABLE IF NOT EXISTS memstack_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL)"
    )
    rows = await (await conn.execute("SELECT name FROM memstack_migrations")).fetchall()
    applied = {str(r[0]) for r in rows}
    known = {name for name, _ in MIGRATIONS}
    if unknown := sorted(applied - known):
        raise MigrationError(
            f"this database was migrated by a newer memstack (unknown migrations: {', '.join(unknown)}); "
            "upgrade memstack to open it"
        )
    for name, migration in MIGRATIONS:
        if name in applied:
            continue
        try:
            async with conn.transaction():
                await migration(conn, dim)
                await conn.execute(
                    "INSERT INTO memstack_migrations (name, applied_at) VALUES (%s, now())",
                    (name,),
                )
        except psycopg.Error as exc:
            raise MigrationError(f"migration {name} failed and was rolled back: {exc}".strip()) from None


async def _check_model(conn: psycopg.AsyncConnection[Any], dim: int, embedder: str, where: str) -> None:
    if (target := await reembed_target(conn)) is not None:
        raise ReembedInProgress(where, *target)
    await conn.execute(
        "INSERT INTO memstack_meta (key, value) VALUES ('embedder', %s), ('dim', %s) ON CONFLICT (key) DO NOTHING",
        (embedder, str(dim)),
    )
    rows = await (
        await conn.execute("SELECT key, value FROM memstack_meta WHERE key IN ('embedder', 'dim')")
    ).fetchall()
    meta = {str(k): str(v) for k, v in rows}
    if meta.get("embedder") != embedder or meta.get("dim") != str(dim):
        raise ConfigError(
            f"{where} holds {meta.get('dim')}-d vectors from {meta.get('embedder')!r}, but this store was opened "
            f"with {embedder!r} ({dim}-d); open it with the same embedder, or run `memstack reembed` to switch models"
        )
