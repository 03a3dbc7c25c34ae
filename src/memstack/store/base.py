"""The storage contract: one small async Protocol per role.

A backend is one subpackage that implements every role and passes ``tests/store/test_contract.py``.
Every method is scoped by a :class:`~memstack.types.UserRef` *inside* the query, never filtered after.
Writes are transactions: on any failure nothing is half-written and a :class:`~memstack.errors.StoreError`
(or an :class:`~memstack.errors.InputError` for bad arguments) is raised.

The roles are written by subject, each module a part of the contract: the memories (``_contract_memories.py``),
the sessions (``_contract_sessions.py``), what requests leave behind (``_contract_work.py``: contexts, jobs,
drops, threads, idempotent answers) and tenants and users as a whole (``_contract_tenants.py``); :class:`Store`
gathers them here, and every name of the contract is imported from here.
"""

from __future__ import annotations

from typing import Protocol, Self

from memstack.store._contract_memories import MemoryIndex, MemoryStore
from memstack.store._contract_sessions import ArchiveVectors, HeldLock, HiddenStore, SessionArchive, SessionStore
from memstack.store._contract_tenants import (
    API_KEY_PREFIX,
    AgentStore,
    KeyStore,
    UserData,
    check_name,
    hash_api_key,
    new_api_key,
)
from memstack.store._contract_work import (
    DEFAULT_LEASE_S,
    CaptureDrops,
    ChatThreads,
    ContextStore,
    IdempotencyStore,
    JobStore,
)
from memstack.store._webhooks import Webhooks
from memstack.store.vectors.base import VectorIndex

__all__ = [
    "API_KEY_PREFIX",
    "DEFAULT_LEASE_S",
    "AgentStore",
    "ArchiveVectors",
    "CaptureDrops",
    "ChatThreads",
    "ContextStore",
    "HeldLock",
    "HiddenStore",
    "IdempotencyStore",
    "JobStore",
    "KeyStore",
    "MemoryIndex",
    "MemoryStore",
    "SessionArchive",
    "SessionStore",
    "Store",
    "UserData",
    "VectorIndex",
    "check_name",
    "hash_api_key",
    "new_api_key",
]


class Store(Protocol):
    """A backend: owns its connections, created with the embedding dimension it stores."""

    @property
    def memories(self) -> MemoryStore: ...

    @property
    def index(self) -> MemoryIndex: ...

    @property
    def search_index(self) -> MemoryIndex:
        """The index that answers searches (retrieval for the context, ``search``, ``recall``): a read replica's
        when the backend has one configured, whose results may lag the writes by the replication delay; else
        :attr:`index`. Reads a write depends on (dedup, limits) use :attr:`index`."""
        ...

    @property
    def keys(self) -> KeyStore: ...

    @property
    def agents(self) -> AgentStore: ...

    @property
    def contexts(self) -> ContextStore: ...

    @property
    def jobs(self) -> JobStore: ...

    @property
    def sessions(self) -> SessionStore: ...

    @property
    def archive(self) -> SessionArchive: ...

    @property
    def archive_vectors(self) -> ArchiveVectors: ...

    @property
    def users(self) -> UserData: ...

    @property
    def vectors(self) -> VectorIndex:
        """The vector index ``index.nearest`` answers through and the writes keep current
        (:mod:`memstack.store.vectors`)."""
        ...

    @property
    def hidden(self) -> HiddenStore: ...

    @property
    def threads(self) -> ChatThreads: ...

    @property
    def idempotency(self) -> IdempotencyStore: ...

    @property
    def drops(self) -> CaptureDrops: ...

    @property
    def webhooks(self) -> Webhooks:
        """A tenant's webhook endpoints and the outbox of their deliveries: one implementation over both backends'
        SQL (:mod:`memstack.store._webhooks`)."""
        ...

    @property
    def dim(self) -> int: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def close(self) -> None: ...
