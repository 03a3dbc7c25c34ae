"""``engine.keys``: the API keys of the HTTP server and MCP over HTTP (``memstack keys``). A key scopes every
request made with it to one tenant. The secret is returned once, by :meth:`Keys.create`; the store keeps only its
SHA-256, so a lost key cannot be shown again: revoke it and create another.

Keys are an administrator's tool: the HTTP API offers no route to them (a tenant's key cannot make keys), so the
Python client has no ``keys``."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from memstack.types import ApiKey

if TYPE_CHECKING:
    from memstack.engine import AsyncMemstack

__all__ = ["Keys"]


class Keys:
    """Create, list, revoke and check API keys (names are checked by the store: 1-200 printable characters)."""

    def __init__(self, engine: AsyncMemstack) -> None:
        self._engine = engine

    async def create(self, tenant: str, *, name: str = "") -> tuple[ApiKey, str]:
        """A new key for ``tenant`` (``name``: a label to recognise it by) and its secret, shown only this once."""
        return await self._engine.store.keys.create(tenant, name=name)

    async def list(self, tenant: str | None = None, *, include_revoked: bool = False) -> builtins.list[ApiKey]:
        """The keys (of one tenant when given), never their secrets; revoked ones with ``include_revoked``."""
        return await self._engine.store.keys.list(tenant, include_revoked=include_revoked)

    async def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key by its id (``key_…``): requests with it are refused from then on."""
        return await self._engine.store.keys.revoke(key_id)

    async def authenticate(self, secret: str) -> ApiKey | None:
        """The active key whose secret this is; ``None`` for an unknown or revoked one."""
        return await self._engine.store.keys.authenticate(secret)
