"""What a server built on the engine keeps between requests, in the store it shares with its other processes:

- ``engine.answers``: the answers to writes sent with an ``Idempotency-Key`` (:mod:`memstack.server.idempotency`),
  and the turns calls from one history take (:mod:`memstack.server.single_flight`): a key is claimed, answered or
  released, and swept when it expires; each record belongs to a user and is erased with them.
- ``engine.threads``: where a conversation a client keeps whole and sends with every call (OpenAI's chat
  completions) continues: a digest of the messages the client holds after a turn names that turn's session and
  number (:mod:`memstack.server.threads`).

Both are the store's own contracts (:class:`~memstack.store.base.IdempotencyStore`,
:class:`~memstack.store.base.ChatThreads`), handed out by the engine so that no interface holds the store.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from memstack.types import StoredResponse, UserRef

if TYPE_CHECKING:
    from memstack.engine import AsyncMemstack

__all__ = ["KeptAnswers", "Threads"]


class KeptAnswers:
    """Answers kept per ``(user, key)``; see :class:`memstack.store.base.IdempotencyStore` for each call."""

    def __init__(self, engine: AsyncMemstack) -> None:
        self._engine = engine

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
        """``None`` when the key is now this request's; else the record as it stands."""
        return await self._engine.store.idempotency.claim(
            user, key, fingerprint, now=now, ttl_s=ttl_s, stale_s=stale_s, take_answered=take_answered
        )

    async def complete(
        self, user: UserRef, key: str, fingerprint: str, status: int, body: bytes, content_type: str
    ) -> None:
        """Keep the answer of the request that claimed the key."""
        await self._engine.store.idempotency.complete(user, key, fingerprint, status, body, content_type)

    async def release(self, user: UserRef, key: str, fingerprint: str) -> None:
        """Give up an unanswered claim: the next request with the key runs anew."""
        await self._engine.store.idempotency.release(user, key, fingerprint)

    async def sweep(self, *, now: datetime) -> int:
        """Delete expired records; how many went."""
        return await self._engine.store.idempotency.sweep(now=now)


class Threads:
    """Conversation states a client holds → the session and turn they reached."""

    def __init__(self, engine: AsyncMemstack) -> None:
        self._engine = engine

    async def mark(self, user: UserRef, digest: str, session_id: str, turn: int) -> None:
        """Record (or move) ``digest`` → this session's turn."""
        await self._engine.store.threads.mark(user, digest, session_id, turn)

    async def find(self, user: UserRef, digest: str) -> tuple[str, int] | None:
        """The session and turn of ``digest``; ``None`` when the store never saw that conversation state."""
        return await self._engine.store.threads.find(user, digest)
