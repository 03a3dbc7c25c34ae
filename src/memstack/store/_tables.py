"""The tables both backends hold, written once, and the two dialects their DDL is spelt in.

Each statement below is the DDL of a migration as both backends applied it, in a neutral spelling that
:func:`render` turns into one dialect's: ``{word}`` is a type or phrase of :data:`SQLITE` or :data:`POSTGRES`
(``{time}`` is ISO text on SQLite and ``timestamptz`` on PostgreSQL, ``{key}`` the integer key's name, ``pk`` or
``seq``), and ``[sqlite: …]`` / ``[postgres: …]`` is text one dialect alone has (PostgreSQL's ``CHECK``s written
before SQLite's were, SQLite's FTS5 owner column, PostgreSQL's server-side defaults). Plain words (``TEXT``,
``INTEGER``) mean the same on both.

These are migrations: a statement here is what an existing database already ran, so it is never edited. A new table
or column is a new constant (and a new migration in both ``_schema.py``); what only one backend has (SQLite's FTS5
tables and triggers, PostgreSQL's full-text and vector indexes, its ``memories`` laid out for scans) stays in its
own ``_schema.py``. ``tests/store/test_schema.py`` holds the rendered DDL to what the backends created before it was
shared.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memstack.types import TurnStatus

__all__ = [
    "AGENTS",
    "API_KEYS",
    "ARCHIVE_VECTORS",
    "CAPTURE_DROPS",
    "CHAT_THREADS",
    "CONTEXT_MANIFESTS",
    "HIDDEN_ITEMS",
    "IDEMPOTENCY_KEYS",
    "JOBS",
    "JOB_USERS",
    "MEMORY_HISTORY",
    "MEMORY_METADATA",
    "MEMORY_VALIDITY",
    "POSTGRES",
    "REEMBED_VECTORS",
    "SESSIONS",
    "SESSION_LEASES",
    "SQLITE",
    "USER_ERASURES",
    "WEBHOOKS",
    "Dialect",
    "render",
]


@dataclass(frozen=True)
class Dialect:
    """How one database spells the neutral DDL's words."""

    name: str
    words: dict[str, str]


SQLITE = Dialect(
    "sqlite",
    {
        "key": "pk",
        "identity": "INTEGER PRIMARY KEY",
        "serial": "INTEGER PRIMARY KEY AUTOINCREMENT",  # never reuses a key
        "bigint": "INTEGER",
        "smallint": "INTEGER",
        "bool": "INTEGER",
        "time": "TEXT",  # sortable UTC ISO text (store/sqlite/_rows.py)
        "clock": "REAL",  # Unix seconds of this machine's clock: every process sharing the file runs on it
        "json": "TEXT",
        "texts": "TEXT NOT NULL DEFAULT '[]'",  # a JSON array
        "blob": "BLOB",
        "vector": "BLOB",  # little-endian float32
        "without_rowid": " WITHOUT ROWID",
    },
)

POSTGRES = Dialect(
    "postgres",
    {
        "key": "seq",
        "identity": "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
        "serial": "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
        "bigint": "bigint",
        "smallint": "smallint",
        "bool": "boolean",
        "time": "timestamptz",
        "clock": "timestamptz",  # the server's clock
        "json": "jsonb",
        "texts": "text[] NOT NULL DEFAULT '{}'",
        "blob": "bytea",
        "vector": "vector({dim})",
        "without_rowid": "",
    },
)

_WORD = re.compile(r"\{(\w+)\}")
_ONLY = re.compile(r"\[(sqlite|postgres): ([^\]]*)\]")


def render(statements: Sequence[str], dialect: Dialect, *, dim: int = 0) -> list[str]:
    """``statements`` in ``dialect`` (``dim``: the vectors' dimension, for PostgreSQL's ``vector(dim)``)."""
    words = {**dialect.words, "dim": str(dim)}

    def word(match: re.Match[str]) -> str:
        return _WORD.sub(word, words[match.group(1)])

    def only(match: re.Match[str]) -> str:
        return match.group(2) if match.group(1) == dialect.name else ""

    return [_WORD.sub(word, _ONLY.sub(only, statement)) for statement in statements]


