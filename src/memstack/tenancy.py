"""Whose work this is: the tenant a piece of shared work is done for, carried by a context variable.

The queues behind admission (the embedding batches, the detection and background slots) serve tenants fairly, and
for that each item must say whose it is. Passing the tenant through every call (``embedder.embed(texts,
tenant=…)``) would change every Protocol for a scheduling concern, so it rides along instead: the turn's admission
(:class:`memstack.turn.admission.FairGate`) sets it for the work it admits, the tasks and threads that work starts
inherit it (``asyncio`` copies the context into tasks, ``asyncio.to_thread`` into its thread), and a queue reads it
when an item joins (:class:`memstack.embed.batching.BatchingEmbedder`). Work that nobody marked is the
``ANONYMOUS`` tenant's, one tenant among the others: unmarked work is served, never starved and never first.

It sits at the bottom of the layers so that every queue, whatever its layer, can read it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["ANONYMOUS", "current_tenant", "serving"]

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
