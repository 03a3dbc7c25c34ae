"""Whose data a call of the engine is about: a user named by id (tenant ``default``, or the ``tenant=`` given) or by
a :class:`~memstack.types.UserRef`, and a tenant named alone (agents and API keys belong to a tenant, not a user)."""

from __future__ import annotations

from memstack.errors import InputError
from memstack.types import UserRef, check_id

__all__ = ["DEFAULT_TENANT", "tenant_of", "user_ref"]

#: The tenant of users named by id alone (and of every request to a server in local mode).
DEFAULT_TENANT = "default"


def user_ref(user: str | UserRef, tenant: str | None) -> UserRef:
    """``user`` in ``tenant`` (default ``default``); ``InputError`` when a ``UserRef`` names another tenant."""
    if isinstance(user, UserRef):
        if tenant is not None and tenant != user.tenant:
            raise InputError(f"user {user.user_id!r} belongs to tenant {user.tenant!r}, not {tenant!r}")
        return user
    return UserRef(user, tenant or DEFAULT_TENANT)


def tenant_of(tenant: str | None) -> str:
    """The tenant named (checked as an id), or ``default``."""
    return DEFAULT_TENANT if tenant is None else check_id(tenant, "tenant")