# Migration 002 (SQLite) / part of 0001 (PostgreSQL). Append-only and deliberately without a foreign key: a permanent
# delete leaves its history behind. (Its index, named differently by the two, is in each ``_schema.py``.)
MEMORY_HISTORY = (
    """
    CREATE TABLE memory_history (
        id {serial},
        memory_id TEXT NOT NULL,
        tenant TEXT NOT NULL,
        user_id TEXT NOT NULL,
        action TEXT NOT NULL,
        before {json},
        after {json},
        at {time} NOT NULL,
        actor TEXT NOT NULL,
        note TEXT NOT NULL DEFAULT ''
    )
    """,
)

#: One row per response: the manifest of the context the model saw (memstack.types.Manifest).
CONTEXT_MANIFESTS = (
    """
    CREATE TABLE context_manifests (
        context_id TEXT PRIMARY KEY,
        [postgres: seq bigint GENERATED ALWAYS AS IDENTITY,]
        tenant TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT,
        created_at {time} NOT NULL,
        manifest {json} NOT NULL
    )
    """,
    "CREATE INDEX context_manifests_by_user ON context_manifests (tenant, user_id, created_at)",
)

#: Durable background work (memory detection, consolidation): recorded before it starts, claimed under a lease. The
#: startup scan reads only unfinished jobs; pruning reads only finished ones.
JOBS = (
    """
    CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        payload {json} NOT NULL,
        state {json} NOT NULL DEFAULT '{}',
        status TEXT NOT NULL[postgres:  CHECK (status IN ('pending', 'running', 'done', 'failed'))],
        attempts INTEGER NOT NULL DEFAULT 0,
        owner TEXT,
        lease_until {time},
        run_after {time},
        result {json},
        error TEXT,
        created_at {time} NOT NULL,
        updated_at {time} NOT NULL,
        UNIQUE (kind, key)
    )
    """,
    "CREATE INDEX jobs_open ON jobs (created_at) WHERE status IN ('pending', 'running')",
    "CREATE INDEX jobs_finished ON jobs (updated_at) WHERE status IN ('done', 'failed')",
)

#: The user a job works for (filled from its payload by each backend's JSON functions), so erasing a user removes
#: their jobs, finished ones (whose payload is dropped) included.
JOB_USERS = (
    "ALTER TABLE jobs ADD COLUMN tenant TEXT",
    "ALTER TABLE jobs ADD COLUMN user_id TEXT",
)

_STATUSES = ", ".join(f"'{s.value}'" for s in TurnStatus)

#: Sessions, their turns (the archive), a turn's artifacts and the snapshots of the base truth. What each backend
#: indexes the exchanges' text with is its own (an FTS5 owner column on SQLite, a ``tsvector`` on PostgreSQL; both
#: replaced by stored stems since).
SESSIONS = (
    """
    CREATE TABLE sessions (
        {key} {identity},
        tenant TEXT NOT NULL,
        user_id TEXT NOT NULL,
        id TEXT NOT NULL,
        agent TEXT,
        turn_count INTEGER NOT NULL DEFAULT 0,
        version {bigint} NOT NULL DEFAULT 0,
        base_truth {json} NOT NULL DEFAULT '[]',
        last_consolidated_turn INTEGER NOT NULL DEFAULT 0,
        line TEXT NOT NULL DEFAULT '',
        line_turn INTEGER NOT NULL DEFAULT 0,
        created_at {time} NOT NULL,
        updated_at {time} NOT NULL,
        ended_at {time},
        UNIQUE (tenant, user_id, id)
    )
    """,
    "CREATE INDEX sessions_by_user ON sessions (tenant, user_id, updated_at)",
    f"""
    CREATE TABLE session_turns (
        {{key}} {{identity}},
        session_{{key}} {{bigint}} NOT NULL REFERENCES sessions ({{key}}) ON DELETE CASCADE,
        tenant TEXT NOT NULL,
        user_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        user_text TEXT NOT NULL,
        assistant_text TEXT NOT NULL,
        at {{time}} NOT NULL,
        route TEXT NOT NULL DEFAULT '',
        user_keep INTEGER NOT NULL DEFAULT 0,
        assistant_keep INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL[postgres:  CHECK (status IN ({_STATUSES}))],
        user_summary TEXT NOT NULL DEFAULT '',
        assistant_summary TEXT NOT NULL DEFAULT '',
        outcome TEXT NOT NULL DEFAULT '',
        attempts INTEGER NOT NULL DEFAULT 0,
        error TEXT NOT NULL DEFAULT '',
        flags {{texts}},
        [sqlite: fts_owner TEXT NOT NULL,]
        [postgres: tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', regexp_replace(
            left(user_text, 100000) || ' ' || left(assistant_text, 100000), '\\W+', ' ', 'g'
        ))) STORED,]
        UNIQUE (session_{{key}}, turn)
    )
    """,
    "CREATE INDEX session_turns_by_user ON session_turns (tenant, user_id, at)",
    "CREATE INDEX session_turns_flagged ON session_turns (at) WHERE status IN ('pending', 'unsummarized')",
    """
    CREATE TABLE session_artifacts (
        session_{key} {bigint} NOT NULL REFERENCES sessions ({key}) ON DELETE CASCADE,
        turn INTEGER NOT NULL,
        idx INTEGER NOT NULL,
        kind TEXT NOT NULL,
        role TEXT NOT NULL,
        language TEXT NOT NULL DEFAULT '',
        label TEXT NOT NULL DEFAULT '',
        content TEXT NOT NULL,
        created_at {time} NOT NULL,
        PRIMARY KEY (session_{key}, turn, idx)
    )
    """,
    """
    CREATE TABLE session_snapshots (
        {key} {identity},
        session_{key} {bigint} NOT NULL REFERENCES sessions ({key}) ON DELETE CASCADE,
        turn INTEGER NOT NULL,
        reason TEXT NOT NULL,
        facts {json} NOT NULL,
        at {time} NOT NULL
    )
    """,
    "CREATE INDEX session_snapshots_by_session ON session_snapshots (session_{key}, {key})",
)

