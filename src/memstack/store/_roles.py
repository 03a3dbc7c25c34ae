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
        self._keys = Keys(sql)
        self._agents = Agents(sql)
        self._contexts = Contexts(sql)
        self._threads = Threads(sql)
        self._idempotency = Idempotency(sql)
        self._drops = Drops(sql)
        self._webhooks = Webhooks(sql)

    @property
    def keys(self) -> Keys:
        return self._keys

    @property
    def agents(self) -> Agents:
        return self._agents

    @property
    def contexts(self) -> Contexts:
        return self._contexts

    @property
    def threads(self) -> Threads:
        return self._threads

    @property
    def idempotency(self) -> Idempotency:
        return self._idempotency

    @property
    def drops(self) -> Drops:
        return self._drops

    @property
    def webhooks(self) -> Webhooks:
        return self._webhooks
