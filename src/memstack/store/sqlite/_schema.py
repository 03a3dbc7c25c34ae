"""The SQLite schema as ordered, named migrations, and the record of which embedding model the file holds.

Each migration is a ``(name, function)`` pair; applied names are recorded in ``_migrations`` in the same transaction
as the change, so a crash never leaves a half-migrated file. Add a change by appending a new pair, never by editing
an applied one. The tables both backends hold are written once in :mod:`memstack.store._tables` (``_ddl`` spells
them for SQLite); what is SQLite's alone (``memories`` and its FTS5 indexes and triggers) is here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from memstack.errors import ConfigError, MigrationError, ReembedInProgress, StoreError
from memstack.store import _tables as t
from memstack.store._tables import SQLITE, render
from memstack.store.reembed import target_from_meta
from memstack.store.sqlite._db import transaction
from memstack.store.sqlite._terms import migrate_fulltext_terms
from memstack.types import utcnow

__all__ = ["MIGRATIONS", "check_embedder", "migrate", "reembed_target"]

Migration = Callable[[sqlite3.Connection], None]


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


def reembed_target(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """The model a reembed in progress is switching to, or ``None``."""
    return target_from_meta(
        dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('reembed_embedder', 'reembed_dim')"))
    )


def _ddl(*statements: str, then: Migration | None = None) -> Migration:
    """A migration running shared DDL (:mod:`memstack.store._tables`) in SQLite's spelling, then ``then``.
    (Separate statements: ``executescript`` would commit the migration's transaction half-way.)"""

    def step(conn: sqlite3.Connection) -> None:
        for statement in render(statements, SQLITE):
            conn.execute(statement)
        if then is not None:
            then(conn)

    return step


def _fill_job_users(conn: sqlite3.Connection) -> None:
    conn.execute(
        "UPDATE jobs SET tenant = json_extract(payload, '$.tenant'), user_id = json_extract(payload, '$.user_id') "
        "WHERE json_valid(payload) AND json_type(payload, '$.tenant') = 'text' "
        "AND json_type(payload, '$.user_id') = 'text'"
    )
    conn.execute("CREATE INDEX jobs_by_user ON jobs (tenant, user_id)")


def _sessions_fts(conn: sqlite3.Connection) -> None:
    # The exchanges' raw text in FTS5, an owner token per user as for memories (replaced by stems in 012).
    for statement in (
        """
        CREATE VIRTUAL TABLE session_turns_fts USING fts5(
            user_text, assistant_text, fts_owner, content='session_turns', content_rowid='pk',
            tokenize='porter unicode61 remove_diacritics 2'
        )
        """,
        """
        CREATE TRIGGER session_turns_fts_insert AFTER INSERT ON session_turns BEGIN
            INSERT INTO session_turns_fts (rowid, user_text, assistant_text, fts_owner)
            VALUES (new.pk, new.user_text, new.assistant_text, new.fts_owner);
        END
        """,
        """
        CREATE TRIGGER session_turns_fts_delete AFTER DELETE ON session_turns BEGIN
            INSERT INTO session_turns_fts (session_turns_fts, rowid, user_text, assistant_text, fts_owner)
            VALUES ('delete', old.pk, old.user_text, old.assistant_text, old.fts_owner);
        END
        """,
    ):
        conn.execute(statement)


_HISTORY_INDEX = "CREATE INDEX memory_history_by_memory ON memory_history (tenant, user_id, memory_id, id)"

MIGRATIONS: list[tuple[str, Migration]] = [
    ("001_memories", _m001_memories),
    ("002_memory_history", _ddl(*t.MEMORY_HISTORY, _HISTORY_INDEX)),
    ("003_memories_fts", _m003_fts),
    ("004_meta", _ddl("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")),
    ("005_context_manifests", _ddl(*t.CONTEXT_MANIFESTS)),
    ("006_jobs", _ddl(*t.JOBS)),
    ("007_sessions", _ddl(*t.SESSIONS, then=_sessions_fts)),
    ("008_api_keys", _ddl(*t.API_KEYS)),
    ("009_agents", _ddl(*t.AGENTS)),
    ("010_reembed", _ddl(*t.REEMBED_VECTORS)),
    ("011_archive_vectors", _ddl(*t.ARCHIVE_VECTORS)),
    ("012_fulltext_terms", migrate_fulltext_terms),
    ("013_session_leases", _ddl(*t.SESSION_LEASES)),
    ("014_job_users", _ddl(*t.JOB_USERS, then=_fill_job_users)),
    ("015_chat_threads", _ddl(*t.CHAT_THREADS)),
    ("016_idempotency_keys", _ddl(*t.IDEMPOTENCY_KEYS)),
    ("017_capture_drops", _ddl(*t.CAPTURE_DROPS)),
    ("018_hidden_items", _ddl(*t.HIDDEN_ITEMS)),
    ("019_user_erasures", _ddl(*t.USER_ERASURES)),
    ("020_memory_metadata", _ddl(*t.MEMORY_METADATA)),
    ("021_webhooks", _ddl(*t.WEBHOOKS)),
    ("022_memory_validity", _ddl(*t.MEMORY_VALIDITY)),
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
