"""Whom a client acts for: the tenant of its API key (asked of the server once, ``GET /v1/whoami``) and the users
named in its calls, which must live in that tenant. The client and its namespaces share one :class:`Identity`
over the client's transport, so the namespaces need nothing of the client itself.
"""

from __future__ import annotations

from memstack.client._http import Transport
from memstack.errors import InputError
from memstack.types import UserRef

__all__ = ["Identity"]


class Identity:
    """The tenant of ``http``'s API key, learned once, and the checks of the tenants named in calls."""

    def __init__(self, http: Transport) -> None:
        self._http = http
        self._tenant: str | None = None

    async def tenant(self, named: str | None = None) -> str:
        """The key's tenant; ``InputError`` when ``named`` is another one."""
        if self._tenant is None:
            data = await self._http.request("GET", "/v1/whoami")
            self._tenant = str(data["tenant"])
        if named is not None and named != self._tenant:
            raise InputError(
                f"this client's API key acts for tenant {self._tenant!r}, not {named!r}; use a key of tenant {named!r}"
            )
        return self._tenant

    async def user(self, user: str | UserRef, tenant: str | None) -> tuple[str, str]:
        """The user id to send and the tenant it lives in; ``InputError`` for a tenant other than the key's."""
        await self.tenant()
        if isinstance(user, UserRef) and tenant is not None and tenant != user.tenant:
            raise InputError(f"user {user.user_id!r} belongs to tenant {user.tenant!r}, not {tenant!r}")
        user_id, named = (user.user_id, user.tenant) if isinstance(user, UserRef) else (user, tenant)
        return user_id, await self.tenant(named)
