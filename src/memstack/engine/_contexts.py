"""``engine.contexts``: what the model saw for each response, as stored with it (the manifest: every fragment with
its layer, source, tokens, and whether it was kept, trimmed or quarantined, and why). ``memstack context explain``,
``GET /v1/contexts/{id}`` and the web UI's inspector read them here; a temporary chat's are never stored."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from memstack.engine._scope import tenant_of, user_ref
from memstack.types import Manifest, UserRef, check_id

if TYPE_CHECKING:
    from memstack.engine import AsyncMemstack

__all__ = ["Contexts"]


class Contexts:
    """Stored contexts, by the ``context_id`` each response carries, or a user's latest."""

    def __init__(self, engine: AsyncMemstack) -> None:
        self._engine = engine

    async def get(
        self, context_id: str, *, user_id: str | UserRef | None = None, tenant: str | None = None
    ) -> Manifest:
        """One response's context, in the tenant (``default`` unless named; a ``UserRef`` names it), and only if it
        is ``user_id``'s when given; ``NotFound`` otherwise."""
        check_id(context_id, "context_id")
        if user_id is None:
            return await self._engine.store.contexts.get(tenant_of(tenant), context_id)
        user = user_ref(user_id, tenant)
        return await self._engine.store.contexts.get(user.tenant, context_id, user_id=user.user_id)

    async def recent(
        self, user_id: str | UserRef, *, session_id: str | None = None, limit: int = 20, tenant: str | None = None
    ) -> builtins.list[Manifest]:
        """The user's latest contexts (of one session when given), newest first."""
        user = user_ref(user_id, tenant)
        if session_id is not None:
            check_id(session_id, "session_id")
        return await self._engine.store.contexts.recent(user, session_id=session_id, limit=limit)
