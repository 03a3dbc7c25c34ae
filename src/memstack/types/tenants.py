"""Tenants: API keys, stored agent definitions, and the responses kept under an HTTP write's idempotency key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = ["AgentRecord", "ApiKey", "StoredResponse"]


@dataclass(frozen=True, slots=True)
class ApiKey:
    """An API key's record. The secret is shown once when the key is created; only its SHA-256 is stored.

    ``id`` (``key_…``) is public: list and revoke by it. ``prefix`` is the start of the secret, to recognise a key."""

    id: str
    tenant: str
    name: str
    prefix: str
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class AgentRecord:
    """An agent definition stored for one tenant: the plain (YAML/JSON) values ``memstack.context`` loads."""

    tenant: str
    name: str
    definition: dict[str, Any]
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """What the store keeps for one HTTP write sent with an ``Idempotency-Key`` (``store.idempotency``): who sent it,
    a fingerprint of the request, and once it was answered the response to replay (``status`` is ``None`` while the
    first request is still being answered). Kept until ``expires_at``, erased with the user."""

    tenant: str
    key: str
    user_id: str
    fingerprint: str
    created_at: datetime
    expires_at: datetime
    status: int | None = None
    body: bytes = b""
    content_type: str = ""

    @property
    def pending(self) -> bool:
        return self.status is None
