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

from memstack.tenancy import FairGate

__all__ = ["DEFAULT_ACTIVE_TURNS", "FairGate"]

#: Pieces of turn work (before the model call, recording, phase 2, detection) that run at once in a process.
DEFAULT_ACTIVE_TURNS = 32
