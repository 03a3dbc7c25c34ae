"""Admission of turn work: a bounded number of turns work at once, and tenants take turns.

A process carries thousands of turns at once, but almost all of them are waiting on the chat model; what costs is
the work around the model call (reading the session, embedding, recall, assembly, recording the exchange, phase 2,
memory detection), which needs the CPU and a pooled database connection. Without a bound, a burst of a thousand
turns queues a thousand statements on a pool of twenty and a thousand embeddings on two cores: every wait grows,
pool timeouts fire (503s), and a tenant with a thousand sessions makes everybody else wait behind it.

:class:`FairGate` admits at most ``capacity`` pieces of turn work at once. Waiters queue per tenant, and a free slot
goes to the tenants in rotation (one piece of work each), so a busy tenant's backlog cannot starve a quiet tenant:
the quiet tenant's next piece of work is admitted after at most one piece of work per other waiting tenant. Nothing
that waits on another turn holds a slot (a turn takes its session's lease first, then a slot), so slots cannot
deadlock. Waiting here is not an error and has no timeout: the queue drains as fast as the machine works.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from memstack.errors import InputError

__all__ = ["DEFAULT_ACTIVE_TURNS", "FairGate"]

#: Pieces of turn work (before the model call, recording, phase 2, detection) that run at once in a process.
DEFAULT_ACTIVE_TURNS = 32


class FairGate:
    """``async with gate.slot(tenant):`` runs the block once a slot is free; slots go round-robin by tenant."""

    def __init__(self, capacity: int = DEFAULT_ACTIVE_TURNS) -> None:
        if capacity < 1:
            raise InputError(f"the number of turns working at once must be at least 1, got {capacity}")
        self.capacity = capacity
        self._active = 0
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    @property
    def active(self) -> int:
        return self._active

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._waiting.values())

    @asynccontextmanager
    async def slot(self, tenant: str) -> AsyncIterator[None]:
        await self._acquire(tenant)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, tenant: str) -> None:
        if self._active < self.capacity and not self._waiting:
            self._active += 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(tenant, deque()).append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # admitted, then cancelled before it ran: pass it on
                self._release()
            else:
                self._forget(tenant, future)
            raise

    def _forget(self, tenant: str, future: asyncio.Future[None]) -> None:
        queue = self._waiting.get(tenant)
        if queue is None:
            return
        try:
            queue.remove(future)
        except ValueError:
            return
        if not queue:
            del self._waiting[tenant]

    def _release(self) -> None:
        self._active -= 1
        while self._active < self.capacity and self._waiting:
            tenant, queue = next(iter(self._waiting.items()))
            future = queue.popleft()
            if queue:
                self._waiting.move_to_end(tenant)  # this tenant's next one waits for every other tenant's
            else:
                del self._waiting[tenant]
            if future.cancelled():
                continue
            self._active += 1
            future.set_result(None)
