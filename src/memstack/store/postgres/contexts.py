"""The PostgreSQL store's ``ContextStore`` role: one manifest per response, as ``jsonb``, scoped by tenant and user."""

from __future__ import annotations

import builtins
from typing import Any

from psycopg.types.json import Jsonb

from memstack.errors import InputError, NotFound
from memstack.store.postgres._db import Database
from memstack.types import Manifest, UserRef, check_id, check_manifest

__all__ = ["PgContexts"]

_MAX_RECENT = 1000


class PgContexts:
    """Context manifests in the ``context_manifests`` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def save(self, user: UserRef, manifest: Manifest, *, session_id: str | None = None) -> None:
        check_manifest(manifest, session_id)  # refuses temporary chats and bad ids
        async with self._db.writing(single=True) as conn:
            cur = await conn.execute(
                "INSERT INTO context_manifests (context_id, tenant, user_id, session_id, created_at, manifest) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (context_id) DO NOTHING",
                (
                    manifest.context_id,
                    user.tenant,
                    user.user_id,
                    session_id,
                    manifest.created_at,
                    Jsonb(manifest.to_dict()),
                ),
            )
            if cur.rowcount != 1:
                raise InputError(
                    f"context {manifest.context_id} is already stored; a manifest is written once per response"
                )

    async def get(self, tenant: str, context_id: str, *, user_id: str | None = None) -> Manifest:
        check_id(context_id, "context id")
        if user_id is not None:
            check_id(user_id, "user_id")
        query = "SELECT manifest FROM context_manifests WHERE context_id = %s AND tenant = %s"
        args: tuple[str, ...] = (context_id, tenant)
        if user_id is not None:
            query += " AND user_id = %s"
            args += (user_id,)
        async with self._db.connection() as conn:
            row = await (await conn.execute(query, args)).fetchone()
        if row is None:
            raise NotFound("context", context_id)
        return Manifest.from_dict(row[0])

    async def recent(self, user: UserRef, *, session_id: str | None = None, limit: int = 20) -> builtins.list[Manifest]:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= _MAX_RECENT:
            raise InputError(f"limit must be a whole number from 1 to {_MAX_RECENT}, got {limit!r}")
        query = "SELECT manifest FROM context_manifests WHERE tenant = %s AND user_id = %s"
        args: tuple[Any, ...] = (user.tenant, user.user_id)
        if session_id is not None:
            query += " AND session_id = %s"
            args += (session_id,)
        async with self._db.connection() as conn:
            cur = await conn.execute(query + " ORDER BY created_at DESC, seq DESC LIMIT %s", (*args, limit))
            rows = await cur.fetchall()
        return [Manifest.from_dict(r[0]) for r in rows]
