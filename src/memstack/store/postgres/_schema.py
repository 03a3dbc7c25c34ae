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
- ``memory_ann_indexes``: users large enough to have their own HNSW index (see ``_ann.py``); the indexes
  themselves are partial ``hnsw (embedding vector_cosine_ops) WHERE tenant = … AND user_id = … AND is_active``.
- ``memstack_meta``: the embedding model and dimension the vectors were made with.

Migration ``0021_memory_metadata``: ``memories.metadata jsonb`` (``{}`` when none), the caller's JSON object.

Migration ``0002_context_manifests``: ``context_manifests``, one ``jsonb`` manifest per response (what the model
saw), keyed by context id, listed per (tenant, user) newest first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
from psycopg import sql

from memstack.errors import ConfigError, MigrationError, ReembedInProgress, StoreUnavailable
from memstack.store.postgres._archive_search import migrate_archive_search
from memstack.store.postgres._fence import migrate_user_erasures, prune_erasures
from memstack.store.postgres._terms import migrate_fulltext_terms
from memstack.store.postgres.archive_vectors import migrate_archive_vectors
from memstack.store.postgres.hidden import migrate_hidden_items
from memstack.store.postgres.jobs import migrate_job_users
from memstack.store.postgres.keys import MIGRATIONS as KEY_MIGRATIONS
from memstack.store.postgres.leases import migrate_session_leases
from memstack.store.postgres.sessions import migrate_sessions
from memstack.store.reembed import target_from_meta
from memstack.types import Category, DeletedBy, Source

__all__ = ["MIGRATIONS", "MIN_PGVECTOR", "prepare", "reembed_target"]

#: pgvector 0.8 brought iterative index scans, which keep filtered HNSW searches from returning fewer than k rows.
MIN_PGVECTOR = (0, 8)

#: Session advisory lock held while the schema is checked and migrated ("memstack" in ASCII).
_MIGRATION_LOCK = 0x6D656D737461636B

Migration = Callable[[psycopg.AsyncConnection[Any], int], Awaitable[None]]


def _in(values: list[str]) -> sql.Composed:
    return sql.SQL(", ").join(sql.Literal(v) for v in values)


async def _m0001_memories(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
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
        sql.SQL(
            """
            CREATE TABLE memory_history (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                memory_id text NOT NULL,
                tenant text NOT NULL,
                user_id text NOT NULL,
                action text NOT NULL,
                before jsonb,
                after jsonb,
                at timestamptz NOT NULL,
                actor text NOT NULL,
                note text NOT NULL DEFAULT ''
            )
            """
        ),
        sql.SQL("CREATE TABLE memstack_meta (key text PRIMARY KEY, value text NOT NULL)"),
        sql.SQL("CREATE INDEX memory_history_memory ON memory_history (tenant, user_id, memory_id, id)"),
        sql.SQL(
            """
            CREATE TABLE memory_ann_indexes (
                tenant text NOT NULL,
                user_id text NOT NULL,
                index_name text NOT NULL UNIQUE,
                active_at_build bigint NOT NULL,
                built_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (tenant, user_id)
            )
            """
        ),
    ]
    for statement in statements:
        await conn.execute(statement)


async def _m0002_context_manifests(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    # One row per response: the manifest of the context the model saw (memstack.types.Manifest).
    await conn.execute(
        """
        CREATE TABLE context_manifests (
            context_id text PRIMARY KEY,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            tenant text NOT NULL,
            user_id text NOT NULL,
            session_id text,
            created_at timestamptz NOT NULL,
            manifest jsonb NOT NULL
        )
        """
    )
    await conn.execute("CREATE INDEX context_manifests_by_user ON context_manifests (tenant, user_id, created_at)")


async def _m0003_jobs(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    # Durable background work (memory detection, consolidation): recorded before it starts, claimed under a lease.
    await conn.execute(
        """
        CREATE TABLE jobs (
            id text PRIMARY KEY,
            kind text NOT NULL,
            key text NOT NULL,
            payload jsonb NOT NULL,
            state jsonb NOT NULL DEFAULT '{}',
            status text NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
            attempts integer NOT NULL DEFAULT 0,
            owner text,
            lease_until timestamptz,
            run_after timestamptz,
            result jsonb,
            error text,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            UNIQUE (kind, key)
        )
        """
    )
    # The startup scan reads only unfinished jobs; pruning reads only finished ones.
    await conn.execute("CREATE INDEX jobs_open ON jobs (created_at) WHERE status IN ('pending', 'running')")
    await conn.execute("CREATE INDEX jobs_finished ON jobs (updated_at) WHERE status IN ('done', 'failed')")


async def _m0010_reembed(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    """Migration ``0010_reembed``: where new vectors wait until every vector of the store has one."""
    await conn.execute(
        b"""
        CREATE TABLE reembed_vectors (
            tbl text NOT NULL,
            row_id bigint NOT NULL,
            text text NOT NULL,
            embedding vector NOT NULL,
            PRIMARY KEY (tbl, row_id)
        )
        """
    )


async def reembed_target(conn: psycopg.AsyncConnection[Any]) -> tuple[str, int] | None:
    """The model a reembed in progress is switching to, or ``None``."""
    cur = await conn.execute(
        "SELECT key, value FROM memstack_meta WHERE key IN ('reembed_embedder', 'reembed_dim')", prepare=False
    )
    return target_from_meta({str(k): str(v) for k, v in await cur.fetchall()})


async def _m0021_memory_metadata(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    # The caller's JSON object kept with a memory (memstack.types.check_metadata). A constant default: no table
    # rewrite. Filters are containment (``metadata @> …``) within one user's rows, already found by user.
    await conn.execute("ALTER TABLE memories ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'")


async def _m0023_memory_validity(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    """Migration ``0023_memory_validity``: when a memory held in the user's life, besides when it was recorded.
    Nullable without a default (no table rewrite); rows stored before are left unknown (NULL), as on SQLite
    (``022_memory_validity`` says why). ``as_of`` reads filter one user's rows, already found by user: no index."""
    await conn.execute(b"ALTER TABLE memories ADD COLUMN valid_from timestamptz, ADD COLUMN valid_to timestamptz")


async def _m0016_chat_threads(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    """Migration ``0016_chat_threads``."""
    await conn.execute(
        b"""
        CREATE TABLE chat_threads (
            tenant text NOT NULL,
            user_id text NOT NULL,
            digest text NOT NULL,
            session_id text NOT NULL,
            turn integer NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (tenant, user_id, digest)
        )
        """
    )


async def _m0017_idempotency_keys(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    """Migration ``0017_idempotency_keys``."""
    await conn.execute(
        b"""
        CREATE TABLE idempotency_keys (
            tenant text NOT NULL,
            key text NOT NULL,
            user_id text NOT NULL,
            fingerprint text NOT NULL,
            status integer,
            body bytea,
            content_type text NOT NULL DEFAULT '',
            created_at timestamptz NOT NULL,
            expires_at timestamptz NOT NULL,
            PRIMARY KEY (tenant, key)
        )
        """
    )
    await conn.execute(b"CREATE INDEX idempotency_keys_by_user ON idempotency_keys (tenant, user_id)")
    await conn.execute(b"CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at)")


async def _m0018_capture_drops(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    """Migration ``0018_capture_drops``."""
    await conn.execute(
        b"""
        CREATE TABLE capture_drops (
            tenant text NOT NULL,
            user_id text NOT NULL,
            count bigint NOT NULL,
            first_at timestamptz NOT NULL,
            last_at timestamptz NOT NULL,
            PRIMARY KEY (tenant, user_id)
        )
        """
    )


async def _m0022_webhooks(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    """Migration ``0022_webhooks``: a tenant's endpoints and the outbox of their deliveries
    (:mod:`memstack.store._outbox`, :mod:`memstack.store._webhooks`)."""
    await conn.execute(
        b"""
        CREATE TABLE webhook_endpoints (
            id text PRIMARY KEY,
            tenant text NOT NULL,
            url text NOT NULL,
            secret text NOT NULL,
            events jsonb NOT NULL,
            enabled boolean NOT NULL,
            description text NOT NULL DEFAULT '',
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL
        )
        """
    )
    await conn.execute(b"CREATE INDEX webhook_endpoints_by_tenant ON webhook_endpoints (tenant, enabled)")
    await conn.execute(
        b"""
        CREATE TABLE webhook_outbox (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            event_id text NOT NULL,
            endpoint_id text NOT NULL,
            tenant text NOT NULL,
            user_id text NOT NULL,
            type text NOT NULL,
            occurred_at timestamptz NOT NULL,
            payload jsonb NOT NULL,
            status text NOT NULL,
            attempts integer NOT NULL,
            next_at timestamptz NOT NULL,
            lease_owner text,
            lease_until timestamptz,
            last_status integer,
            last_error text,
            created_at timestamptz NOT NULL,
            delivered_at timestamptz
        )
        """
    )
    await conn.execute(b"CREATE INDEX webhook_outbox_due ON webhook_outbox (status, next_at)")
    await conn.execute(b"CREATE INDEX webhook_outbox_by_endpoint ON webhook_outbox (tenant, endpoint_id, seq)")
    await conn.execute(b"CREATE INDEX webhook_outbox_by_user ON webhook_outbox (tenant, user_id)")


#: The schema's history, oldest first. Append only: never edit or reorder an applied migration.
MIGRATIONS: list[tuple[str, Migration]] = [
    ("0001_memories", _m0001_memories),
    ("0002_context_manifests", _m0002_context_manifests),
    ("0003_jobs", _m0003_jobs),
    ("0004_sessions", migrate_sessions),
    *KEY_MIGRATIONS,
    ("0010_reembed", _m0010_reembed),
    ("0011_archive_vectors", migrate_archive_vectors),
    ("0012_fulltext_terms", migrate_fulltext_terms),
    ("0013_archive_search", migrate_archive_search),
    ("0014_session_leases", migrate_session_leases),
    ("0015_job_users", migrate_job_users),
    ("0016_chat_threads", _m0016_chat_threads),
    ("0017_idempotency_keys", _m0017_idempotency_keys),
    ("0018_capture_drops", _m0018_capture_drops),
    ("0019_hidden_items", migrate_hidden_items),
    ("0020_user_erasures", migrate_user_erasures),
    ("0021_memory_metadata", _m0021_memory_metadata),
    ("0022_webhooks", _m0022_webhooks),
    ("0023_memory_validity", _m0023_memory_validity),
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
        await _ensure_pgvector(conn, where)
        await _migrate(conn, dim)
        await prune_erasures(conn)
        if check_model:
            await _check_model(conn, dim, embedder, where)


async def _ensure_pgvector(conn: psycopg.AsyncConnection[Any], where: str) -> None:
    install = (
        "memstack needs the pgvector extension, version 0.8 or later: install it on the server "
        "(https://github.com/pgvector/pgvector#installation), then run CREATE EXTENSION vector in this database "
        "as a superuser or the database owner"
    )
    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreUnavailable(f"cannot use pgvector in {where} ({reason}); {install}") from None
    row = await (await conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).fetchone()
    version = str(row[0]) if row else "0"
    parts = tuple(int(p) if p.isdigit() else 0 for p in version.split(".")[:2])
    if parts < MIN_PGVECTOR:
        raise StoreUnavailable(
            f"{where} has pgvector {version}, but memstack needs 0.8 or later for iterative index scans; "
            "install a newer pgvector on the server and run ALTER EXTENSION vector UPDATE"
        )


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
