"""The PostgreSQL tables of a tenant's roles, API keys and agent definitions (the roles themselves:
:mod:`memstack.store._keys`)."""

from __future__ import annotations

from typing import Any

import psycopg

__all__ = ["MIGRATIONS"]


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
