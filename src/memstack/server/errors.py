"""Every error leaves the server as ``{"error": {"type", "message"}}`` with a status from the typed error tree.

One rule for bad input: **everything wrong with a request is a 400**, whatever caught it: a body that is not UTF-8,
not JSON (or YAML) or nested too deep, a field that fails the endpoint's schema (wrong type, missing, unknown, out of
range: ``fields`` lists each), text no store can keep, or a value memstack refuses (``InputError``), a request that
cannot fit the agent's token budget (``BudgetExceeded``) or that would change an agent's core (``OverrideViolation``).
The ``type`` says which. 422 is never used; the OpenAPI document lists the 400 on every operation that takes input.
Two answers come before the body is read: 413 for one too large, 415 for one not sent as JSON (:mod:`.media`).

=========================  ======  =========================================================
error                      status  when
=========================  ======  =========================================================
``InputError``             400     the request is invalid: unreadable, against the schema (``fields``), or refused
``BudgetExceeded``         400     the untrimmable layers do not fit the agent's token budget (``needed``, ``budget``)
``OverrideViolation``      400     a definition tries to change the agent's core
``Unauthorized``           401     no key, unknown or revoked key
``NotFound``               404     unknown id, or one of another user or tenant (never 403); ``kind``, ``key``
``PayloadTooLarge``        413     the body exceeds the server's limit
``UnsupportedMediaType``   415     a body not sent as JSON (an agent may be YAML), or sent without a content type
``LimitReached``           409     the user's tier is full (``upgrade_prompt``, ``tier``, ``limit`` included)
``SessionConflict``        409     another process took the session over mid-turn; nothing was kept, retry
``RequestInFlight``        409     a request with the same ``Idempotency-Key`` is still being answered (``Retry-After``)
``ImportConflict``         409     an import would change data it does not own (the user differs, others' ids)
``UserErased``             409     the user was erased while the request ran; nothing more of it was kept
``StoreBusy``              503     another writer holds the database (``Retry-After``)
``ProviderError``          502     the chat model's endpoint failed (504 on a timeout)
other ``MemstackError``    500     server-side configuration or storage failure
=========================  ======  =========================================================

A 5xx is the server's or its dependencies' fault, never the request's: no input produces one (fuzzed in the tests).
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from memstack.errors import (
    BudgetExceeded,
    ImportConflict,
    InputError,
    LimitReached,
    MemstackError,
    NotFound,
    OverrideViolation,
    ProviderError,
    ProviderTimeout,
    RequestInFlight,
    SessionConflict,
    StoreBusy,
    StoreUnavailable,
    Unauthorized,
    UserErased,
    redact,
)

__all__ = ["error_response", "install_error_handlers", "response_for", "status_for"]

log = logging.getLogger("memstack.server")

_STATUS: tuple[tuple[type[MemstackError], int], ...] = (
    (Unauthorized, 401),
    (NotFound, 404),
    (ImportConflict, 409),
    (InputError, 400),
    (LimitReached, 409),
    (SessionConflict, 409),
    (RequestInFlight, 409),
    (UserErased, 409),
    (BudgetExceeded, 400),
    (OverrideViolation, 400),
    (StoreBusy, 503),
    (StoreUnavailable, 503),
    (ProviderTimeout, 504),
    (ProviderError, 502),
)

_HTTP_TYPES = {404: "NotFound", 405: "MethodNotAllowed", 401: "Unauthorized", 413: "PayloadTooLarge"}


def status_for(exc: MemstackError) -> int:
    for kind, status in _STATUS:
        if isinstance(exc, kind):
            return status
    return 500


def error_response(
    status: int, kind: str, message: str, /, *, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "message": message, **extra}}, status_code=status, headers=headers)


def _memstack_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MemstackError)
    status = status_for(exc)
    headers: dict[str, str] = {}
    extra: dict[str, Any] = {}
    if isinstance(exc, Unauthorized):
        headers["WWW-Authenticate"] = "Bearer"
    elif isinstance(exc, StoreBusy | StoreUnavailable | SessionConflict | RequestInFlight):
        headers["Retry-After"] = "1"
    elif isinstance(exc, LimitReached):
        extra.update(upgrade_prompt=exc.upgrade_prompt, tier=exc.tier, limit=exc.limit)
    elif isinstance(exc, BudgetExceeded):
        extra.update(needed=exc.needed, budget=exc.budget)
    elif isinstance(exc, NotFound):
        extra.update(kind=exc.kind, key=exc.key)  # what the Python client needs to raise the same NotFound
    if status >= 500:
        log.error("request failed: %s: %s", type(exc).__name__, exc)
        message = _SERVER_SIDE.get(type(exc), _SERVER_FAULT)  # the details (hosts, users, SQL) stay in the log
    else:
        message = _not_found(exc) if isinstance(exc, NotFound) else str(exc)
    return error_response(status, type(exc).__name__, message, headers=headers or None, **extra)


#: What a client is told of a failure on the server's side; the error itself, which may name the database's host,
#: user, socket or schema, goes to the server's log only.
_SERVER_FAULT = "the server could not complete this request; nothing was lost, and its log has the details"
_SERVER_SIDE: dict[type[MemstackError], str] = {
    StoreBusy: "the database is busy with another write; retry in a moment",
    StoreUnavailable: "the database is unavailable right now; retry in a moment (the server's log has the details)",
}

_LISTS = {
    "memory": "GET /v1/users/{user_id}/memories lists a user's memories",
    "agent": "GET /v1/agents lists this tenant's agents",
    "context": "context ids come from chat responses",
    "session": "GET /v1/users/{user_id}/sessions lists a user's sessions",
}


def _not_found(exc: NotFound) -> str:
    """The HTTP wording: the error's own message points at CLI commands, which API clients do not have."""
    hint = _LISTS.get(exc.kind, "check the id")
    return f"no {exc.kind} {exc.key!r} here (ids belong to one tenant and user); {hint}"


