"""What operators watch: ``GET /metrics`` (Prometheus), the request histogram behind it, and ``GET /v1/usage``.

**Who may scrape.** The metrics describe every tenant of the process (their turn counts, model tokens and costs,
under a tenant label), so a tenant's API key never opens them. With ``metrics_token`` set
(``$MEMSTACK_METRICS_TOKEN``), ``/metrics`` needs ``Authorization: Bearer <that token>`` (Prometheus:
``authorization: {credentials: …}`` in the scrape config), in every auth mode. Without it, a local server (auth
``local``, or ``auto`` before any key exists: loopback only) serves them to anyone on the machine, and a server
that requires keys answers 403 saying to set the token. ``/metrics`` is not in the OpenAPI document: it is not part
of the API a client programs against.

**Requests.** :class:`RequestMetrics` wraps the whole app and observes each request's duration under the template
of the route that answered (``/v1/users/{user_id}/memories``, never the raw path), its method and its status class.
A streamed answer (server-sent events) counts until its last byte.

``GET /v1/usage`` is the caller's tenant's model usage, by role and model, since this process started
(:mod:`memstack.observe.usage`); a user's is in ``GET /v1/users/{user_id}/usage``.
"""

from __future__ import annotations

import hmac
import time
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memstack.errors import Unauthorized
from memstack.observe.metrics import PrometheusMetrics, route_label
from memstack.server.errors import error_response
from memstack.server.schemas import ErrorOut, TenantUsageOut
from memstack.server.state import CallerDep, ServerState, StateDep
from memstack.server.wire import json_response, total_cost

__all__ = ["ROUTE_KEY", "RequestMetrics", "router"]

#: A scope key naming the route template of a request answered outside the router (the search fast path).
ROUTE_KEY = "memstack.route"

router = APIRouter(tags=["meta"])


class RequestMetrics:
    """Observes every HTTP request in ``metrics`` (route template, method, status class, seconds)."""

    def __init__(self, app: ASGIApp, metrics: PrometheusMetrics) -> None:
        self._app = app
        self._metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # an exception before the response started is answered 500 by the server

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self._app(scope, receive, sending)
        finally:
            route = scope.get(ROUTE_KEY) or route_label(scope.get("route"))
            self._metrics.request(route, scope["method"], status, time.perf_counter() - started)


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    st: ServerState = request.app.state.memstack
    token = st.settings.metrics_token
    if token:
        scheme, _, given = (request.headers.get("authorization") or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
            raise Unauthorized("/metrics needs 'Authorization: Bearer <the metrics token>' ($MEMSTACK_METRICS_TOKEN)")
    elif not st.keys.local:
        return error_response(
            403,
            "Forbidden",
            "/metrics describes every tenant, so API keys do not open it; set $MEMSTACK_METRICS_TOKEN on the server "
            "and scrape with 'Authorization: Bearer <that token>'",
        )
    body, content_type = request.app.state.metrics.exposition()
    return Response(body, media_type=content_type)


@router.get(
    "/v1/usage",
    response_model=TenantUsageOut,
    responses={401: {"model": ErrorOut}},
    summary="The caller's tenant's model calls: tokens and estimated cost by role and model",
)
async def tenant_usage(st: StateDep, caller: CallerDep) -> Response:
    telemetry = st.engine.telemetry
    models = telemetry.usage.tenant(caller.tenant)
    body: dict[str, Any] = {
        "tenant": caller.tenant,
        "since": telemetry.usage.since.isoformat(),
        "models": [m.to_dict() for m in models],
        "cost_usd": total_cost(models),
    }
    return json_response(body)
