"""The PostgreSQL store's tenant roles: API keys (:class:`PgKeys`) and agent definitions (:class:`PgAgents`).

Same contract as the SQLite ones (``tests/store/test_keys.py``): keys are found by the SHA-256 of the secret (a
unique index), the secret itself is never stored; agent definitions are ``jsonb``, one row per (tenant, name).
"""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from memstack.errors import NotFound
from memstack.store._checks import check_definition
from memstack.store.base import check_name, hash_api_key, new_api_key
from memstack.store.postgres._db import Database
from memstack.types import AgentRecord, ApiKey, check_id, new_id, utcnow

__all__ = ["MIGRATIONS", "PgAgents", "PgKeys"]

_KEY_COLUMNS = "id, tenant, name, prefix, created_at, revoked_at"
_AGENT_COLUMNS = "tenant, name, definition, created_at, updated_at"


async def _m_api_keys(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    await conn.execute(
        """
        CREATE TABLE api_keys (
            id text PRIMARY KEY,
            tenant text NOT NULL,
            name text NOT NULL DEFAULT '',
            prefix text NOT NULL,
            secret_hash text NOT NULL UNIQUE,
            created_at timestamptz NOT NULL,
            revoked_at timestamptz
        )
        """
    )
    await conn.execute("CREATE INDEX api_keys_by_tenant ON api_keys (tenant, created_at)")


async def _m_agents(conn: psycopg.AsyncConnection[Any], dim: int) -> None:
    await conn.execute(
        """
        CREATE TABLE agents (
            tenant text NOT NULL,
            name text NOT NULL,
            definition jsonb NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            PRIMARY KEY (tenant, name)
        )
        """
    )


#: Appended to the backend's migration list (``_schema.MIGRATIONS``).
MIGRATIONS = [("0008_api_keys", _m_api_keys), ("0009_agents", _m_agents)]


def _key(row: tuple[Any, ...]) -> ApiKey:
    return ApiKey(id=row[0], tenant=row[1], name=row[2], prefix=row[3], created_at=row[4], revoked_at=row[5])


def _agent(row: tuple[Any, ...]) -> AgentRecord:
    created: datetime = row[3]
    updated: datetime = row[4]
    return AgentRecord(tenant=row[0], name=row[1], definition=dict(row[2]), created_at=created, updated_at=updated)


class PgKeys:
    """API keys in the ``api_keys`` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(self, tenant: str, *, name: str = "") -> tuple[ApiKey, str]:
        check_name("tenant", tenant)
        check_name("key name", name)
        secret = new_api_key()
        key = ApiKey(new_id("key"), tenant, name, secret[:12], utcnow())
        async with self._db.connection() as conn:
            await conn.execute(
                "INSERT INTO api_keys (id, tenant, name, prefix, secret_hash, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                (key.id, key.tenant, key.name, key.prefix, hash_api_key(secret), key.created_at),
            )
        return key, secret

    async def authenticate(self, secret: str) -> ApiKey | None:
        if not secret or len(secret) > 200:
            return None
        async with self._db.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE secret_hash = %s AND revoked_at IS NULL",
                (hash_api_key(secret),),
            )
            row = await cur.fetchone()
        return _key(row) if row is not None else None

    async def list(self, tenant: str | None = None, *, include_revoked: bool = False) -> builtins.list[ApiKey]:
        query = f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE true"
        args: builtins.list[Any] = []
        if tenant is not None:
            query += " AND tenant = %s"
            args.append(check_name("tenant", tenant))
        if not include_revoked:
            query += " AND revoked_at IS NULL"
        async with self._db.connection() as conn:
            rows = await (await conn.execute(query + " ORDER BY created_at, id", args)).fetchall()
        return [_key(r) for r in rows]

    async def revoke(self, key_id: str) -> ApiKey:
        check_id(key_id, "key id")
        async with self._db.connection() as conn:
            await conn.execute(
                "UPDATE api_keys SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL", (utcnow(), key_id)
            )
            row = await (await conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = %s", (key_id,))).fetchone()
        if row is None:
            raise NotFound("key", key_id)
        return _key(row)


class PgAgents:
    """Agent definitions in the ``agents`` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def put(self, tenant: str, name: str, definition: dict[str, Any]) -> AgentRecord:
        check_name("tenant", tenant)
        check_name("agent name", name)
        check_definition(definition)
        now = utcnow()
        async with self._db.connection() as conn:
            cur = await conn.execute(
                "INSERT INTO agents (tenant, name, definition, created_at, updated_at) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (tenant, name) DO UPDATE SET definition = excluded.definition, "
                f"updated_at = excluded.updated_at RETURNING {_AGENT_COLUMNS}",
                (tenant, name, Jsonb(definition), now, now),
            )
            row = await cur.fetchone()
        assert row is not None  # RETURNING always yields the row
        return _agent(row)

    async def get(self, tenant: str, name: str) -> AgentRecord:
        check_name("agent name", name)
        async with self._db.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_AGENT_COLUMNS} FROM agents WHERE tenant = %s AND name = %s", (tenant, name)
            )
            row = await cur.fetchone()
        if row is None:
            raise NotFound("agent", name)
        return _agent(row)

    async def list(self, tenant: str) -> builtins.list[AgentRecord]:
        async with self._db.connection() as conn:
            cur = await conn.execute(f"SELECT {_AGENT_COLUMNS} FROM agents WHERE tenant = %s ORDER BY name", (tenant,))
            rows = await cur.fetchall()
        return [_agent(r) for r in rows]

    async def delete(self, tenant: str, name: str) -> None:
        check_name("agent name", name)
        async with self._db.connection() as conn:
            cur = await conn.execute("DELETE FROM agents WHERE tenant = %s AND name = %s", (tenant, name))
        if cur.rowcount == 0:
            raise NotFound("agent", name)
