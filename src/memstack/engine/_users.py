"""``engine.users``: a user as a whole. What :meth:`AsyncMemstack.export` writes, as the records it is written from
(a tool that reports what it exported counts them), and the erasure fence that work for a user spanning several
calls holds (:mod:`memstack.store.fence`): an erasure meanwhile makes the rest of that work write nothing."""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from memstack.engine._scope import tenant_of, user_ref
from memstack.store.fence import Fence, pin
from memstack.types import UserRecord, UserRef, UserSummary

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
