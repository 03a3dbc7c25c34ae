"""The SQLite tables of a tenant's roles, API keys and agent definitions (the roles themselves:
:mod:`memstack.store._keys`)."""

from __future__ import annotations

import sqlite3

__all__ = ["MIGRATIONS"]


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
