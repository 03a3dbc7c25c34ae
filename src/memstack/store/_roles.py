"""The roles of a :class:`~memstack.store.base.Store` that are written once over the :class:`~memstack.store._sql.Sql`
protocol (``contexts``, ``threads``, ``drops``, ``keys``, ``agents``, ``idempotency``, ``webhooks``): both backends'
stores inherit them from :class:`SharedRoles`, made over their own ``Sql``, and add the roles each does its own
way."""

from __future__ import annotations

from memstack.store._contexts import Contexts
from memstack.store._drops import Drops
from memstack.store._idempotency import Idempotency
from memstack.store._keys import Agents, Keys
from memstack.store._sql import Sql
from memstack.store._threads import Threads
from memstack.store._webhooks import Webhooks

__all__ = ["SharedRoles"]


class SharedRoles:
    """The backend-neutral roles of a store over ``sql``."""

    def __init__(self, sql: Sql) -> None:
        self.keys = Keys(sql)
        self.agents = Agents(sql)
        self.contexts = Contexts(sql)
        self.threads = Threads(sql)
        self.idempotency = Idempotency(sql)
        self.drops = Drops(sql)
        self.webhooks = Webhooks(sql)
