"""``engine.webhooks``: a tenant's webhook endpoints and their deliveries (``docs/webhooks.md``), for the library,
the HTTP API (``/v1/webhooks``), the client, the CLI and the web UI alike.

Which URLs are accepted depends on the deployment (:mod:`memstack.webhooks.urls`): ``webhooks_allow_private`` when
set, else :attr:`Webhooks.local`: true for the embedded library (its caller runs the process), set false by a
server that answers API keys (``auth = keys``: tenants other than the operator name the URLs).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import TYPE_CHECKING

from memstack.engine._scope import tenant_of
from memstack.errors import InputError
from memstack.types import (
    EVENT_TYPES,
    DeliveryStatus,
    WebhookDelivery,
    WebhookEndpoint,
    check_id,
    check_text,
    utcnow,
)
from memstack.types._core import check_limit
from memstack.webhooks.signing import new_secret
from memstack.webhooks.urls import check_url

if TYPE_CHECKING:
    from memstack.engine import AsyncMemstack

__all__ = ["Webhooks", "check_events"]

#: The longest description an endpoint takes.
MAX_DESCRIPTION = 500


def check_events(events: Iterable[str] | None) -> tuple[str, ...]:
    """The event types an endpoint subscribes to (all of :data:`~memstack.types.EVENT_TYPES` for ``None``)."""
    if events is None:
        return EVENT_TYPES
    if isinstance(events, str):
        events = [events]
    chosen = tuple(dict.fromkeys(str(e) for e in events))
    unknown = [e for e in chosen if e not in EVENT_TYPES]
    if unknown or not chosen:
        raise InputError(
            f"unknown webhook event type(s) {unknown}; choose among {', '.join(EVENT_TYPES)}"
            if unknown
            else f"subscribe to at least one event type: {', '.join(EVENT_TYPES)}"
        )
    return chosen


def _description(text: str) -> str:
    if not isinstance(text, str) or len(text) > MAX_DESCRIPTION:
        raise InputError(f"a webhook's description is text of at most {MAX_DESCRIPTION} characters")
    return check_text(text, "the webhook's description")


async def _url(url: str, *, allow_private: bool) -> str:
    """``url`` as stored (``WebhookRefused`` for one memstack will not call)."""
    if isinstance(url, str):
        check_text(url, "the webhook URL")
    await check_url(url, allow_private=allow_private)
    return url.strip()


class Webhooks:
    """Create, read, change and delete a tenant's endpoints; read and replay their deliveries."""

    def __init__(self, engine: AsyncMemstack) -> None:
        self._engine = engine
        #: Whether this deployment is local (see the module docstring); a server in ``keys`` mode sets it false.
        self.local = True

    @property
    def allow_private(self) -> bool:
        """Whether a webhook URL may reach a private, loopback or link-local address here."""
        setting = self._engine.config.webhooks_allow_private
        return self.local if setting is None else setting

    async def create(
        self,
        url: str,
        *,
        events: Iterable[str] | None = None,
        tenant: str | None = None,
        description: str = "",
        enabled: bool = True,
    ) -> WebhookEndpoint:
        """A new endpoint for ``tenant`` receiving ``events`` (all types by default). What it returns carries the
        signing secret, shown only this once (``WebhookRefused`` for a URL memstack will not call)."""
        checked = await _url(url, allow_private=self.allow_private)
        return await self._engine.store.webhooks.create(
            tenant_of(tenant), checked, check_events(events), new_secret(), description=_description(description),
            enabled=bool(enabled), now=utcnow(),
        )  # fmt: skip

    async def list(self, *, tenant: str | None = None) -> builtins.list[WebhookEndpoint]:
        """The tenant's endpoints, oldest first (without their secrets)."""
        return await self._engine.store.webhooks.list(tenant_of(tenant))

    async def get(self, webhook_id: str, *, tenant: str | None = None) -> WebhookEndpoint:
        check_id(webhook_id, "webhook id")
        return await self._engine.store.webhooks.get(tenant_of(tenant), webhook_id)

    async def update(
        self,
        webhook_id: str,
        *,
        tenant: str | None = None,
        url: str | None = None,
        events: Iterable[str] | None = None,
        enabled: bool | None = None,
        description: str | None = None,
    ) -> WebhookEndpoint:
        """Change what is given; deliveries already written keep going to this endpoint (at its new URL)."""
        check_id(webhook_id, "webhook id")
        checked = None if url is None else await _url(url, allow_private=self.allow_private)
        return await self._engine.store.webhooks.update(
            tenant_of(tenant), webhook_id, url=checked,
            events=None if events is None else check_events(events),
            enabled=None if enabled is None else bool(enabled),
            description=None if description is None else _description(description), now=utcnow(),
        )  # fmt: skip

    async def delete(self, webhook_id: str, *, tenant: str | None = None) -> None:
        """The endpoint and its deliveries (those still pending are not sent)."""
        check_id(webhook_id, "webhook id")
        await self._engine.store.webhooks.delete(tenant_of(tenant), webhook_id)

    async def deliveries(
        self, webhook_id: str, *, tenant: str | None = None, status: str | None = None, limit: int = 50
    ) -> builtins.list[WebhookDelivery]:
        """The endpoint's most recent deliveries, newest first: status, attempts, last HTTP status and error."""
        check_id(webhook_id, "webhook id")
        check_limit(limit)
        try:
            wanted = None if status is None else DeliveryStatus(status)
        except ValueError:
            raise InputError(
                f"status must be one of {', '.join(s.value for s in DeliveryStatus)}, got {status!r}"
            ) from None
        return await self._engine.store.webhooks.deliveries(tenant_of(tenant), webhook_id, status=wanted, limit=limit)

    async def replay(
        self, delivery_id: str, *, tenant: str | None = None, webhook_id: str | None = None
    ) -> WebhookDelivery:
        """Send a delivery's event again (same event id) as a new delivery, due now (``webhook_id``: only if the
        delivery is that endpoint's)."""
        check_id(delivery_id, "delivery id")
        replayed = await self._engine.store.webhooks.replay(
            tenant_of(tenant), delivery_id, now=utcnow(), endpoint_id=webhook_id
        )
        self._engine._wake_webhooks()
        return replayed

    async def deliver_due(self) -> int:
        """Attempt the deliveries due now in this process (what the background worker does every poll); how many
        were attempted. For tools and tests that run without the worker."""
        return await self._engine._webhook_worker().run_once()
