"""The FastAPI application: :func:`create_app` builds it around an engine; its lifespan opens and closes the engine.

::

    from memstack.server import create_app
    app = create_app(Config.resolve(home="data"))   # or create_app(AsyncMemstack(...)); run with uvicorn
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import unquote_to_bytes

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memstack.collector import keep_collector
from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.errors import InputError, MemstackError
from memstack.server import agents, chat, contexts, memories, openai_compat, recall, sessions, users, webhooks
from memstack.server import metrics as server_metrics
from memstack.server.auth import KeyCache
from memstack.server.docs import mount_docs
from memstack.server.embedding import QueryEmbedder
from memstack.server.errors import error_response, install_error_handlers, response_for
from memstack.server.hosts import LoopbackHosts
from memstack.server.idempotency import sweep_forever
from memstack.server.media import JsonBodies
from memstack.server.metrics import ROUTE_KEY, RequestMetrics
from memstack.server.schemas import ErrorOut, SearchIn, WhoAmIOut
from memstack.server.settings import AuthMode, ServerSettings
from memstack.server.state import CallerDep, ServerState
from memstack.server.ui import mount_ui
from memstack.server.wire import MemoryFragments
from memstack.types import check_data, check_text

__all__ = ["AUTH_ENV", "app_from_env", "create_app"]

#: How ``memstack serve --workers N`` tells each worker process the auth mode it chose (an internal variable).
AUTH_ENV = "MEMSTACK_SERVER_AUTH"

_DESCRIPTION = """Long-term memory, session memory and layered context for LLM apps.

