"""The client's ``webhooks``: the engine's namespace of that name (:mod:`memstack.engine._webhooks`) answered by
``/v1/webhooks``, with the same methods, parameters and types, for the tenant of the client's key."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote

from memstack.client._namespaces import _Remote
from memstack.errors import MalformedResponse
from memstack.types import DeliveryStatus, WebhookDelivery, WebhookEndpoint

__all__ = ["RemoteWebhooks"]


def _seg(value: str) -> str:
    return quote(value, safe="")


def _when(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


def _endpoint(data: Mapping[str, Any], tenant: str) -> WebhookEndpoint:
    try:
        return WebhookEndpoint(
            str(data["id"]), tenant, str(data["url"]), tuple(data["events"]), bool(data["enabled"]),
            str(data["description"]), datetime.fromisoformat(data["created_at"]),
            datetime.fromisoformat(data["updated_at"]), data.get("secret"),
        )  # fmt: skip
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedResponse(f"a webhook the server sent is malformed: {exc!r}", status=200) from None


def _delivery(data: Mapping[str, Any], tenant: str) -> WebhookDelivery:
    try:
        return WebhookDelivery(
            str(data["id"]), str(data["event_id"]), str(data["webhook_id"]), tenant, str(data["user_id"]),
            str(data["type"]), datetime.fromisoformat(data["occurred_at"]), dict(data["payload"]),
            DeliveryStatus(data["status"]), int(data["attempts"]), _when(data["next_attempt_at"]),
            data["last_status"], data["last_error"], datetime.fromisoformat(data["created_at"]),
            _when(data["delivered_at"]),
        )  # fmt: skip
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedResponse(f"a webhook delivery the server sent is malformed: {exc!r}", status=200) from None


class RemoteWebhooks(_Remote):
    """The tenant's webhook endpoints and their deliveries (``/v1/webhooks``)."""

    async def create(
        self,
        url: str,
        *,
        events: Iterable[str] | None = None,
        tenant: str | None = None,
        description: str = "",
        enabled: bool = True,
    ) -> WebhookEndpoint:
        ten = await self._tenant(tenant)
        body = {"url": url, "events": None if events is None else list(events), "description": description}
        data = await self._http.request("POST", "/v1/webhooks", json_body={**body, "enabled": enabled})
        return _endpoint(data, ten)

    async def list(self, *, tenant: str | None = None) -> builtins.list[WebhookEndpoint]:
        ten = await self._tenant(tenant)
        data = await self._http.request("GET", "/v1/webhooks")
        return [_endpoint(e, ten) for e in data["webhooks"]]

    async def get(self, webhook_id: str, *, tenant: str | None = None) -> WebhookEndpoint:
        ten = await self._tenant(tenant)
        return _endpoint(await self._http.request("GET", f"/v1/webhooks/{_seg(webhook_id)}"), ten)

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
        ten = await self._tenant(tenant)
        given = {"url": url, "events": None if events is None else list(events), "enabled": enabled}
        body = {k: v for k, v in {**given, "description": description}.items() if v is not None}
        data = await self._http.request("PATCH", f"/v1/webhooks/{_seg(webhook_id)}", json_body=body)
        return _endpoint(data, ten)

    async def delete(self, webhook_id: str, *, tenant: str | None = None) -> None:
        await self._tenant(tenant)
        await self._http.request("DELETE", f"/v1/webhooks/{_seg(webhook_id)}")

    async def deliveries(
        self, webhook_id: str, *, tenant: str | None = None, status: str | None = None, limit: int = 50
    ) -> builtins.list[WebhookDelivery]:
        ten = await self._tenant(tenant)
        params = {"limit": limit, **({"status": status} if status is not None else {})}
        data = await self._http.request("GET", f"/v1/webhooks/{_seg(webhook_id)}/deliveries", params=params)
        return [_delivery(d, ten) for d in data["deliveries"]]

    async def replay(
        self, delivery_id: str, *, tenant: str | None = None, webhook_id: str | None = None
    ) -> WebhookDelivery:
        ten = await self._tenant(tenant)
        scope = "" if webhook_id is None else f"/{_seg(webhook_id)}"
        data = await self._http.request("POST", f"/v1/webhooks{scope}/deliveries/{_seg(delivery_id)}/replay")
        return _delivery(data, ten)
