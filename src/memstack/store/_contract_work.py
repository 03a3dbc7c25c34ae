"""The roles of the storage contract that keep what requests leave behind (:mod:`memstack.store.base`, which exports
them): the context manifests (``ContextStore``), durable background work (``JobStore``), the captures the guard
dropped (``CaptureDrops``), chat histories' threads (``ChatThreads``) and idempotent answers (``IdempotencyStore``)."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from memstack.types import (
    DroppedCaptures,
    Job,
    Manifest,
    StoredResponse,
    UserRef,
)

__all__ = ["DEFAULT_LEASE_S", "CaptureDrops", "ChatThreads", "ContextStore", "IdempotencyStore", "JobStore"]


@runtime_checkable
class ContextStore(Protocol):
    """Context manifests, one per response: what the model saw (``memstack context explain``).

    A manifest is written once, keyed by its context id, and belongs to one ``(tenant, user)``. Manifests of a
    temporary chat are never stored: ``save`` refuses them."""

    async def save(self, user: UserRef, manifest: Manifest, *, session_id: str | None = None) -> None:
        """Keep ``manifest``. Raises ``InputError`` for a temporary chat's manifest or a context id already kept."""
        ...

    async def get(self, tenant: str, context_id: str, *, user_id: str | None = None) -> Manifest:
        """One manifest of ``tenant`` (and of ``user_id`` when given); ``NotFound`` otherwise."""
        ...

    async def recent(self, user: UserRef, *, session_id: str | None = None, limit: int = 20) -> builtins.list[Manifest]:
        """The user's latest manifests (of one session when given), newest first."""
        ...


#: How long a claimed job belongs to its worker before another may take it over (a crashed worker's jobs come back).
DEFAULT_LEASE_S = 60.0


@runtime_checkable
class JobStore(Protocol):
    """Durable background work: recorded before it starts, claimed under a lease, checkpointed, finished.

    A job is never lost to a crash: until ``complete`` or a final ``fail`` it stays claimable (``pending``, or
    ``running`` with a lapsed lease). Finished jobs are kept a while (for idempotency and inspection), their payload
    dropped, then pruned by the store."""

    async def enqueue(
        self,
        kind: str,
        key: str,
        payload: Mapping[str, Any],
        *,
        owner: str | None = None,
        lease_s: float = DEFAULT_LEASE_S,
    ) -> Job:
        """Record a job, or return the one already recorded under ``(kind, key)`` unchanged.

        With ``owner``, a newly recorded job starts ``running``, claimed by that owner for ``lease_s`` seconds (the
        caller works on it at once); without, it starts ``pending``. Compare the returned job's ``owner`` with
        yours to know whether it is yours to run."""
        ...

    async def claim_pending(
        self, kind: str | None, limit: int, *, owner: str | None = None, lease_s: float = DEFAULT_LEASE_S
    ) -> builtins.list[Job]:
        """Claim up to ``limit`` jobs of ``kind`` (any kind if ``None``), oldest first: pending ones that are due,
        and running ones whose lease lapsed (their worker died). Each is ``running`` for ``owner``, attempts + 1.
        Concurrent callers never claim the same job."""
        ...

    async def checkpoint(self, job_id: str, state: Mapping[str, Any], *, lease_s: float = DEFAULT_LEASE_S) -> Job:
        """Replace the job's ``state`` (what is done so far) and extend its lease; ``NotFound`` if unknown."""
        ...

    async def complete(self, job_id: str, result: Mapping[str, Any] | None = None) -> None:
        """Mark done with ``result``; the payload is dropped (it may hold user text)."""
        ...

    async def fail(self, job_id: str, error: str, *, retry_at: datetime | None) -> None:
        """Record ``error``. With ``retry_at`` the job is pending again from then on; without, it is given up."""
        ...

    async def get(self, job_id: str) -> Job:
        """One job by id (``NotFound`` if unknown or pruned)."""
        ...


@runtime_checkable
class CaptureDrops(Protocol):
    """Automatic captures a full tier kept from being stored, counted per user (what ``usage`` reports as
    ``dropped``): one row per user, exported and erased with the user's other data."""

    async def record(self, user: UserRef, *, at: datetime) -> None:
        """Count one more for ``user`` (the first time is kept, the last one moves to ``at``)."""
        ...

    async def get(self, user: UserRef) -> DroppedCaptures:
        """The user's count; zero (and no times) for a user no limit ever stopped."""
        ...


@runtime_checkable
class ChatThreads(Protocol):
    """Where a conversation that a client keeps (and sends whole with every call, as OpenAI's chat completions API
    does) continues: after each turn, a digest of the messages the client then holds names the turn's session and
    number, so the next call that starts with exactly those messages finds its session, and one that starts the
    same way with other messages does not."""

    async def mark(self, user: UserRef, digest: str, session_id: str, turn: int) -> None:
        """Record (or move) ``digest`` → this session's turn."""
        ...

    async def find(self, user: UserRef, digest: str) -> tuple[str, int] | None:
        """The session and turn of ``digest``; ``None`` when this store never saw that conversation state."""
        ...


@runtime_checkable
class IdempotencyStore(Protocol):
    """Responses to HTTP writes sent with an ``Idempotency-Key`` (:mod:`memstack.server.idempotency`), one record
    per ``(tenant, key)``: the first request claims the key, its response is kept until the record expires, and a
    retry is answered from it, in any process sharing the store. Records belong to a user (erased with them)."""

    async def claim(
        self,
        user: UserRef,
        key: str,
        fingerprint: str,
        *,
        now: datetime,
        ttl_s: float,
        stale_s: float,
        take_answered: bool = False,
    ) -> StoredResponse | None:
        """``None`` when the key is now this request's (kept ``ttl_s`` seconds): there was no record, an expired
        one, or a claim by the same request still unanswered after ``stale_s`` seconds (its process died), or, with
        ``take_answered``, an answered one (the key is a turn to take, not a request done once:
        :mod:`memstack.server.single_flight`). Else the record as it stands: another request's, or this one's in
        flight or answered."""
        ...

    async def complete(
        self, user: UserRef, key: str, fingerprint: str, status: int, body: bytes, content_type: str
    ) -> None:
        """Keep the response of the request that claimed the key."""
        ...

    async def release(self, user: UserRef, key: str, fingerprint: str) -> None:
        """Give up an unanswered claim (the request failed in a way worth retrying): the next request runs anew."""
        ...

    async def sweep(self, *, now: datetime) -> int:
        """Delete expired records; how many went."""
        ...
