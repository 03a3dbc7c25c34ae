"""The SQLite store's ``ContextStore`` role: one manifest per response, as JSON, scoped by tenant and user."""

from __future__ import annotations

import builtins
import json
import sqlite3

from memstack.errors import InputError, NotFound
from memstack.store.sqlite._core import Core, user_key
from memstack.store.sqlite._rows import to_ts
from memstack.types import Manifest, UserRef, check_id, check_manifest

__all__ = ["SQLiteContexts"]

_MAX_RECENT = 1000


def _check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= _MAX_RECENT:
        raise InputError(f"limit must be a whole number from 1 to {_MAX_RECENT}, got {limit!r}")
    return limit


class SQLiteContexts:
    """Context manifests in the ``context_manifests`` table."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def save(self, user: UserRef, manifest: Manifest, *, session_id: str | None = None) -> None:
        data = check_manifest(manifest, session_id)
        tenant, user_id = user_key(user)
        row = (manifest.context_id, tenant, user_id, session_id, to_ts(manifest.created_at), data)

        def insert(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(
                    "INSERT INTO context_manifests (context_id, tenant, user_id, session_id, created_at, manifest) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    row,
                )
            except sqlite3.IntegrityError:
                raise InputError(
                    f"context {manifest.context_id} is already stored; a manifest is written once per response"
                ) from None

        await self._core.run(lambda conn: self._core.write(conn, insert))

    async def get(self, tenant: str, context_id: str, *, user_id: str | None = None) -> Manifest:
        check_id(context_id, "context id")
        if user_id is not None:
            check_id(user_id, "user_id")
        sql = "SELECT manifest FROM context_manifests WHERE context_id = ? AND tenant = ?"
        args: tuple[str, ...] = (context_id, tenant)
        if user_id is not None:
            sql += " AND user_id = ?"
            args += (user_id,)
        row = await self._core.run(lambda conn: conn.execute(sql, args).fetchone())
        if row is None:
            raise NotFound("context", context_id)
        return Manifest.from_dict(json.loads(row[0]))

    async def recent(self, user: UserRef, *, session_id: str | None = None, limit: int = 20) -> builtins.list[Manifest]:
        _check_limit(limit)
        tenant, user_id = user_key(user)
        sql = "SELECT manifest FROM context_manifests WHERE tenant = ? AND user_id = ?"
        args: tuple[str | int, ...] = (tenant, user_id)
        if session_id is not None:
            sql += " AND session_id = ?"
            args += (session_id,)
        sql += " ORDER BY created_at DESC, rowid DESC LIMIT ?"
        rows = await self._core.run(lambda conn: conn.execute(sql, (*args, limit)).fetchall())
        return [Manifest.from_dict(json.loads(r[0])) for r in rows]
