"""The per-session lock (seed 04 §3, §7 "race condition"): a turn's phase 1 waits for the previous turn's phase 2.

A turn acquires the lock before it assembles context and releases it when its phase 2 (summarize, apply, persist)
is done — usually in a background task, after the reply was sent, so acquire and release are separate calls::

    held = await store.sessions.acquire(user, session_id)
    try:
        reply = await phase1()
        await store.sessions.record(user, turn, lease=held.lease)   # the acknowledgement waits for this
    except BaseException:
        await held.release()
        raise
    background(phase2_then(held.release))

Across processes the hold is a lease row with a fencing token (:mod:`memstack.store.leases`), on both backends;
:class:`LocalSessionLocks` is its in-process first stage, and all a temporary chat (never stored) uses.
"""

from __future__ import annotations

from typing import Protocol

from memstack.store.base import HeldLock
from memstack.store.leases import LocalSessionLocks

__all__ = ["HeldLock", "LocalSessionLocks", "SessionLocks"]


class SessionLocks(Protocol):
    async def acquire(self, session_id: str, *, timeout: float | None = None) -> HeldLock:
        """Wait (at most ``timeout`` seconds, else ``StoreBusy``) until no other turn of the session holds it."""
        ...
