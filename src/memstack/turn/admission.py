"""Admission of turn work: a bounded number of turns work at once, tenants take turns, and none takes them all.

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

Rotation alone is not enough. Once a flooding tenant holds every slot, a quiet tenant's detection waits for one of
the flood's pieces to finish, and then runs beside all the others in the queues behind the gate (the embedding
batches, the thread pool, the database pool, which serve whoever came first): its reply waits out the whole
detection race. So a tenant holds at most ``per_tenant`` slots at once (default three quarters of ``capacity``):
the rest stay free for the other tenants, whose work is admitted at once, and the embedding batches behind serve
tenants in rotation. The cap is strict (a lone busy tenant uses ``per_tenant`` slots, not all of them) on purpose: a
tenant that has the machine to itself cannot give it back fast enough when another one arrives, since its pieces in
flight finish at their own pace. Three quarters, not less, because most installs serve one tenant, whose detections
with a model classifier hold their slots while the model answers: a smaller share would cap such a server's
throughput to protect tenants it does not have. A many-tenant service that wants each quiet tenant to meet fewer of
a flood's pieces in the thread and database pools lowers ``tenant_turns`` (a quarter measured well: ``docs/
scaling.md``); raise ``active_turns`` with the pool.

Admitted work runs marked as its tenant's (:func:`memstack.tenancy.serving`), so the queues behind, the embedding
batches first, can serve tenants in rotation too.
"""

from __future__ import annotations

import asyncio
from collections import Counter, OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from memstack.errors import InputError
from memstack.tenancy import serving

__all__ = ["DEFAULT_ACTIVE_TURNS", "FairGate"]

#: Pieces of turn work (before the model call, recording, phase 2, detection) that run at once in a process.
DEFAULT_ACTIVE_TURNS = 32


class FairGate:
    """``async with gate.slot(tenant):`` runs the block once a slot is free and ``tenant`` holds fewer than
    ``per_tenant`` (default three quarters of ``capacity``, at least 1); slots go round-robin by tenant."""

    def __init__(self, capacity: int = DEFAULT_ACTIVE_TURNS, per_tenant: int | None = None) -> None:
        if capacity < 1:
            raise InputError(f"the number of turns working at once must be at least 1, got {capacity}")
        if per_tenant is not None and not 1 <= per_tenant <= capacity:
            raise InputError(f"a tenant's share of the turns working at once must be 1 to {capacity}, got {per_tenant}")
        self.capacity = capacity
        self.per_tenant = per_tenant if per_tenant is not None else max(1, capacity * 3 // 4)
        self._active = 0
        self._held: Counter[str] = Counter()  # slots held, by tenant
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

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
    async def slot(self, tenant: str) -> AsyncIterator[None]:
        await self._acquire(tenant)
        try:
            with serving(tenant):
                yield
        finally:
            self._release(tenant)

    async def _acquire(self, tenant: str) -> None:
        # Invariant (kept by _dispatch): while a slot is free, every waiting tenant is at its cap. So a tenant with
        # no waiters of its own, under its cap, overtakes nobody by taking a free slot at once.
        if self._active < self.capacity and self._held[tenant] < self.per_tenant and tenant not in self._waiting:
            self._take(tenant)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(tenant, deque()).append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # admitted, then cancelled before it ran: pass it on
                self._release(tenant)
            else:
                self._forget(tenant, future)
            raise

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
