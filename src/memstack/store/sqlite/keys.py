"""The SQLite store's tenant roles: API keys (:class:`SQLiteKeys`) and agent definitions (:class:`SQLiteAgents`).

Keys are looked up by the SHA-256 of the secret (a unique index), so authenticating is one indexed read; the secret
itself is never written anywhere. Agent definitions are kept as JSON text, one row per (tenant, name).
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from typing import Any

from memstack.errors import NotFound
from memstack.store._checks import check_definition
from memstack.store.base import check_name, hash_api_key, new_api_key
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._db import transaction
from memstack.store.sqlite._rows import from_ts, to_ts
from memstack.types import AgentRecord, ApiKey, check_id, new_id, utcnow

__all__ = ["MIGRATIONS", "SQLiteAgents", "SQLiteKeys"]

_KEY_COLUMNS = "id, tenant, name, prefix, created_at, revoked_at"


def _m_api_keys(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            name TEXT NOT NULL DEFAULT '',
            prefix TEXT NOT NULL,
            secret_hash TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        )
        """
    )
    conn.execute("CREATE INDEX api_keys_by_tenant ON api_keys (tenant, created_at)")


def _m_agents(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE agents (
            tenant TEXT NOT NULL,
            name TEXT NOT NULL,
            definition TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant, name)
        )
        """
    )


#: Appended to the backend's migration list (``_schema.MIGRATIONS``).
MIGRATIONS = [("008_api_keys", _m_api_keys), ("009_agents", _m_agents)]


def _key(row: tuple[Any, ...]) -> ApiKey:
    return ApiKey(
        id=row[0],
        tenant=row[1],
        name=row[2],
        prefix=row[3],
        created_at=from_ts(row[4]) or utcnow(),
        revoked_at=from_ts(row[5]),
    )


class SQLiteKeys:
    """API keys in the ``api_keys`` table."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def create(self, tenant: str, *, name: str = "") -> tuple[ApiKey, str]:
        check_name("tenant", tenant)
        check_name("key name", name)
        secret = new_api_key()
        key = ApiKey(new_id("key"), tenant, name, secret[:12], utcnow())
        row = (key.id, key.tenant, key.name, key.prefix, hash_api_key(secret), to_ts(key.created_at))

        def insert(conn: sqlite3.Connection) -> None:
            with transaction(conn, write=True):
                conn.execute(
                    "INSERT INTO api_keys (id, tenant, name, prefix, secret_hash, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    row,
                )

        await self._core.run(insert)
        return key, secret

    async def authenticate(self, secret: str) -> ApiKey | None:
        if not secret or len(secret) > 200:
            return None
        digest = hash_api_key(secret)
        sql = f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE secret_hash = ? AND revoked_at IS NULL"
        row = await self._core.run(lambda conn: conn.execute(sql, (digest,)).fetchone())
        return _key(row) if row is not None else None

    async def list(self, tenant: str | None = None, *, include_revoked: bool = False) -> builtins.list[ApiKey]:
        sql = [f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE 1 = 1"]
        args: builtins.list[Any] = []
        if tenant is not None:
            sql.append("AND tenant = ?")
            args.append(check_name("tenant", tenant))
        if not include_revoked:
            sql.append("AND revoked_at IS NULL")
        sql.append("ORDER BY created_at, id")
        query = " ".join(sql)
        return await self._core.run(lambda conn: [_key(r) for r in conn.execute(query, args)])

    async def revoke(self, key_id: str) -> ApiKey:
        check_id(key_id, "key id")

        def revoke(conn: sqlite3.Connection) -> ApiKey:
            with transaction(conn, write=True):
                conn.execute(
                    "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (to_ts(utcnow()), key_id)
                )
                row = conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,)).fetchone()
            if row is None:
                raise NotFound("key", key_id)
            return _key(row)

        return await self._core.run(revoke)


def _agent(row: tuple[Any, ...]) -> AgentRecord:
    return AgentRecord(
        tenant=row[0],
        name=row[1],
        definition=json.loads(row[2]),
        created_at=from_ts(row[3]) or utcnow(),
        updated_at=from_ts(row[4]) or utcnow(),
    )


class SQLiteAgents:
    """Agent definitions in the ``agents`` table."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def put(self, tenant: str, name: str, definition: dict[str, Any]) -> AgentRecord:
        check_name("tenant", tenant)
        check_name("agent name", name)
        text = check_definition(definition)
        now = to_ts(utcnow())

        def put(conn: sqlite3.Connection) -> AgentRecord:
            with transaction(conn, write=True):
                conn.execute(
                    "INSERT INTO agents (tenant, name, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (tenant, name) DO UPDATE SET definition = excluded.definition, "
                    "updated_at = excluded.updated_at",
                    (tenant, name, text, now, now),
                )
                row = conn.execute(
                    "SELECT tenant, name, definition, created_at, updated_at FROM agents WHERE tenant = ? AND name = ?",
                    (tenant, name),
                ).fetchone()
            return _agent(row)

        return await self._core.run(put)

    async def get(self, tenant: str, name: str) -> AgentRecord:
        check_name("agent name", name)
        sql = "SELECT tenant, name, definition, created_at, updated_at FROM agents WHERE tenant = ? AND name = ?"
        row = await self._core.run(lambda conn: conn.execute(sql, (tenant, name)).fetchone())
        if row is None:
            raise NotFound("agent", name)
        return _agent(row)

    async def list(self, tenant: str) -> builtins.list[AgentRecord]:
        sql = "SELECT tenant, name, definition, created_at, updated_at FROM agents WHERE tenant = ? ORDER BY name"
        return await self._core.run(lambda conn: [_agent(r) for r in conn.execute(sql, (tenant,))])

    async def delete(self, tenant: str, name: str) -> None:
        check_name("agent name", name)

        def delete(conn: sqlite3.Connection) -> int:
            with transaction(conn, write=True):
                return conn.execute("DELETE FROM agents WHERE tenant = ? AND name = ?", (tenant, name)).rowcount

        if await self._core.run(delete) == 0:
            raise NotFound("agent", name)