def _where(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc if p not in ("body",)] or ["body"]
    return ".".join(parts)


def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError | ValidationError)
    errors: list[Any] = list(exc.errors())
    if any(e.get("type") == "json_invalid" for e in errors):
        detail = next(e for e in errors if e.get("type") == "json_invalid")
        reason = (detail.get("ctx") or {}).get("error", "it does not parse")
        return error_response(400, "InputError", f"the request body is not valid JSON ({reason}); send a JSON object")
    problems = [f"{_where(e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in errors[:10]]
    fields = [{"field": _where(e.get("loc", ())), "problem": str(e.get("msg", "invalid"))} for e in errors[:50]]
    message = "invalid request: " + "; ".join(problems) + ". See /docs for the request schema"
    return error_response(400, "InputError", message, fields=fields)


def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    kind = _HTTP_TYPES.get(exc.status_code, "InputError" if exc.status_code < 500 else "ServerError")
    message = str(exc.detail)
    if exc.status_code == 404 and message == "Not Found":
        message = "no such endpoint; see /docs for the API"
    elif exc.status_code == 405:
        message = "this endpoint does not accept that method; see /docs for the API"
    return error_response(exc.status_code, kind, message, headers=dict(exc.headers or {}) or None)


def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    # Not one of memstack's errors, so its text was never redacted: a driver's may quote a connection string.
    log.error("unexpected error\n%s", redact("".join(traceback.format_exception(exc))))
    return error_response(500, "ServerError", "the server failed unexpectedly; the error was logged")


def response_for(request: Request, exc: Exception) -> JSONResponse:
    """The response the installed handlers give for ``exc`` (for code that answers outside the router)."""
    if isinstance(exc, MemstackError):
        return _memstack_error(request, exc)
    if isinstance(exc, RequestValidationError | ValidationError):
        return _validation_error(request, exc)
    if isinstance(exc, StarletteHTTPException):
        return _http_error(request, exc)
    return _unexpected(request, exc)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(MemstackError, _memstack_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(ValidationError, _validation_error)  # bodies validated in a route (search)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
