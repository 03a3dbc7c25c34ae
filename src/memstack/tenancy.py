"""Whose work this is: the tenant a piece of shared work is done for, carried by a context variable.

The queues behind admission (the embedding batches, the detection and background slots) serve tenants fairly, and
for that each item must say whose it is. Passing the tenant through every call (``embedder.embed(texts,
tenant=…)``) would change every Protocol for a scheduling concern, so it rides along instead: the turn's admission
(:class:`memstack.turn.admission.FairGate`) sets it for the work it admits, the tasks and threads that work starts
inherit it (``asyncio`` copies the context into tasks, ``asyncio.to_thread`` into its thread), and a queue reads it
when an item joins (:class:`memstack.embed.batching.BatchingEmbedder`, the PostgreSQL pool of
:mod:`memstack.store.postgres._db`). Work that nobody marked is the ``ANONYMOUS`` tenant's, one tenant among the
others: unmarked work is served, never starved and never first.

:class:`FairGate` is the one way a bounded resource is shared by tenants here: at most ``capacity`` holders, waiters
queued per tenant and served in rotation, optionally a cap per tenant. The turns' admission
(:mod:`memstack.turn.admission`, which says why its cap is three quarters) and the PostgreSQL pool's connections
(no cap: a lone tenant may use every connection) are gates.

It sits at the bottom of the layers so that every queue, whatever its layer, can read it.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections import Counter, OrderedDict, deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from memstack.errors import InputError

__all__ = ["ANONYMOUS", "FairGate", "GateTimeout", "current_tenant", "serving"]

#: The tenant of work that nothing marked (a search outside a turn, a command-line job).
ANONYMOUS = ""

_TENANT: contextvars.ContextVar[str] = contextvars.ContextVar("memstack_tenant", default=ANONYMOUS)


def current_tenant() -> str:
    """The tenant the running work is done for (``ANONYMOUS`` when unmarked)."""
    return _TENANT.get()


@contextmanager
def serving(tenant: str) -> Iterator[None]:
    """Mark the work of the block (and the tasks and threads it starts) as ``tenant``'s."""
    token = _TENANT.set(tenant)
    try:
        yield
    finally:
        _TENANT.reset(token)


class GateTimeout(TimeoutError):
    """A :class:`FairGate` gave no slot within the waiter's ``timeout_s``."""


class FairGate:
    """``async with gate.slot(tenant):`` runs the block once a slot is free and ``tenant`` holds fewer than
    ``per_tenant`` (default three quarters of ``capacity``, at least 1); slots go round-robin by tenant."""

    def __init__(self, capacity: int, per_tenant: int | None = None) -> None:
        if capacity < 1:
            raise InputError(f"the number of turns working at once must be at least 1, got {capacity}")
        if per_tenant is not None and not 1 <= per_tenant <= capacity:
            raise InputError(f"a tenant's share of the turns working at once must be 1 to {capacity}, got {per_tenant}")
        self.capacity = capacity
        self.per_tenant = per_tenant if per_tenant is not None else max(1, capacity * 3 // 4)
        self._active = 0
        self._held: Counter[str] = Counter()  # slots held, by tenant
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()
        self.waited_s = 0.0  # all waiters' time in the queue, for diagnostics

    @property
    def active(self) -> int:
        return self._active

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._waiting.values())

    def held(self, tenant: str) -> int:
        """Slots ``tenant`` holds now."""
        return self._held[tenant]

    @asynccontextmanager
    async def slot(self, tenant: str, *, timeout_s: float | None = None) -> AsyncIterator[None]:
        """Hold a slot for the block; ``GateTimeout`` when none was given within ``timeout_s`` (its place in the
        queue is given up)."""
        await self._acquire(tenant, timeout_s)
        try:
            with serving(tenant):
                yield
        finally:
            self._release(tenant)

    async def _acquire(self, tenant: str, timeout_s: float | None) -> None:
        # Invariant (kept by _dispatch): while a slot is free, every waiting tenant is at its cap. So a tenant with
        # no waiters of its own, under its cap, overtakes nobody by taking a free slot at once.
        if self._active < self.capacity and self._held[tenant] < self.per_tenant and tenant not in self._waiting:
            self._take(tenant)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(tenant, deque()).append(future)
        began = time.perf_counter()
        try:
            async with asyncio.timeout(timeout_s):
                await future
        except (asyncio.CancelledError, TimeoutError) as exc:
            if future.done() and not future.cancelled():  # admitted, then cancelled before it ran: pass it on
                self._release(tenant)
            else:
                self._forget(tenant, future)
            if isinstance(exc, TimeoutError):
                raise GateTimeout(f"no slot was free within {timeout_s:g} s") from None
            raise
        finally:
            self.waited_s += time.perf_counter() - began

    def _take(self, tenant: str) -> None:
        self._active += 1
        self._held[tenant] += 1

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

    def _release(self, tenant: str) -> None:
        self._active -= 1
        self._held[tenant] -= 1
        if not self._held[tenant]:
            del self._held[tenant]
        self._dispatch()

    def _dispatch(self) -> None:
        """Give free slots to waiting tenants in rotation, passing over those at their cap (they keep their place)."""
        while self._active < self.capacity:
            tenant = next((t for t in self._waiting if self._held[t] < self.per_tenant), None)
            if tenant is None:
                return
            queue = self._waiting[tenant]
            future = queue.popleft()
            if queue:
                self._waiting.move_to_end(tenant)  # this tenant's next one waits for every other tenant's
            else:
                del self._waiting[tenant]
            if future.cancelled():
                continue
            self._take(tenant)
            future.set_result(None)