#: A tenant's API keys (the roles: :mod:`memstack.store._keys`).
API_KEYS = (
    """
    CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        name TEXT NOT NULL DEFAULT '',
        prefix TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        created_at {time} NOT NULL,
        revoked_at {time}
    )
    """,
    "CREATE INDEX api_keys_by_tenant ON api_keys (tenant, created_at)",
)

#: A tenant's agent definitions.
AGENTS = (
    """
    CREATE TABLE agents (
        tenant TEXT NOT NULL,
        name TEXT NOT NULL,
        definition {json} NOT NULL,
        created_at {time} NOT NULL,
        updated_at {time} NOT NULL,
        PRIMARY KEY (tenant, name)
    )
    """,
)

#: Where new vectors wait until every vector of the store has one (``memstack reembed``).
REEMBED_VECTORS = (
    """
    CREATE TABLE reembed_vectors (
        tbl TEXT NOT NULL,
        row_id {bigint} NOT NULL,
        text TEXT NOT NULL,
        embedding [sqlite: BLOB][postgres: vector] NOT NULL,
        PRIMARY KEY (tbl, row_id)
    )
    """,
)

#: One row per message of an archived exchange (``side`` 0 the user's message, 1 the reply), with the speaker's name
#: when it was imported with one, and its vector (``NULL`` for a blank message: recorded, so the backfill does not
#: come back to it, never indexed). Rows go with their exchange.
ARCHIVE_VECTORS = (
    """
    CREATE TABLE archive_vectors (
        seq {serial},
        turn_{key} {bigint} NOT NULL REFERENCES session_turns ({key}) ON DELETE CASCADE,
        tenant TEXT NOT NULL,
        user_id TEXT NOT NULL,
        side {smallint} NOT NULL CHECK (side IN (0, 1)),
        speaker TEXT,
        embedding {vector},
        UNIQUE (turn_{key}, side)
    )
    """,
    "CREATE INDEX archive_vectors_by_user ON archive_vectors (tenant, user_id, seq)",
)

#: One row per session ever held (:mod:`memstack.store.leases`): ``owner`` (``NULL`` when free), the fencing
#: ``token`` (bumped by every take, never reset) and when the hold expires (long past when free).
SESSION_LEASES = (
    """
    CREATE TABLE session_leases (
        tenant TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        owner TEXT,
        token {bigint} NOT NULL DEFAULT 0,
        expires_at {clock} NOT NULL DEFAULT [sqlite: 0][postgres: '-infinity'],
        PRIMARY KEY (tenant, user_id, session_id)
    ){without_rowid}
    """,
)

CHAT_THREADS = (
    """
    CREATE TABLE chat_threads (
        tenant TEXT NOT NULL,
        user_id TEXT NOT NULL,
        digest TEXT NOT NULL,
        session_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        created_at {time} NOT NULL[postgres:  DEFAULT now()],
        PRIMARY KEY (tenant, user_id, digest)
    ){without_rowid}
    """,
)

