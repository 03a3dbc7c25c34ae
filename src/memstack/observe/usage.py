"""Model usage per user and per tenant, by role and model, summed in this process since it started.

What ``AsyncMemstack.usage`` (``GET /v1/users/{user_id}/usage``) and ``GET /v1/usage`` report. The sums live in
this process's memory, not in the store: they start at zero when the process starts, and each process of a
multi-process server counts its own calls. For totals that survive restarts and add up across processes, scrape
``/metrics`` (``memstack_model_tokens_total``, ``memstack_model_cost_usd_total``), which Prometheus keeps.

Bounded, as every per-process cache (DEVELOPERS.md): at most ``users`` users and ``tenants`` tenants are kept, the
least recently active dropped first; an entry is a few numbers per (role, model). An erased user's sums are dropped
with the user (:meth:`UsageBook.forget`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from datetime import datetime
from typing import TypeVar

from memstack.observe.accounting import Ledger, ModelCall
from memstack.types import ModelUsage, UserRef, utcnow

__all__ = ["UsageBook"]

K = TypeVar("K", bound=Hashable)


class UsageBook:
    """Listens to an engine's model calls (``Telemetry.on_model_call``) and sums them per user and per tenant."""

    def __init__(self, *, users: int = 100_000, tenants: int = 10_000) -> None:
        self.since: datetime = utcnow()
        self._users: OrderedDict[tuple[str, str], Ledger] = OrderedDict()
        self._tenants: OrderedDict[str, Ledger] = OrderedDict()
        self._max_users = users
        self._max_tenants = tenants

    def __call__(self, call: ModelCall) -> None:
        if call.tenant is None:
            return
        _ledger(self._tenants, call.tenant, self._max_tenants).add(call)
        if call.user_id is not None:
            _ledger(self._users, (call.tenant, call.user_id), self._max_users).add(call)

    def user(self, user: UserRef) -> tuple[ModelUsage, ...]:
        found = self._users.get((user.tenant, user.user_id))
        return found.usage() if found is not None else ()

    def tenant(self, tenant: str) -> tuple[ModelUsage, ...]:
        found = self._tenants.get(tenant)
        return found.usage() if found is not None else ()

    def forget(self, user: UserRef) -> None:
        """Drop ``user``'s sums (the user was erased); the tenant's keep what was spent."""
        self._users.pop((user.tenant, user.user_id), None)


def _ledger(table: OrderedDict[K, Ledger], key: K, limit: int) -> Ledger:
    found = table.get(key)
    if found is None:
        found = table[key] = Ledger()
        while len(table) > limit:
            table.popitem(last=False)
    else:
        table.move_to_end(key)
    return found
