"""The transport: one ``httpx.AsyncClient`` per client, and the error bodies of the server turned back into the
library's typed errors, so code that catches them works the same against the embedded library and a server.

The server answers every error as ``{"error": {"type", "message", …}}`` (:mod:`memstack.server.errors`)::

    401                 → Unauthorized
    404                 → NotFound (kind and key from the body)
    400, 413            → InputError (BudgetExceeded and OverrideViolation by their type; any other 4xx too)
    409                 → LimitReached (tier, limit), RequestInFlight, UserErased or SessionConflict / LeaseLost
                          (by type)
    502, 504            → ProviderError, ProviderTimeout (status and body kept)
    503                 → StoreBusy or StoreUnavailable, by type
    other 5xx           → StoreError
    no answer at all    → StoreUnavailable (the server is this client's store: it cannot be reached)

Retries are safe: every request other than a ``GET`` carries an ``Idempotency-Key`` generated for that call, and a
retry of the call sends the same key, so the server does the work once and answers the retry with the first answer
(:mod:`memstack.server.idempotency`). A call is retried, up to ``retries`` times, when no answer came (the
connection failed or dropped, or the answer did not arrive in time) and when the server asks for it (503 with
``Retry-After``); while the first attempt is still being answered (409 ``RequestInFlight``) the retry waits for it,
as long as one request may take (``timeout``). A stream is retried only before its first byte was handed on.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx

from memstack.errors import (
    BudgetExceeded,
    ImportConflict,
    ImportRefused,
    InputError,
    LeaseLost,
    LimitReached,
    MalformedResponse,
    MemstackError,
    NotFound,
    OverrideViolation,
    ProviderError,
    ProviderTimeout,
    RequestInFlight,
    SessionConflict,
    StoreBusy,
    StoreError,
    StoreUnavailable,
    Unauthorized,
    UserErased,
    WebhookRefused,
)

__all__ = ["IDEMPOTENCY_HEADER", "Transport", "error_from"]

IDEMPOTENCY_HEADER = "Idempotency-Key"
#: Seconds before the first retry after a failed connection (doubled each time); a server's Retry-After wins.
_BACKOFF_S = 0.25

#: Error types whose class takes the server's message as it is.
_BY_TYPE: dict[str, type[MemstackError]] = {
    "Unauthorized": Unauthorized,
    "InputError": InputError,
    "ImportRefused": ImportRefused,
    "ImportConflict": ImportConflict,
    "OverrideViolation": OverrideViolation,
    "SessionConflict": SessionConflict,
    "LeaseLost": LeaseLost,
    "RequestInFlight": RequestInFlight,
    "UserErased": UserErased,
    "WebhookRefused": WebhookRefused,
    "StoreBusy": StoreBusy,
    "StoreUnavailable": StoreUnavailable,
}


def _with_message(exc: MemstackError, message: str) -> MemstackError:
    exc.args = (message,)  # the server's wording (it names HTTP routes, not CLI commands)
    return exc


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def error_from(status: int, body: Any, text: str = "") -> MemstackError:
    """The library error for one error response (``body``: its parsed JSON, if any)."""
    error = body.get("error") if isinstance(body, Mapping) else None
    error = error if isinstance(error, Mapping) else {}
    kind = str(error.get("type", ""))
    message = str(error.get("message") or text or f"HTTP {status}")
    if status == 404:
        found = NotFound(str(error.get("kind") or "resource"), str(error.get("key") or ""))
        return _with_message(found, message)
    if status == 409 and kind == "LimitReached" and isinstance(error.get("limit"), int):
        return LimitReached(str(error.get("tier", "")), int(error["limit"]))
    if kind == "BudgetExceeded":
        return BudgetExceeded(_int(error.get("needed")), _int(error.get("budget")))
    if status in (502, 504):
        cls = ProviderTimeout if status == 504 else ProviderError
        return cls(message, status=status, body=text or None)
    if status == 401 or kind in _BY_TYPE:
        return _BY_TYPE.get(kind, Unauthorized)(message)
    if status == 409:
        return SessionConflict(message)
    if status == 503:
        return StoreUnavailable(message)
    if 400 <= status < 500:
        return InputError(message)
    return StoreError(message)


def _raise_for(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    text = response.text
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    raise error_from(response.status_code, body, text)


def _retry_after(response: httpx.Response) -> float:
    try:
        return min(30.0, max(0.0, float(response.headers.get("retry-after", "1"))))
    except ValueError:
        return 1.0


class Transport:
    """Requests to one memstack server: JSON in, JSON out, library errors on failure, safe retries (see the module
    docstring). ``retries``: how many times a call is tried again after no answer or a 503."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float, retries: int = 2) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = max(0, retries)
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    def _unreachable(self, exc: httpx.TransportError) -> StoreUnavailable:
        return StoreUnavailable(f"cannot reach the memstack server at {self.base_url} ({type(exc).__name__}: {exc})")

    def _failed(self, exc: httpx.TransportError) -> MemstackError:
        if isinstance(exc, httpx.TimeoutException):
            return ProviderTimeout(f"the memstack server at {self.base_url} did not answer in time: {exc}")
        return self._unreachable(exc)

    @staticmethod
    def _headers(method: str) -> dict[str, str]:
        """A key of this call's own for anything but a read: every attempt of the call sends it."""
        return {} if method == "GET" else {IDEMPOTENCY_HEADER: uuid.uuid4().hex}

    async def _wait(self, response: httpx.Response | None, attempt: int, waiting_since: float | None) -> bool:
        """Whether to try again after ``response`` (``None``: no answer at all), having slept as asked."""
        if response is not None and response.status_code == 409:
            if waiting_since is None or time.monotonic() - waiting_since > self.timeout:
                return False
            await asyncio.sleep(_retry_after(response))
            return True
        if attempt >= self.retries:
            return False
        delay = _BACKOFF_S * 2**attempt if response is None else _retry_after(response)
        await asyncio.sleep(delay)
        return True

    async def request(
        self, method: str, path: str, *, json_body: Any = None, params: Mapping[str, Any] | None = None
    ) -> Any:
        """The parsed JSON of a successful answer; the library error of a failed one."""
        headers = self._headers(method)
        attempt = 0
        waiting_since: float | None = None  # when the server first said the call was still being answered
        while True:
            try:
                response = await self._http.request(
                    method, path, json=json_body, params=_params(params), headers=headers
                )
            except httpx.TransportError as exc:
                if not await self._wait(None, attempt, None):
                    raise self._failed(exc) from None
                attempt += 1
                continue
            if _in_flight(response):
                waiting_since = waiting_since or time.monotonic()
                if await self._wait(response, attempt, waiting_since):
                    continue
            elif response.status_code == 503 and await self._wait(response, attempt, None):
                attempt += 1
                continue
            break
        _raise_for(response)
        if response.status_code == 204:  # No Content (a DELETE of an agent)
            return None
        try:
            return response.json()
        except ValueError:
            raise MalformedResponse(
                f"the memstack server answered {method} {path} with something that is not JSON",
                status=response.status_code,
                body=response.text[:2000],
            ) from None

    @asynccontextmanager
    async def stream(self, method: str, path: str, *, json_body: Any = None) -> AsyncIterator[httpx.Response]:
        """A streamed answer (server-sent events), its error raised before the first byte is handed on; retried
        (with the call's key) only until then."""
        headers = self._headers(method)
        attempt = 0
        waiting_since: float | None = None
        while True:
            try:
                async with self._http.stream(method, path, json=json_body, headers=headers) as response:
                    if response.status_code >= 400:
                        await response.aread()
                        retry = False
                        if _in_flight(response):
                            waiting_since = waiting_since or time.monotonic()
                            retry = await self._wait(response, attempt, waiting_since)
                        elif response.status_code == 503:
                            retry = await self._wait(response, attempt, None)
                            attempt += retry
                        if retry:
                            continue
                        _raise_for(response)
                    try:
                        yield response
                    except httpx.TransportError as exc:  # after bytes were handed on: never retried
                        raise self._failed(exc) from None
                    return
            except httpx.TransportError as exc:
                if not await self._wait(None, attempt, None):
                    raise self._failed(exc) from None
                attempt += 1


def _in_flight(response: httpx.Response) -> bool:
    if response.status_code != 409:
        return False
    try:
        return bool(response.json()["error"]["type"] == "RequestInFlight")
    except (ValueError, KeyError, TypeError):
        return False


def _params(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Query parameters without the ``None`` ones; booleans as ``true``/``false``."""
    if params is None:
        return None
    out: dict[str, Any] = {}
    for key, value in params.items():
        if value is None:
            continue
        out[key] = ("true" if value else "false") if isinstance(value, bool) else value
    return out
