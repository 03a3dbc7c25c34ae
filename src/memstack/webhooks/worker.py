"""The delivery worker: every engine that resumes background work runs one, over the store's outbox.

    poll (a read) ──due?──▶ claim a batch (a lease, one write) ──▶ POST each, concurrently ──▶ record the outcome
                                                                                                (while still leased)

- **Durable.** The events were written in the transaction of their change (:mod:`memstack.store._outbox`), so a
  process killed at any point loses none: a delivery it never claimed is due for the next worker; one it held is
  claimable again once its lease lapses (the attempt's time limit and some margin).
- **At least once.** A worker killed after the receiver took a delivery but before it recorded the 2xx leaves the
  delivery to be sent again; so does a replay. Every copy carries the same event id (``Memstack-Event-Id``, and
  ``id`` in the body): a receiver drops what it has seen.
- **Bounded.** One attempt is at most ``webhook_timeout_s`` from connection to last byte (a receiver that never
  answers is a timed-out attempt); redirects are not followed; a delivery that failed gets its next attempt after
  ``webhook_backoff_s`` doubled for each earlier failure (at most an hour), times a random factor in [0.5, 1) so
  that deliveries failed together are not retried together; after ``webhook_max_attempts`` attempts, or once it was
  written ``webhook_max_age_s`` ago, it is marked ``failed`` with its last error, where the API and the UI
  show it and a replay can send it again.
- **Signed.** Each attempt is signed anew (:mod:`memstack.webhooks.signing`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx

from memstack.config import Config
from memstack.errors import WebhookRefused
from memstack.store._webhooks import Webhooks
from memstack.store.fence import detached
from memstack.types import DeliveryStatus, WebhookDelivery, new_id, utcnow
from memstack.webhooks.signing import SIGNATURE_HEADER, sign
from memstack.webhooks.urls import check_url

__all__ = ["DeliveryWorker", "Policy", "backoff_s", "event_body"]

log = logging.getLogger("memstack.webhooks")

#: Deliveries one worker claims at a time (and sends concurrently).
BATCH = 16
#: The longest wait between two attempts, however many failed before.
MAX_BACKOFF_S = 3600.0
#: How much of a receiver's answer a failed attempt records.
ERROR_CHARS = 300


@dataclass(frozen=True, slots=True)
class Policy:
    """How deliveries are attempted (the ``webhook_*`` settings of :class:`~memstack.config.Config`)."""

    timeout_s: float = 10.0
    max_attempts: int = 10
    backoff_s: float = 5.0
    max_age_s: float = 86_400.0
    poll_s: float = 1.0

    @classmethod
    def of(cls, config: Config) -> Policy:
        return cls(
            config.webhook_timeout_s,
            config.webhook_max_attempts,
            config.webhook_backoff_s,
            config.webhook_max_age_s,
            config.webhook_poll_s,
        )

    @property
    def lease_s(self) -> float:
        """How long a claimed delivery stays with its worker: the attempt's limit and a margin."""
        return 2 * self.timeout_s + 5.0


def backoff_s(policy: Policy, failures: int, *, rng: Callable[[], float] = random.random) -> float:
    """The wait after the ``failures``-th failed attempt: exponential, capped, with jitter in [0.5, 1)."""
    base = min(MAX_BACKOFF_S, policy.backoff_s * 2.0 ** max(failures - 1, 0))
    return base * (0.5 + rng() / 2)


def event_body(delivery: WebhookDelivery) -> bytes:
    """What a delivery POSTs: the event (the same bytes for every attempt and replay of it)."""
    event = {
        "id": delivery.event_id,
        "type": delivery.type,
        "created": delivery.occurred_at.isoformat(),
        "tenant": delivery.tenant,
        "user_id": delivery.user_id,
        "data": delivery.payload,
    }
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


class _Failed(Exception):
    """An attempt that did not deliver: ``retry`` false when another attempt cannot help."""

    def __init__(self, message: str, status: int | None = None, *, retry: bool = True) -> None:
        super().__init__(message)
        self.status = status
        self.retry = retry


