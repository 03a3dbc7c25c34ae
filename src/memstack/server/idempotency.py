"""Idempotent HTTP writes: a request sent with ``Idempotency-Key: K`` is done once, however often it is retried.

The writes (``POST /v1/users/{user_id}/memories``, ``PATCH`` and ``DELETE …/memories/{memory_id}``,
``POST …/restore``, ``POST /v1/chat``, ``/v1/delegate``, ``/v1/chat/completions``, ``POST …/ingest``,
``POST /v1/sessions/{session_id}/end``) run through :func:`idempotent`:

* without the header a request runs as always;
* the first request with a key claims it in the store (``store.idempotency``: every server process sharing the
  database sees the claim, and it survives a restart), runs, and its answer (status and body) is kept for
  ``ServerSettings.idempotency_ttl_s`` (a day);
* a retry with the same key and the same request (method, path, query, and the JSON body, whatever its spacing and
  key order; a repeated query parameter's values in the order sent, since a route reads the last) is answered
  with the kept answer and ``Idempotent-Replayed: true``, without the work being done again;
* the same key with another request: 400 (``InputError``) saying so; use a new key for a new request;
* a retry while the first request is still being answered: 409 (``RequestInFlight``) with ``Retry-After``;
* answers that ask for a retry (409: a session conflict, a full tier; 5xx) are not kept: the claim is released and
  a retry runs the request anew. Every other answer, 4xx included, is kept;
* a streamed chat turn is kept as the whole event stream it sent, once it ended (not with an error event), and
  replayed as one stream; a stream cut short (the client went away) releases the claim;
* a temporary chat (``"temporary": true``) is never kept, since nothing about it may be stored: the header is
  ignored for it;
* a claim whose process died mid-request stays in flight for ``idempotency_stale_s`` (10 minutes); after that the
  same request, retried, runs again.

Keys are 1-255 printable ASCII characters, scoped to the caller's tenant (two tenants may use the same key); a
kept answer belongs to the user the request names and is erased with them. Expired answers are deleted by
:func:`sweep_forever`, which the app runs in the background.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import Annotated
from urllib.parse import parse_qsl

from fastapi import Header, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from starlette.responses import Response, StreamingResponse

from memstack.engine import KeptAnswers
from memstack.errors import InputError, MemstackError, RequestInFlight, StoreError
from memstack.server.errors import response_for
from memstack.server.state import ServerState
from memstack.types import StoredResponse, UserRef, utcnow

__all__ = [
    "HEADER",
    "REPLAYED",
    "IdempotencyKey",
    "canonical_query",
    "fingerprint",
    "idempotent",
    "kept_status",
    "recorded",
    "settle",
    "sweep_forever",
]

log = logging.getLogger("memstack.server")

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"

#: The header as a route parameter (documented in the OpenAPI document with each route that honours it).
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias=HEADER,
        min_length=1,
        max_length=255,
        description="Makes a retry safe: the first request with a key is done once and its answer kept a day; a "
        "retry with the same key and request gets that answer (Idempotent-Replayed: true), the same key with another "
        "request a 400, a retry while the first is still running a 409 with Retry-After. 1-255 printable ASCII "
        "characters, e.g. a UUID, new for each new request.",
    ),
]

_ERROR_EVENTS = (b"event: error", b'data: {"error"')
_FINAL_EVENTS = (
    b"event: done",
    b"data: [DONE]",
)  # a /v1/chat stream's last event; a completions stream's  # a /v1/chat stream's error event; a completions stream's
_pending: set[asyncio.Task[None]] = set()  # claims being settled after a stream ended


def _check_key(key: str) -> None:
    if not 1 <= len(key) <= 255 or not all(" " <= c <= "~" for c in key):
        raise InputError(f"the {HEADER} header must be 1-255 printable ASCII characters, e.g. a UUID")


def canonical_query(query: str) -> str:
    """The query string as the routes read it: its parameters decoded, ordered by name, and a repeated name's values
    in the order sent. Two parameters with different names may come in either order (no route reads them in
    order), but ``?permanent=true&permanent=false`` is not ``?permanent=false&permanent=true``: a route reads the
    last value of a repeated name, so those are a soft delete and a permanent one."""
    pairs = parse_qsl(query, keep_blank_values=True)
    return json.dumps(sorted(pairs, key=lambda pair: pair[0]), ensure_ascii=False, separators=(",", ":"))


async def fingerprint(request: Request) -> str:
    """What makes two requests the same: method, path, query (:func:`canonical_query`) and body (JSON compared as
    data: spacing and key order aside)."""
    raw = await request.body()
    try:
        body = json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    except ValueError:
        body = raw
    query = canonical_query(request.url.query)
    digest = hashlib.sha256()
    for part in (request.method.encode(), request.url.path.encode(), query.encode(), body):
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def kept_status(status: int) -> bool:
    """Whether an answer is kept: not one that asks for a retry (409: a session conflict, a full tier; 5xx)."""
    return status < 500 and status != 409


def _replay(found: StoredResponse, fingerprint: str) -> Response:
    if found.fingerprint != fingerprint:
        raise InputError(
            f"this {HEADER} was already used for a different request (another method, path, query or body) in the "
            "last day; send a new key with each new request, and the same key only to retry the same request"
        )
    if found.pending or found.status is None:
        raise RequestInFlight(
            f"the first request with this {HEADER} is still being answered; retry in a moment to get its answer"
        )
    return Response(found.body, found.status, headers={REPLAYED: "true"}, media_type=found.content_type or None)


async def idempotent(
    request: Request,
    st: ServerState,
    user: UserRef,
    key: str | None,
    work: Callable[[], Awaitable[Response]],
    *,
    keep: bool = True,
) -> Response:
    """The answer of ``work()`` for ``user``'s request, done once per idempotency ``key`` (the header's value; see
    the module docstring). ``keep=False``: never kept (a temporary chat), the key is ignored."""
    if key is None or not keep:
        return await work()
    _check_key(key)
    fp = await fingerprint(request)
    store = st.engine.answers
    settings = st.settings
    found = await store.claim(
        user, key, fp, now=utcnow(), ttl_s=settings.idempotency_ttl_s, stale_s=settings.idempotency_stale_s
    )
    if found is not None:
        return _replay(found, fp)
    try:
        response = await work()
    except (MemstackError, RequestValidationError, ValidationError) as exc:  # answered as the app's handlers do
        response = response_for(request, exc)
    except BaseException:
        await settle(store, user, key, fp, None)
        raise
    if isinstance(response, StreamingResponse):
        response.body_iterator = recorded(response.body_iterator, store, user, key, fp)
        return response
    kept = (response.status_code, bytes(response.body), response.media_type or "application/json")
    await settle(store, user, key, fp, kept if kept_status(response.status_code) else None)
    return response


async def settle(store: KeptAnswers, user: UserRef, key: str, fp: str, answer: tuple[int, bytes, str] | None) -> None:
    """Keep the answer (or release the claim). A store failure here is logged, not raised: the request itself is
    done, and its caller gets its answer (a retry then waits for the claim to go stale)."""
    try:
        if answer is None:
            await store.release(user, key, fp)
        else:
            await store.complete(user, key, fp, *answer)
    except StoreError as exc:
        log.warning("the answer under an %s was not kept: %s: %s", HEADER, type(exc).__name__, exc)


async def recorded(
    chunks: AsyncIterable[str | bytes | memoryview], store: KeptAnswers, user: UserRef, key: str, fp: str
) -> AsyncIterator[bytes]:
    """The stream as it is sent, kept whole once it ended without an error event; released otherwise. Settled in a
    task of its own: a stream cut short is cancelled, and the store call must not be.

    The stream's last event (``event: done``, ``data: [DONE]``) is sent only once the answer is kept: a client that
    read the whole stream and retries at once finds it, not a claim still in flight."""
    sent: list[bytes] = []
    whole = failed = kept = False
    try:
        async for chunk in chunks:
            data = chunk.encode() if isinstance(chunk, str) else bytes(chunk)
            failed = failed or data.startswith(_ERROR_EVENTS)
            sent.append(data)
            if not failed and not kept and data.startswith(_FINAL_EVENTS):
                kept = True
                await asyncio.shield(_settle_later(store, user, key, fp, (200, b"".join(sent), "text/event-stream")))
            yield data
        whole = True
    finally:
        if not kept:
            _settle_later(
                store, user, key, fp, (200, b"".join(sent), "text/event-stream") if whole and not failed else None
            )


def _settle_later(
    store: KeptAnswers, user: UserRef, key: str, fp: str, answer: tuple[int, bytes, str] | None
) -> asyncio.Task[None]:
    task = asyncio.ensure_future(settle(store, user, key, fp, answer))
    _pending.add(task)
    task.add_done_callback(_pending.discard)
    return task


async def sweep_forever(store: KeptAnswers, every_s: float, clock: Callable[[], datetime] = utcnow) -> None:
    """Delete expired answers now and every ``every_s`` seconds (run by the app's lifespan)."""
    while True:
        try:
            if swept := await store.sweep(now=clock()):
                log.info("deleted %d expired answers kept under an %s", swept, HEADER)
        except StoreError as exc:
            log.warning("expired idempotency records not swept: %s: %s", type(exc).__name__, exc)
        await asyncio.sleep(every_s)