Every request carries `Authorization: Bearer KEY` (create one with `memstack keys create --tenant NAME`); the key's
tenant scopes every call, and user ids are namespaced per tenant. Errors are `{"error": {"type", "message"}}`.
Writes take an optional `Idempotency-Key` header: a retry with the same key gets the first answer
(`Idempotent-Replayed: true`) and the work is done once.
"""


_OPEN: dict[str, Any] = {"security": []}  # endpoints that need no key


class _SearchFastPath:
    """``POST /v1/users/{user_id}/memories/search`` goes straight to its handler, past FastAPI's router and its
    middleware, which cost about as much CPU per search as the search itself (``memstack bench http`` reports the
    server's CPU per request: 0.54 ms through the router, 0.41 ms on this path, on the same shared machine).
    Same handler, same errors (``errors.response_for``); the route stays registered for the OpenAPI document."""

    _PREFIX, _SUFFIX = "/v1/users/", "/memories/search"

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and scope["method"] == "POST" and path.endswith(self._SUFFIX):
            user_id = path[len(self._PREFIX) : -len(self._SUFFIX)] if path.startswith(self._PREFIX) else ""
            if user_id and "/" not in user_id:  # what the router's {user_id} would match
                scope["path_params"] = {"user_id": user_id}
                scope[ROUTE_KEY] = self._PREFIX + "{user_id}" + self._SUFFIX  # the route's template, for metrics
                request = Request(scope, receive)
                try:
                    response = await memories.search_memories(request)
                except (MemstackError, ValidationError) as exc:  # as the app's handlers map them; anything
                    response = response_for(request, exc)  # else reaches the server-error handler (500)
                await response(scope, receive, send)
                return
        await self._app(scope, receive, send)


class _BodyLimit:
    """413 for request bodies over ``limit`` bytes, declared (Content-Length) or streamed (chunked)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self._app = app
        self._limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                if not value.isdigit() or int(value) > self._limit:
                    await self._reject(scope, receive, send)
                    return
                # A declared length within the limit bounds the body: the HTTP parser reads no more than it.
                await self._app(scope, receive, send)
                return
        # Chunked (no declared length): read the body first, bounded, then replay it, so the app never sees part
        # of an oversized body.
        chunks: list[bytes] = []
        seen = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self._limit:
                await self._reject(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self._app(scope, replay, send)

    async def _reject(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413, "PayloadTooLarge", f"the request body is larger than {self._limit} bytes; send less at once"
        )
        await response(scope, receive, send)


class _StorableText:
    """400 for text no store can keep, anywhere in a request: a body that is not UTF-8, a NUL or a lone surrogate in
    the URL's path or query (or percent-escapes that are not UTF-8), or in any string or key of a JSON body. Every
    route answers alike, for fields it stores and fields it ignores; the engine checks the same
    (``memstack.types.check_text``) for Python and CLI callers. A JSON body is parsed here only when it has ``\\u``
    escapes: raw NUL is not valid JSON and raw surrogates are not valid UTF-8, so without escapes there is nothing
    to find."""

    _BODIES = frozenset({"POST", "PUT", "PATCH"})

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        try:
            _check_url(scope)
        except InputError as exc:
            await error_response(400, "InputError", str(exc))(scope, receive, send)
            return
        if scope["method"] not in self._BODIES:
            await self._app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:  # bounded: _BodyLimit, outside this, refused larger bodies
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            _check_body(body)
        except InputError as exc:
            await error_response(400, "InputError", str(exc))(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self._app(scope, replay, send)


def _check_body(body: bytes) -> None:
    """Every body memstack accepts (JSON, YAML) is UTF-8 text with nothing unstorable in its escapes."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = body[exc.start : exc.start + 1].hex()
        raise InputError(
            f"the request body is not UTF-8 text (byte 0x{bad} at offset {exc.start}); "
            "encode the body as UTF-8, which JSON requires"
        ) from None
    if b"\\u" not in body:
        return
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # not JSON (or YAML, or nested too deep): the route answers it
        return
    check_data(data, "body")


def _check_url(scope: Scope) -> None:
    raw_path = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "surrogatepass")
    for what, raw in (("the URL path", raw_path), ("the query string", scope.get("query_string", b""))):
        if b"%" not in raw and b"\x00" not in raw:
            continue
        try:
            text = unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{what} has percent-escapes that are not UTF-8 text (byte {exc.start}); "
                "encode every character as UTF-8 before escaping it"
            ) from None
        check_text(text, what)


def create_app(
    engine_or_config: AsyncMemstack | Config | None = None, *, settings: ServerSettings | None = None
) -> FastAPI:
    """The HTTP API around ``engine_or_config`` (an engine, a config, or ``None`` for ``Config.resolve()``).

    The app's lifespan opens the engine if it is not open yet, and closes it at shutdown if it opened it."""
    if isinstance(engine_or_config, AsyncMemstack):
        engine = engine_or_config
    else:
        engine = AsyncMemstack(engine_or_config) if engine_or_config is not None else AsyncMemstack()
    settings = settings or ServerSettings()
    from memstack.observe.metrics import PrometheusMetrics  # imports prometheus-client: here, not at import

    metrics = PrometheusMetrics(tenants=settings.metrics_tenants)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = not engine.is_open
        if owned:
            await engine.open()
        queries = QueryEmbedder(engine.embedder, cache_size=settings.query_cache, max_batch=settings.query_batch)
        keys = KeyCache(engine.keys, ttl_s=settings.key_cache_s, mode=settings.auth)
        # Tenants other than the operator name webhook URLs only where keys are asked (serve binds the others to
        # this machine): there a URL reaching a private address is refused unless webhooks_allow_private says so.
        engine.webhooks.local = settings.auth != "keys"
        app.state.memstack = ServerState(engine, settings, keys, queries, MemoryFragments())
        metrics.attach(engine.telemetry)
        keeper = asyncio.create_task(keep_collector(settings.gc_freeze_s)) if settings.gc_freeze_s else None
        sweeper = asyncio.create_task(sweep_forever(engine.answers, settings.idempotency_sweep_s))
        try:
            yield
        finally:
            for task in (keeper, sweeper):
                if task is not None:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
            await queries.aclose()
            if owned:
                await engine.aclose()
            metrics.detach(engine.telemetry)

    app = FastAPI(
        title="memstack",
        version=_version(),
        description=_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # served by mount_docs, without a CDN
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.metrics = metrics
    install_error_handlers(app)
    mount_docs(app, title="memstack")
    app.include_router(server_metrics.router)
    app.include_router(memories.router)
    app.include_router(recall.router)
    app.include_router(agents.router)
    app.include_router(sessions.router)
    app.include_router(contexts.router)
    app.include_router(users.listing)
    app.include_router(users.router)
    app.include_router(chat.router)
    app.include_router(openai_compat.router)
    app.include_router(webhooks.router)
    mount_ui(app)  # the web UI at /
    app.add_middleware(_SearchFastPath)
    app.add_middleware(_StorableText)
    app.add_middleware(JsonBodies)  # outside _StorableText: a refused body is never read
    app.add_middleware(_BodyLimit, limit=settings.max_body_bytes)
    if settings.auth != "keys":
        app.add_middleware(LoopbackHosts)  # outermost but one, before anything reads the request
    app.add_middleware(RequestMetrics, metrics=metrics)  # outermost: every request is timed, refused ones too

    @app.get("/healthz", tags=["meta"], summary="Liveness: 200 when the server answers", openapi_extra=_OPEN)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/v1/whoami",
        tags=["meta"],
        response_model=WhoAmIOut,
        responses={401: {"model": ErrorOut}},
        summary="The caller's tenant (the API key's; default in local mode without a key)",
    )
    async def whoami(caller: CallerDep) -> dict[str, str | None]:
        return {"tenant": caller.tenant, "key_id": caller.key_id}

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            schema.setdefault("components", {})["securitySchemes"] = {
                "bearer": {"type": "http", "scheme": "bearer", "description": "memstack keys create --tenant NAME"}
            }
            schema["security"] = [{"bearer": []}]
            _add_model(schema, SearchIn)  # the search route validates its body itself (memories.py)
            _document_bad_input(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def app_from_env() -> FastAPI:
    """The app of one worker process of ``memstack serve --workers N`` (uvicorn's factory): the configuration from
    ``MEMSTACK_*`` variables, the auth mode the parent chose from ``MEMSTACK_SERVER_AUTH``."""
    import os

    from memstack.errors import redact_log_records

    redact_log_records()  # a worker process of its own: as the parent does (memstack.cli)
    given = os.environ.get(AUTH_ENV)
    mode: AuthMode = given if given in ("local", "auto") else "keys"  # type: ignore[assignment]
    return create_app(Config.resolve(), settings=ServerSettings.from_env(auth=mode, gc_freeze_s=10.0))


_BAD_INPUT = (
    "Bad input: the body is not UTF-8 or not JSON, a field fails this schema (`fields` lists each), or a value is "
    "refused (`InputError`, `BudgetExceeded`, `OverrideViolation`). Every invalid request is a 400; 422 is not used."
)


_UNSUPPORTED = (
    "The body is not sent as JSON (Content-Type: application/json; an agent definition may also be "
    "application/yaml), or has no content type at all (`memstack.server.media`)."
)


def _document_bad_input(schema: dict[str, Any]) -> None:
    """The status rule of :mod:`memstack.server.errors` in the document: FastAPI lists a 422 for request validation
    on every operation with input; memstack answers those with 400, so each such operation lists the 400 instead."""
    error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}}
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            responses = operation.get("responses", {})
            responses.pop("422", None)
            if operation.get("parameters") or operation.get("requestBody") or "400" in responses:
                responses["400"] = {**responses.get("400", error), "description": _BAD_INPUT}
            if operation.get("requestBody"):
                responses["415"] = {**error, "description": _UNSUPPORTED}
    models = schema.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        models.pop(unused, None)


def _add_model(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """Publish ``model`` under ``components/schemas`` (with the models it refers to)."""
    body = model.model_json_schema(ref_template="#/components/schemas/{model}")
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.update(body.pop("$defs", {}))
    components[model.__name__] = body


def _version() -> str:
    from memstack import __version__

    return __version__
