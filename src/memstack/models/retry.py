"""The retry policy for model calls. The clients never retry on their own (the SDK's retries are off).

Usage, for a classifier or summarizer that retries a failed call once::

    data = await with_retry(lambda: model.complete_json(messages, timeout=8.0), attempts=2)

``is_retryable`` decides what is worth a second try: timeouts, malformed replies, dropped connections,
HTTP 408/409/429 and 5xx. A bad request, a wrong key or an unknown model fails at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from memstack.errors import ConfigError, MalformedResponse, ProviderError, ProviderTimeout

__all__ = ["is_retryable", "with_retry"]

T = TypeVar("T")

_RETRYABLE_STATUS = frozenset({408, 409, 429})


def is_retryable(exc: BaseException) -> bool:
    """True for failures a second identical call may not repeat."""
    if isinstance(exc, ProviderTimeout | MalformedResponse):
        return True
    if isinstance(exc, ProviderError):
        return exc.status is None or exc.status in _RETRYABLE_STATUS or exc.status >= 500
    return False


async def with_retry(
    call: Callable[[], Awaitable[T]],
    *,
    attempts: int = 2,
    on: Callable[[BaseException], bool] | type[BaseException] | tuple[type[BaseException], ...] = is_retryable,
    delay_s: float = 0.0,
    backoff: float = 2.0,
    max_delay_s: float = 10.0,
    on_retry: Callable[[int, BaseException], None] | None = None,
) -> T:
    """Await ``call()`` up to ``attempts`` times while it raises what ``on`` accepts.

    ``on`` is a predicate or exception type(s). Between attempts it sleeps ``delay_s``, multiplied by ``backoff``
    after each failure and capped at ``max_delay_s``. ``on_retry(attempt, exc)`` runs before each new attempt (log
    or count failures there). The last failure propagates unchanged; other exceptions propagate at once.
    """
    if attempts < 1:
        raise ConfigError(f"attempts must be at least 1, got {attempts}")
    accepts: Callable[[BaseException], bool]
    if isinstance(on, type | tuple):
        types = on

        def accepts(exc: BaseException) -> bool:
            return isinstance(exc, types)

    else:
        accepts = on
    delay = delay_s
    for attempt in range(1, attempts + 1):
        try:
            return await call()
        except Exception as exc:
            if attempt == attempts or not accepts(exc):
                raise
            if on_retry is not None:
                on_retry(attempt, exc)
        if delay > 0:
            await asyncio.sleep(delay)
            delay = min(delay * backoff, max_delay_s)
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover
