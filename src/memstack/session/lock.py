"""The per-session lock (seed 04 §3, §7 "race condition"): a turn's phase 1 waits for the previous turn's phase 2.

A turn acquires the lock before it assembles context and releases it when its phase 2 (summarize, apply, persist)
is done — usually in a background task, after the reply was sent, so acquire and release are separate calls::

    held = await locks.acquire(session_id)
    try:
        reply = await phase1()
    except BaseException:
        await held.release()
        raise
    background(phase2_then(held.release))

:class:`LocalSessionLocks` serialises turns inside one process (the SQLite deployment); waiters are served in
arrival order, so turns are processed in the order they came. Several processes sharing a PostgreSQL database use
the store's transaction-scoped advisory lock behind the same interface.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol

from memstack.errors import StoreBusy
from memstack.store.base import HeldLock

__all__ = ["HeldLock", "LocalSessionLocks", "SessionLocks"]


class SessionLocks(Protocol):
    async def acquire(self, session_id: str, *, timeout: float | None = None) -> HeldLock:
        """Wait (at most ``timeout`` seconds, else ``StoreBusy``) until no other turn of the session holds it."""
        ...


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0  # holders and waiters; the entry is dropped at zero


class _LocalHeld:
    def __init__(self, owner: LocalSessionLocks, key: tuple[str, str], entry: _Entry) -> None:
        self._owner = owner
        self._key = key
        self._entry: _Entry | None = entry
        self.session_id = key[1]

    async def release(self) -> None:
        entry, self._entry = self._entry, None
        if entry is not None:
            entry.lock.release()
            self._owner._leave(self._key, entry)


class LocalSessionLocks:
    """In-process FIFO locks, one per session id, created on demand and forgotten when unused."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    async def acquire(self, session_id: str, *, timeout: float | None = None, scope: str = "") -> _LocalHeld:
        """``scope`` keeps equal session ids of different users apart (the stores pass tenant and user)."""
        key = (scope, session_id)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry()
        entry.users += 1
        try:
            async with asyncio.timeout(timeout):
                await entry.lock.acquire()
        except TimeoutError:
            self._leave(key, entry)
            raise StoreBusy(
                f"session {session_id!r} is still busy with an earlier turn after {timeout:g}s; "
                "retry, or raise the lock timeout"
            ) from None
        except BaseException:
            self._leave(key, entry)
            raise
        return _LocalHeld(self, key, entry)

    @asynccontextmanager
    async def hold(self, session_id: str, *, timeout: float | None = None) -> AsyncIterator[None]:
        held = await self.acquire(session_id, timeout=timeout)
        try:
            yield
        finally:
            await held.release()

    def _leave(self, key: tuple[str, str], entry: _Entry) -> None:
        entry.users -= 1
        if entry.users == 0 and self._entries.get(key) is entry:
            del self._entries[key]
