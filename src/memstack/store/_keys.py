"""A tenant's roles on both backends: API keys (:class:`Keys`) and agent definitions (:class:`Agents`); the tables
are each backend's (``keys.py``: migrations ``api_keys`` and ``agents``). Same contract on both
(``tests/store/test_keys.py``).

Keys are looked up by the SHA-256 of the secret (a unique index), so authenticating is one indexed read; the secret
itself is never written anywhere. Agent definitions are JSON (text on SQLite, ``jsonb`` on PostgreSQL), one row per
(tenant, name). Neither is a user's data, so their writes are not under an erasure fence.
"""

from __future__ import annotations

import builtins
from typing import Any

from memstack.errors import NotFound
from memstack.store._checks import check_definition
from memstack.store._sql import Row, Sql, Tx
from memstack.store.base import check_name, hash_api_key, new_api_key
from memstack.types import AgentRecord, ApiKey, check_id, new_id, utcnow

__all__ = ["Agents", "Keys"]

_KEY_COLUMNS = "id, tenant, name, prefix, created_at, revoked_at"
_AGENT_COLUMNS = "tenant, name, definition, created_at, updated_at"


class Keys:
    """API keys in the ``api_keys`` table."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    def _key(self, row: Row) -> ApiKey:
        when = self._sql.when
        return ApiKey(row[0], row[1], row[2], row[3], created_at=when(row[4]) or utcnow(), revoked_at=when(row[5]))

    async def create(self, tenant: str, *, name: str = "") -> tuple[ApiKey, str]:
        check_name("tenant", tenant)
        check_name("key name", name)
        secret = new_api_key()
        key = ApiKey(new_id("key"), tenant, name, secret[:12], utcnow())
        await self._sql.execute(
            "INSERT INTO api_keys (id, tenant, name, prefix, secret_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (key.id, key.tenant, key.name, key.prefix, hash_api_key(secret), key.created_at),
            fenced=False,
        )
        return key, secret

    async def authenticate(self, secret: str) -> ApiKey | None:
        if not secret or len(secret) > 200:
            return None
        row = await self._sql.one(
            f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE secret_hash = ? AND revoked_at IS NULL", (hash_api_key(secret),)
        )
        return self._key(row) if row is not None else None

    async def list(self, tenant: str | None = None, *, include_revoked: bool = False) -> builtins.list[ApiKey]:
        query = f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE 1 = 1"
        args: builtins.list[Any] = []
        if tenant is not None:
            query += " AND tenant = ?"
            args.append(check_name("tenant", tenant))
        if not include_revoked:
            query += " AND revoked_at IS NULL"
        return [self._key(r) for r in await self._sql.all(query + " ORDER BY created_at, id", args)]

    async def revoke(self, key_id: str) -> ApiKey:
        check_id(key_id, "key id")

        async def revoke(tx: Tx) -> Row | None:
            await tx.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (utcnow(), key_id)
            )
            return await tx.one(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,))

        row = await self._sql.write(revoke, fenced=False)
        if row is None:
            raise NotFound("key", key_id)
        return self._key(row)


class Agents:
    """Agent definitions in the ``agents`` table."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    def _agent(self, row: Row) -> AgentRecord:
        when = self._sql.when
        definition = dict(self._sql.unjson(row[2]))
        return AgentRecord(row[0], row[1], definition, when(row[3]) or utcnow(), when(row[4]) or utcnow())

    async def put(self, tenant: str, name: str, definition: dict[str, Any]) -> AgentRecord:
        check_name("tenant", tenant)
        check_name("agent name", name)
        data = self._sql.json_text(check_definition(definition))
        now = utcnow()

        async def put(tx: Tx) -> Row | None:
            await tx.execute(
                "INSERT INTO agents (tenant, name, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (tenant, name) DO UPDATE SET definition = excluded.definition, "
                "updated_at = excluded.updated_at",
                (tenant, name, data, now, now),
            )
            return await tx.one(f"SELECT {_AGENT_COLUMNS} FROM agents WHERE tenant = ? AND name = ?", (tenant, name))

        row = await self._sql.write(put, fenced=False)
        assert row is not None  # written just now, in the same transaction
        return self._agent(row)

    async def get(self, tenant: str, name: str) -> AgentRecord:
        check_name("agent name", name)
        row = await self._sql.one(f"SELECT {_AGENT_COLUMNS} FROM agents WHERE tenant = ? AND name = ?", (tenant, name))
        if row is None:
            raise NotFound("agent", name)
        return self._agent(row)

    async def list(self, tenant: str) -> builtins.list[AgentRecord]:
        rows = await self._sql.all(f"SELECT {_AGENT_COLUMNS} FROM agents WHERE tenant = ? ORDER BY name", (tenant,))
        return [self._agent(r) for r in rows]

    async def delete(self, tenant: str, name: str) -> None:
        check_name("agent name", name)
        if (
            await self._sql.execute("DELETE FROM agents WHERE tenant = ? AND name = ?", (tenant, name), fenced=False)
            == 0
        ):
            raise NotFound("agent", name)
