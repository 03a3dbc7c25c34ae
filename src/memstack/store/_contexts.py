"""The ``ContextStore`` role on both backends: one manifest per response (what the model saw), as JSON, scoped by
tenant and user, listed per user newest first (table ``context_manifests``)."""

from __future__ import annotations

import builtins
from typing import Any

from memstack.errors import InputError, NotFound
from memstack.store._sql import Sql
from memstack.types import Manifest, UserRef, check_id, check_manifest

__all__ = ["Contexts"]

_MAX_RECENT = 1000


class Contexts:
    """Context manifests in the ``context_manifests`` table."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    async def save(self, user: UserRef, manifest: Manifest, *, session_id: str | None = None) -> None:
        check_manifest(manifest, session_id)  # refuses temporary chats and bad ids
        saved = await self._sql.execute(
            "INSERT INTO context_manifests (context_id, tenant, user_id, session_id, created_at, manifest) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (context_id) DO NOTHING",
            (
                manifest.context_id, user.tenant, user.user_id, session_id, manifest.created_at,
                self._sql.json(manifest.to_dict()),
            ),
        )  # fmt: skip
        if saved != 1:
            raise InputError(
                f"context {manifest.context_id} is already stored; a manifest is written once per response"
            )

    async def get(self, tenant: str, context_id: str, *, user_id: str | None = None) -> Manifest:
        check_id(context_id, "context id")
        if user_id is not None:
            check_id(user_id, "user_id")
        query = "SELECT manifest FROM context_manifests WHERE context_id = ? AND tenant = ?"
        args: tuple[str, ...] = (context_id, tenant)
        if user_id is not None:
            query += " AND user_id = ?"
            args += (user_id,)
        row = await self._sql.one(query, args)
        if row is None:
            raise NotFound("context", context_id)
        return Manifest.from_dict(self._sql.unjson(row[0]))

    async def recent(self, user: UserRef, *, session_id: str | None = None, limit: int = 20) -> builtins.list[Manifest]:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= _MAX_RECENT:
            raise InputError(f"limit must be a whole number from 1 to {_MAX_RECENT}, got {limit!r}")
        query = "SELECT manifest FROM context_manifests WHERE tenant = ? AND user_id = ?"
        args: tuple[Any, ...] = (user.tenant, user.user_id)
        if session_id is not None:
            query += " AND session_id = ?"
            args += (session_id,)
        rows = await self._sql.all(f"{query} ORDER BY created_at DESC, {self._sql.rowid} DESC LIMIT ?", (*args, limit))
        return [Manifest.from_dict(self._sql.unjson(r[0])) for r in rows]