IDEMPOTENCY_KEYS = (
    """
    CREATE TABLE idempotency_keys (
        tenant TEXT NOT NULL,
        key TEXT NOT NULL,
        user_id TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        status INTEGER,
        body {blob},
        content_type TEXT NOT NULL DEFAULT '',
        created_at {time} NOT NULL,
        expires_at {time} NOT NULL,
        PRIMARY KEY (tenant, key)
    )
    """,
    "CREATE INDEX idempotency_keys_by_user ON idempotency_keys (tenant, user_id)",
    "CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at)",
)

CAPTURE_DROPS = (
    """
    CREATE TABLE capture_drops (
        tenant TEXT NOT NULL,
        user_id TEXT NOT NULL,
        count {bigint} NOT NULL,
        first_at {time} NOT NULL,
        last_at {time} NOT NULL,
        PRIMARY KEY (tenant, user_id)
    ){without_rowid}
    """,
)

#: What forgotten memories hide (:mod:`memstack.store._hidden`). The key is never used twice, so the user's
#: ``(count, max key)`` changes with every hide and restore (``version``).
HIDDEN_ITEMS = (
    """
    CREATE TABLE hidden_items (
        {key} {serial},
        tenant TEXT NOT NULL,
        user_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('turn', 'fact', 'line')),
        session_id TEXT NOT NULL,
        turn INTEGER NOT NULL DEFAULT 0,
        text TEXT NOT NULL DEFAULT '',
        created_at {time} NOT NULL[postgres:  DEFAULT now()]
    )
    """,
    "CREATE INDEX hidden_items_by_session ON hidden_items (tenant, user_id, session_id, kind, turn)",
    "CREATE INDEX hidden_items_by_memory ON hidden_items (tenant, user_id, memory_id)",
)

#: One row per user erased lately (:mod:`memstack.store.fence`): a digest, the epoch and when (and on SQLite
#: whether the write-ahead log was emptied since).
USER_ERASURES = (
    """
    CREATE TABLE user_erasures (
        key TEXT PRIMARY KEY,
        epoch {bigint} NOT NULL,
        erased_at {clock} NOT NULL[sqlite: ,
        purged INTEGER NOT NULL DEFAULT 0]
    ){without_rowid}
    """,
)

#: The caller's JSON object kept with a memory (memstack.types.check_metadata); a constant default, so no table
#: rewrite. Filters narrow one user's rows, already found by user: no index.
MEMORY_METADATA = ("ALTER TABLE memories ADD COLUMN metadata {json} NOT NULL DEFAULT '{}'",)

#: When a memory held in the user's life, besides when it was recorded. Nullable without a default (no table
#: rewrite): rows stored before are left unknown (NULL) rather than given ``created_at``, since when memstack heard
#: a fact says nothing of when it began, and an unknown start is open toward the past for ``as_of`` reads, so they
#: stay found as before. ``as_of`` reads filter one user's rows, already found by user: no index.
MEMORY_VALIDITY = (
    "ALTER TABLE memories ADD COLUMN valid_from {time}",
    "ALTER TABLE memories ADD COLUMN valid_to {time}",
)

#: A tenant's webhook endpoints and the outbox of their deliveries (:mod:`memstack.store._outbox`,
#: :mod:`memstack.store._webhooks`).
WEBHOOKS = (
    """
    CREATE TABLE webhook_endpoints (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        url TEXT NOT NULL,
        secret TEXT NOT NULL,
        events {json} NOT NULL,
        enabled {bool} NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        created_at {time} NOT NULL,
        updated_at {time} NOT NULL
    )
    """,
    "CREATE INDEX webhook_endpoints_by_tenant ON webhook_endpoints (tenant, enabled)",
    """
    CREATE TABLE webhook_outbox (
        {key} {identity},
        id TEXT NOT NULL UNIQUE,
        event_id TEXT NOT NULL,
        endpoint_id TEXT NOT NULL,
        tenant TEXT NOT NULL,
        user_id TEXT NOT NULL,
        type TEXT NOT NULL,
        occurred_at {time} NOT NULL,
        payload {json} NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        next_at {time} NOT NULL,
        lease_owner TEXT,
        lease_until {time},
        last_status INTEGER,
        last_error TEXT,
        created_at {time} NOT NULL,
        delivered_at {time}
    )
    """,
    "CREATE INDEX webhook_outbox_due ON webhook_outbox (status, next_at)",
    "CREATE INDEX webhook_outbox_by_endpoint ON webhook_outbox (tenant, endpoint_id, {key})",
    "CREATE INDEX webhook_outbox_by_user ON webhook_outbox (tenant, user_id)",
)
