"""``/v1/webhooks``: the caller's tenant's webhook endpoints, their recent deliveries, and replays
(``docs/webhooks.md``; everything goes through ``engine.webhooks``).

The signing secret is in the answer to ``POST /v1/webhooks`` only. A URL memstack will not call (not http(s), or a
private address where the deployment does not allow one) is a 400 whose message says what to do
(:class:`~memstack.errors.WebhookRefused`); an unknown id, or another tenant's, is a 404.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from memstack.server.schemas import ErrorOut
from memstack.server.state import CallerDep, StateDep
from memstack.server.wire import json_response
from memstack.types import EVENT_TYPES, WebhookDelivery, WebhookEndpoint

__all__ = ["delivery_json", "endpoint_json", "router"]

_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (400, 401, 404, 413)}

router = APIRouter(prefix="/v1/webhooks", tags=["webhooks"], responses=_ERRORS)

WebhookId = Annotated[str, Path(min_length=1, max_length=200)]
_EVENTS_DOC = f"Event types to receive (default: all): {', '.join(EVENT_TYPES)}"


class WebhookIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str = Field(min_length=1, max_length=2048, description="Where to POST events: http(s)://…")
    events: list[str] | None = Field(default=None, description=_EVENTS_DOC)
    description: str = Field(default="", max_length=500)
    enabled: bool = True


class WebhookPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str | None = Field(default=None, min_length=1, max_length=2048)
    events: list[str] | None = Field(default=None, description=_EVENTS_DOC)
    description: str | None = Field(default=None, max_length=500)
    enabled: bool | None = None


class WebhookOut(BaseModel):
    id: str
    url: str
    events: list[str]
    enabled: bool
    description: str
    created_at: str
    updated_at: str
    secret: str | None = Field(default=None, description="The signing secret: only in the answer to a create")


class WebhookList(BaseModel):
    webhooks: list[WebhookOut]


class DeliveryOut(BaseModel):
    id: str
    event_id: str
    webhook_id: str
    type: str
    user_id: str
    occurred_at: str
    status: str
    attempts: int
    next_attempt_at: str | None
    last_status: int | None
    last_error: str | None
    created_at: str
    delivered_at: str | None
    payload: dict[str, Any]


class DeliveryList(BaseModel):
    deliveries: list[DeliveryOut]


def endpoint_json(endpoint: WebhookEndpoint) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": endpoint.id,
        "url": endpoint.url,
        "events": list(endpoint.events),
        "enabled": endpoint.enabled,
        "description": endpoint.description,
        "created_at": endpoint.created_at.isoformat(),
        "updated_at": endpoint.updated_at.isoformat(),
    }
    if endpoint.secret is not None:
        out["secret"] = endpoint.secret
    return out


def delivery_json(delivery: WebhookDelivery) -> dict[str, Any]:
    def when(value: Any) -> str | None:
        return None if value is None else str(value.isoformat())

    return {
        "id": delivery.id,
        "event_id": delivery.event_id,
        "webhook_id": delivery.endpoint_id,
        "type": delivery.type,
        "user_id": delivery.user_id,
        "occurred_at": delivery.occurred_at.isoformat(),
        "status": delivery.status.value,
        "attempts": delivery.attempts,
        "next_attempt_at": when(delivery.next_attempt_at),
        "last_status": delivery.last_status,
        "last_error": delivery.last_error,
        "created_at": delivery.created_at.isoformat(),
        "delivered_at": when(delivery.delivered_at),
        "payload": dict(delivery.payload),
    }


@router.post("", status_code=201, response_model=WebhookOut, summary="Add an endpoint (its secret is shown once)")
async def create_webhook(st: StateDep, caller: CallerDep, body: WebhookIn) -> Response:
    endpoint = await st.engine.webhooks.create(
        body.url, events=body.events, tenant=caller.tenant, description=body.description, enabled=body.enabled
    )
    return json_response(endpoint_json(endpoint), status=201)


@router.get("", response_model=WebhookList, summary="The tenant's endpoints")
async def list_webhooks(st: StateDep, caller: CallerDep) -> Response:
    found = await st.engine.webhooks.list(tenant=caller.tenant)
    return json_response({"webhooks": [endpoint_json(e) for e in found]})


@router.get("/{webhook_id}", response_model=WebhookOut, summary="One endpoint")
async def get_webhook(st: StateDep, caller: CallerDep, webhook_id: WebhookId) -> Response:
    return json_response(endpoint_json(await st.engine.webhooks.get(webhook_id, tenant=caller.tenant)))


@router.patch("/{webhook_id}", response_model=WebhookOut, summary="Change an endpoint's URL, events or state")
async def update_webhook(st: StateDep, caller: CallerDep, webhook_id: WebhookId, body: WebhookPatch) -> Response:
    endpoint = await st.engine.webhooks.update(
        webhook_id, tenant=caller.tenant, url=body.url, events=body.events, enabled=body.enabled,
        description=body.description,
    )  # fmt: skip
    return json_response(endpoint_json(endpoint))


@router.delete("/{webhook_id}", status_code=204, summary="Delete an endpoint and its deliveries")
async def delete_webhook(st: StateDep, caller: CallerDep, webhook_id: WebhookId) -> Response:
    await st.engine.webhooks.delete(webhook_id, tenant=caller.tenant)
    return Response(status_code=204)


@router.get("/{webhook_id}/deliveries", response_model=DeliveryList, summary="An endpoint's recent deliveries")
async def list_deliveries(
    st: StateDep,
    caller: CallerDep,
    webhook_id: WebhookId,
    status: Annotated[str | None, Query(description="pending, delivered or failed")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> Response:
    found = await st.engine.webhooks.deliveries(webhook_id, tenant=caller.tenant, status=status, limit=limit)
    return json_response({"deliveries": [delivery_json(d) for d in found]})


DeliveryId = Annotated[str, Path(min_length=1, max_length=200)]


@router.post(
    "/deliveries/{delivery_id}/replay",
    status_code=202,
    response_model=DeliveryOut,
    summary="Send a delivery's event again (same event id), as a new delivery",
)
async def replay(st: StateDep, caller: CallerDep, delivery_id: DeliveryId) -> Response:
    replayed = await st.engine.webhooks.replay(delivery_id, tenant=caller.tenant)
    return json_response(delivery_json(replayed), status=202)


@router.post(
    "/{webhook_id}/deliveries/{delivery_id}/replay",
    status_code=202,
    response_model=DeliveryOut,
    summary="Replay one of this endpoint's deliveries",
)
async def replay_delivery(st: StateDep, caller: CallerDep, webhook_id: WebhookId, delivery_id: DeliveryId) -> Response:
    replayed = await st.engine.webhooks.replay(delivery_id, tenant=caller.tenant, webhook_id=webhook_id)
    return json_response(delivery_json(replayed), status=202)
