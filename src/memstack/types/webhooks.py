"""Webhooks: a tenant's endpoints, the events they subscribe to, and the deliveries of those events
(:mod:`memstack.webhooks`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

__all__ = ["EVENT_TYPES", "DeliveryStatus", "WebhookDelivery", "WebhookEndpoint"]

#: Every event an endpoint can subscribe to. A memory's events name the memory and carry its content; an erasure
#: names only the user (nothing they said is kept for it); a session's names the session and its summary line.
EVENT_TYPES: tuple[str, ...] = (
    "memory.created",
    "memory.updated",
    "memory.superseded",
    "memory.forgotten",
    "memory.restored",
    "memory.deleted",
    "user.erased",
    "session.ended",
)


class DeliveryStatus(StrEnum):
    PENDING = "pending"  # waiting for its (next) attempt at ``next_attempt_at``
    DELIVERED = "delivered"  # the endpoint answered 2xx
    FAILED = "failed"  # given up after the bounded attempts or age; ``last_error`` says why


@dataclass(frozen=True, slots=True)
class WebhookEndpoint:
    """A URL of a tenant's that receives the events it subscribes to, signed with ``secret``.

    ``secret`` is set only in what ``create`` returns (shown once); reads leave it ``None``."""

    id: str
    tenant: str
    url: str
    events: tuple[str, ...]
    enabled: bool
    description: str
    created_at: datetime
    updated_at: datetime
    secret: str | None = None


@dataclass(frozen=True, slots=True)
class WebhookDelivery:
    """One event on its way to one endpoint. ``event_id`` is the same for every delivery of the event (retries,
    replays): a receiver that has seen it can drop the copy (delivery is at least once)."""

    id: str
    event_id: str
    endpoint_id: str
    tenant: str
    user_id: str
    type: str
    occurred_at: datetime
    payload: Mapping[str, Any]
    status: DeliveryStatus
    attempts: int
    next_attempt_at: datetime | None
    last_status: int | None
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None