class DeliveryWorker:
    """Delivers the outbox of ``webhooks`` until closed. ``allow_private``: asked before each attempt (the
    deployment's rule, :mod:`memstack.webhooks.urls`)."""

    def __init__(self, webhooks: Webhooks, policy: Policy, allow_private: Callable[[], bool]) -> None:
        self._webhooks = webhooks
        self._policy = policy
        self._allow_private = allow_private
        self._owner = f"{os.getpid()}-{new_id('whw')}"
        self._client: httpx.AsyncClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._stopping = False

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._loop(), name="memstack-webhooks", context=detached()
            )

    def wake(self) -> None:
        """Look for due deliveries now rather than at the next poll."""
        self._wake.set()

    async def aclose(self) -> None:
        """Stop; an attempt in flight is abandoned (its lease lapses and it is sent again: at least once). The loop
        also stops at its next turn by the flag, should a store call it was in swallow the cancel (the PostgreSQL
        pool's connection wait can)."""
        task, client = self._task, self._client
        self._task = self._client = None
        self._stopping = True
        self._wake.set()
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if client is not None:
            await client.aclose()

    async def _loop(self) -> None:
        while not self._stopping:
            try:
                sent = await self.run_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # the store unreachable a moment: try again at the next poll
                log.exception("webhook deliveries could not be read; trying again in %.1f s", self._policy.poll_s)
                sent = 0
            if sent == 0 and not self._stopping:
                await self._idle()

    async def _idle(self) -> None:
        """Wait until woken or the poll interval passed. A timer sets the event rather than a timeout cancelling
        the wait: on Python 3.11 a cancel that arrives as ``wait_for``'s or ``asyncio.timeout``'s own fires is
        swallowed, and ``aclose`` then waited for good."""
        self._wake.clear()
        timer = asyncio.get_running_loop().call_later(self._policy.poll_s, self._wake.set)
        try:
            await self._wake.wait()
        finally:
            timer.cancel()

    async def run_once(self) -> int:
        """One pass: claim the due deliveries and attempt each; how many were attempted."""
        now = utcnow()
        if not await self._webhooks.due(now=now):
            return 0
        lease = now + timedelta(seconds=self._policy.lease_s)
        claimed = await self._webhooks.claim(self._owner, now=now, lease_until=lease, limit=BATCH)
        await asyncio.gather(*(self._attempt(d) for d in claimed))
        return len(claimed)

    async def _attempt(self, delivery: WebhookDelivery) -> None:
        status: int | None = None
        try:
            status = await self._post(delivery)
        except _Failed as failed:
            await self._failed(delivery, str(failed), failed.status, retry=failed.retry)
            return
        await self._webhooks.finish(
            delivery, self._owner, status=DeliveryStatus.DELIVERED, http_status=status, error=None, next_at=None,
            now=utcnow(),
        )  # fmt: skip

    async def _post(self, delivery: WebhookDelivery) -> int:
        target = await self._webhooks.secret(delivery.tenant, delivery.endpoint_id)
        if target is None:
            raise _Failed("the endpoint was deleted", retry=False)
        url, secret = target
        try:
            await check_url(url, allow_private=self._allow_private())
        except WebhookRefused as exc:
            raise _Failed(str(exc), retry=False) from None
        body = event_body(delivery)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "memstack-webhooks",
            "Memstack-Event-Id": delivery.event_id,
            "Memstack-Event-Type": delivery.type,
            "Memstack-Delivery-Id": delivery.id,
            "Memstack-Delivery-Attempt": str(delivery.attempts + 1),
            SIGNATURE_HEADER: sign(secret, body),
        }
        if self._client is None:
            self._client = httpx.AsyncClient(follow_redirects=False, timeout=httpx.Timeout(self._policy.timeout_s))
        limit = self._policy.timeout_s
        answer = b""
        try:
            async with (
                asyncio.timeout(limit),  # the whole attempt, however slowly the bytes trickle
                self._client.stream("POST", url, content=body, headers=headers) as response,
            ):
                code = response.status_code
                if not 200 <= code < 300:
                    async for part in response.aiter_bytes():  # enough of the answer to say what went wrong
                        answer += part
                        if len(answer) >= ERROR_CHARS:
                            break
        except (TimeoutError, httpx.TimeoutException):
            raise _Failed(f"no answer within {limit:g} s (webhook_timeout_s)") from None
        except httpx.HTTPError as exc:
            raise _Failed(f"could not reach the endpoint: {type(exc).__name__}: {exc}") from None
        if 200 <= code < 300:
            return code
        text = answer[:ERROR_CHARS].decode("utf-8", "replace").strip()
        raise _Failed(f"HTTP {code}" + (f": {text}" if text else ""), code)

    async def _failed(self, delivery: WebhookDelivery, error: str, http_status: int | None, *, retry: bool) -> None:
        now = utcnow()
        failures = delivery.attempts + 1
        wait = backoff_s(self._policy, failures)
        next_at: datetime | None = now + timedelta(seconds=wait)
        age = (now - delivery.created_at).total_seconds()
        if not retry or failures >= self._policy.max_attempts or age + wait > self._policy.max_age_s:
            status, next_at = DeliveryStatus.FAILED, None
            reason = "" if not retry else f" (gave up after {failures} attempt{'s' if failures > 1 else ''})"
            error = f"{error}{reason}"
            log.warning("webhook delivery %s to %s failed: %s", delivery.id, delivery.endpoint_id, error)
        else:
            status = DeliveryStatus.PENDING
        await self._webhooks.finish(
            delivery, self._owner, status=status, http_status=http_status, error=error, next_at=next_at, now=now
        )
