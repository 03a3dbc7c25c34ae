"""The SQLite schema as ordered, named migrations, and the record of which embedding model the file holds.

Each migration is a ``(name, function)`` pair; applied names are recorded in ``_migrations`` in the same transaction
as the change, so a crash never leaves a half-migrated file. Add a change by appending a new pair, never by editing
an applied one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from memstack.errors import ConfigError, MigrationError, ReembedInProgress, StoreError
from memstack.store.reembed import target_from_meta
from memstack.store.sqlite._db import transaction
from memstack.store.sqlite._terms import migrate_fulltext_terms
from memstack.store.sqlite.archive_vectors import migrate_archive_vectors
from memstack.store.sqlite.hidden import migrate_hidden_items
from memstack.store.sqlite.jobs import migrate_job_users
from memstack.store.sqlite.keys import MIGRATIONS as KEY_MIGRATIONS
from memstack.store.sqlite.leases import migrate_session_leases
from memstack.store.sqlite.sessions import migrate_sessions
from memstack.store.sqlite.users import migrate_user_erasures
from memstack.types import utcnow

__all__ = ["MIGRATIONS", "check_embedder", "migrate", "reembed_target"]


def _m001_memories(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE memories (
            pk INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            tenant TEXT NOT NULL,
            user_id TEXT NOT NULL,
            agent_id TEXT,
            content TEXT NOT NULL,
            category TEXT NOT NULL,
            source TEXT NOT NULL,
            confidence REAL NOT NULL,
            is_active INTEGER NOT NULL DEFAULT 1,
            deleted_by TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            observed_at TEXT,
            expires_at TEXT,
            merged_into TEXT,
            source_turn_ids TEXT NOT NULL DEFAULT '[]',
            fts_owner TEXT NOT NULL,
            embedding BLOB NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX memories_by_user ON memories (tenant, user_id, is_active, created_at)")


def _m002_history(conn: sqlite3.Connection) -> None:
    # Append-only and deliberately without a foreign key: a permanent delete leaves its history behind.
    conn.execute(
        """
        CREATE TABLE memory_history (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL,
            tenant TEXT NOT NULL,
            user_id TEXT NOT NULL,
            action TEXT NOT NULL,
            before TEXT,
            after TEXT,
            at TEXT NOT NULL,
            actor TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT ''
        )
        """
    )
    conn.execute("CREATE INDEX memory_history_by_memory ON memory_history (tenant, user_id, memory_id, id)")


def _m003_fts(conn: sqlite3.Connection) -> None:
    # (Indexes raw text with FTS5's stemmer; 012_fulltext_terms replaced it with stems computed in Python.)
    # External-content FTS5 index over memories. ``fts_owner`` is one token per (tenant, user) so a user's text
    # search walks that user's postings instead of every user's; queries still filter by tenant and user_id.
    conn.execute(
        """
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            content, fts_owner, content='memories', content_rowid='pk',
            tokenize='porter unicode61 remove_diacritics 2'
        )
        """
    )
    # Inserts fill the index themselves (``SQLiteMemories``), a batch at a time: a per-row insert trigger halves
    # bulk-insert speed. Deletes and content changes, rare and one row at a time, are kept in sync by triggers.
    # (Separate statements: executescript() would commit the migration's transaction half-way.)
    conn.execute(
        """
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, content, fts_owner)
            VALUES ('delete', old.pk, old.content, old.fts_owner);
        END
        """
    )
    conn.execute(
        """
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, content, fts_owner)
            VALUES ('delete', old.pk, old.content, old.fts_owner);
            INSERT INTO memories_fts (rowid, content, fts_owner) VALUES (new.pk, new.content, new.fts_owner);
        END
        """
    )


def _m004_meta(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


def _m005_context_manifests(conn: sqlite3.Connection) -> None:
    # One row per response: the manifest of the context the model saw, as JSON (memstack.types.Manifest).
    conn.execute(
        """
        CREATE TABLE context_manifests (
            context_id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            user_id TEXT NOT NULL,
            session_id TEXT,
            created_at TEXT NOT NULL,
            manifest TEXT NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX context_manifests_by_user ON context_manifests (tenant, user_id, created_at)")


def _m006_jobs(conn: sqlite3.Connection) -> None:
    # Durable background work (memory detection, consolidation): recorded before it starts, claimed under a lease.
    conn.execute(
        """
        CREATE TABLE jobs (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            payload TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            owner TEXT,
            lease_until TEXT,
            run_after TEXT,
            result TEXT,
            error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (kind, key)
        )
        """
    )
    # The startup scan reads only unfinished jobs; pruning reads only finished ones.
    conn.execute("CREATE INDEX jobs_open ON jobs (created_at) WHERE status IN ('pending', 'running')")
    conn.execute("CREATE INDEX jobs_finished ON jobs (updated_at) WHERE status IN ('done', 'failed')")


def _m010_reembed(conn: sqlite3.Connection) -> None:
    """Migration ``010_reembed``: where new vectors wait until every vector of the store has one."""
    conn.execute(
        """
        CREATE TABLE reembed_vectors (
            tbl TEXT NOT NULL,
            row_id INTEGER NOT NULL,
            text TEXT NOT NULL,
            embedding BLOB NOT NULL,
            PRIMARY KEY (tbl, row_id)
        )
        """
    )


def reembed_target(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """The model a reembed in progress is switching to, or ``None``."""
    return target_from_meta(
        dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('reembed_embedder', 'reembed_dim')"))
    )


def _m020_memory_metadata(conn: sqlite3.Connection) -> None:
    # The caller's JSON object kept with a memory (memstack.types.check_metadata), as compact JSON text. Filters
    # read it with json_each (SQLiteIndex), so no index: they narrow one user's rows, already found by user.
    conn.execute("ALTER TABLE memories ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}'")


def _m015_chat_threads(conn: sqlite3.Connection) -> None:
    """Migration ``015_chat_threads``."""
    conn.execute(
        """
        CREATE TABLE chat_threads (
            tenant TEXT NOT NULL,
            user_id TEXT NOT NULL,
            digest TEXT NOT NULL,
            session_id TEXT NOT NULL,
            turn INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (tenant, user_id, digest)
        ) WITHOUT ROWID
        """
    )


def _m016_idempotency_keys(conn: sqlite3.Connection) -> None:
    """Migration ``016_idempotency_keys``."""
    conn.execute(
        """
        CREATE TABLE idempotency_keys (
            tenant TEXT NOT NULL,
            key TEXT NOT NULL,
            user_id TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            status INTEGER,
            body BLOB,
            content_type TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            PRIMARY KEY (tenant, key)
        )
        """
    )
    conn.execute("CREATE INDEX idempotency_keys_by_user ON idempotency_keys (tenant, user_id)")
    conn.execute("CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at)")


def _m017_capture_drops(conn: sqlite3.Connection) -> None:
    """Migration ``017_capture_drops``."""
    conn.execute(
        """
        CREATE TABLE capture_drops (
            tenant TEXT NOT NULL,
            user_id TEXT NOT NULL,
            count INTEGER NOT NULL,
            first_at TEXT NOT NULL,
            last_at TEXT NOT NULL,
            PRIMARY KEY (tenant, user_id)
        ) WITHOUT ROWID
        """
    )


def _m021_webhooks(conn: sqlite3.Connection) -> None:
    """Migration ``021_webhooks``: a tenant's endpoints and the outbox of their deliveries
    (:mod:`memstack.store._outbox`, :mod:`memstack.store._webhooks`)."""
    conn.execute(
        """
        CREATE TABLE webhook_endpoints (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            url TEXT NOT NULL,
            secret TEXT NOT NULL,
            events TEXT NOT NULL,
            enabled INTEGER NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX webhook_endpoints_by_tenant ON webhook_endpoints (tenant, enabled)")
    conn.execute(
        """
        CREATE TABLE webhook_outbox (
            pk INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            event_id TEXT NOT NULL,
            endpoint_id TEXT NOT NULL,
            tenant TEXT NOT NULL,
            user_id TEXT NOT NULL,
            type TEXT NOT NULL,
            occurred_at TEXT NOT NULL,
            payload TEXT NOT NULL,
            status TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            next_at TEXT NOT NULL,
            lease_owner TEXT,
            lease_until TEXT,
            last_status INTEGER,
            last_error TEXT,
            created_at TEXT NOT NULL,
            delivered_at TEXT
        )
        """
    )
    conn.execute("CREATE INDEX webhook_outbox_due ON webhook_outbox (status, next_at)")
    conn.execute("CREATE INDEX webhook_outbox_by_endpoint ON webhook_outbox (tenant, endpoint_id, pk)")
    conn.execute("CREATE INDEX webhook_outbox_by_user ON webhook_outbox (tenant, user_id)")


def _m022_memory_validity(conn: sqlite3.Connection) -> None:
    """Migration ``022_memory_validity``: when a memory held in the user's life (``valid_from``, ``valid_to``, UTC
    text like every time here), besides when it was recorded. Rows stored before are left unknown (NULL) rather than
    given ``created_at``: when memstack heard a fact says nothing of when it began, and an unknown start is open
    toward the past for ``as_of`` reads, so they stay found as before. Their history is untouched."""
    conn.execute("ALTER TABLE memories ADD COLUMN valid_from TEXT")
    conn.execute("ALTER TABLE memories ADD COLUMN valid_to TEXT")


MIGRATIONS: list[tuple[str, Callable[[sqlite3.Connection], None]]] = [
    ("001_memories", _m001_memories),
    ("002_memory_history", _m002_history),
    ("003_memories_fts", _m003_fts),
    ("004_meta", _m004_meta),
    ("005_context_manifests", _m005_context_manifests),
    ("006_jobs", _m006_jobs),
    ("007_sessions", migrate_sessions),
    *KEY_MIGRATIONS,
    ("010_reembed", _m010_reembed),
    ("011_archive_vectors", migrate_archive_vectors),
    ("012_fulltext_terms", migrate_fulltext_terms),
    ("013_session_leases", migrate_session_leases),
    ("014_job_users", migrate_job_users),
    ("015_chat_threads", _m015_chat_threads),
    ("016_idempotency_keys", _m016_idempotency_keys),
    ("017_capture_drops", _m017_capture_drops),
    ("018_hidden_items", migrate_hidden_items),
    ("019_user_erasures", migrate_user_erasures),
    ("020_memory_metadata", _m020_memory_metadata),
    ("021_webhooks", _m021_webhooks),
    ("022_memory_validity", _m022_memory_validity),
]


def _applied(conn: sqlite3.Connection) -> list[str]:
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'").fetchone()
    if not exists:
        return []
    return [str(row[0]) for row in conn.execute("SELECT name FROM _migrations ORDER BY rowid")]


def migrate(conn: sqlite3.Connection, path: Path) -> list[str]:
    """Apply every migration not yet recorded, in order, in one transaction; return the names applied."""
    known = [name for name, _ in MIGRATIONS]
    if _applied(conn) == known:
        return []  # the common case: no write lock needed
    applied_now: list[str] = []
    with transaction(conn, write=True):
        conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        done = _applied(conn)
        newer = [name for name in done if name not in known]
        if newer:
            raise MigrationError(
                f"{path} was migrated by a newer memstack (unknown migrations: {', '.join(newer)}); "
                "upgrade memstack to open it"
            )
        for name, step in MIGRATIONS:
            if name in done:
                continue
            try:
                step(conn)
            except sqlite3.Error as exc:
                raise MigrationError(
                    f"migration {name} failed on {path}: {exc}; the database was left as it was. "
                    "Restore a backup or report the error"
                ) from None
            conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, utcnow().isoformat()))
            applied_now.append(name)
    return applied_now


def check_embedder(conn: sqlite3.Connection, path: Path, *, embedder: str, dim: int) -> None:
    """Record the embedding model on first use; refuse to mix vectors of another model afterwards, and to open a
    store half-way through a reembed (``ReembedInProgress``)."""
    if (target := reembed_target(conn)) is not None:
        raise ReembedInProgress(str(path), *target)
    stored = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('embedder', 'dim')").fetchall())
    if not stored:
        with transaction(conn, write=True):
            if conn.execute("SELECT 1 FROM meta WHERE key = 'embedder'").fetchone() is None:
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)", [("embedder", embedder), ("dim", str(dim))]
                )
        stored = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('embedder', 'dim')").fetchall())
    if set(stored) != {"embedder", "dim"}:
        raise StoreError(f"{path} has an incomplete meta table ({stored}); restore a backup")
    old_name, old_dim = str(stored["embedder"]), int(stored["dim"])
    if old_name != embedder or old_dim != dim:
        raise ConfigError(
            f"{path} holds {old_dim}-d vectors from the embedder {old_name!r}, but memstack is configured with "
            f"{embedder!r} ({dim}-d). Run `memstack reembed` to re-embed the stored memories with the new model, "
            f"or set MEMSTACK_EMBEDDER={old_name} to keep using the old one"
        )
