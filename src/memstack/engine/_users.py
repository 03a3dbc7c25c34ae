"""``engine.users``: a user as a whole. What :meth:`AsyncMemstack.export` writes, as the records it is written from
(a tool that reports what it exported counts them), and the erasure fence that work for a user spanning several
calls holds (:mod:`memstack.store.fence`): an erasure meanwhile makes the rest of that work write nothing."""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstack.engine._scope import tenant_of, user_ref
from memstack.store.fence import Fence, pin
from memstack.types import ImportReport, UserRecord, UserRef, UserSummary

if TYPE_CHECKING:
    from memstack.engine import AsyncMemstack

__all__ = ["Users"]


class Users:
    """Users as a whole: a tenant's list of them, their records, and the fence of work for them."""

    def __init__(self, engine: AsyncMemstack) -> None:
        self._engine = engine

    async def list(
        self, *, after: str | None = None, limit: int = 100, tenant: str | None = None
    ) -> builtins.list[UserSummary]:
        """A page of the tenant's users (anyone with a memory or a session), in user-id order (byte order), each
        with its active memories, sessions and last change: pass the last ``user_id`` as ``after`` for the next
        page; ``limit`` 1-1000."""
        return await self._engine.store.users.list(tenant_of(tenant), after=after, limit=limit)

    def records(self, user_id: str | UserRef, *, tenant: str | None = None) -> AsyncIterator[UserRecord]:
        """Everything held about the user, section by section (memories, sessions, contexts, jobs, dropped
        captures), read a page at a time: the records :meth:`AsyncMemstack.export_stream` writes as JSON."""
        return self._engine.store.users.export(user_ref(user_id, tenant))

    async def fence(self, user_id: str | UserRef, *, tenant: str | None = None) -> Fence:
        """The erasure fence of work for the user that starts now (:func:`memstack.store.fence.pin`); run the work
        under it with :func:`memstack.store.fence.fenced`. An erasure of the user after this call makes every write
        of that work fail with ``UserErased``, in any process sharing the store."""
        return await pin(self._engine.store.users, user_ref(user_id, tenant))

    async def import_mem0(
        self, data: Any, *, user_id: str | None = None, tenant: str | None = None
    ) -> builtins.list[ImportReport]:
        """Import mem0's memories (``data``: what mem0's ``get_all`` returns, ``{"results": [...]}``, parsed) with
        their ids, texts and times, one transaction per user (each item's ``user_id``, else ``user_id``). Memories
        already imported (by mem0's id) are skipped, so importing twice adds nothing; an id another user holds is
        ``ImportConflict``. One report per user (:mod:`memstack.imports.mem0`)."""
        from memstack.engine._imports import import_mem0

        return await import_mem0(self._engine, data, user_id=user_id, tenant=tenant)

    async def import_messages(
        self,
        source: Path | str | Iterable[str | bytes | Mapping[str, Any]],
        *,
        tenant: str | None = None,
        capture: bool = True,
    ) -> builtins.list[ImportReport]:
        """Import plain messages, ``{"user_id", "text", "timestamp"}`` each (a JSONL file as a ``Path``, read a line
        at a time; JSONL text; or the messages), through :meth:`AsyncMemstack.ingest`: archived at their own times,
        memory capture run on them (``capture``). Every line is checked before anything is written (a bad one is
        ``ImportRefused`` naming it); importing twice adds nothing. One report per user, counting messages, turns
        and memory updates (:mod:`memstack.imports.messages`)."""
        from memstack.engine._imports import import_messages, jsonl_lines

        return await import_messages(self._engine, jsonl_lines(source), tenant=tenant, capture=capture)
