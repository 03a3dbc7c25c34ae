"""The storage contract: one small async Protocol per role.

A backend is one subpackage that implements every role and passes ``tests/store/test_contract.py``.
Every method is scoped by a :class:`~memstack.types.UserRef` *inside* the query, never filtered after.
Writes are transactions: on any failure nothing is half-written and a :class:`~memstack.errors.StoreError`
(or an :class:`~memstack.errors.InputError` for bad arguments) is raised.
"""

from __future__ import annotations

import builtins
import hashlib
import secrets
from collections.abc import Sequence
from typing import Any, Protocol, Self, runtime_checkable

from memstack.errors import InputError
from memstack.types import (
    AgentRecord,
    ApiKey,
    DeletedBy,
    HistoryAction,
    Manifest,
    Memory,
    MemoryEvent,
    MemoryFilter,
    MemoryPatch,
    NewMemory,
    ScoredMemory,
    UserRef,
    Vector,
)

__all__ = [
    "API_KEY_PREFIX",
    "AgentStore",
    "ContextStore",
    "KeyStore",
    "MemoryIndex",
    "MemoryStore",
    "Store",
    "check_name",
    "hash_api_key",
    "new_api_key",
]


@runtime_checkable
class MemoryStore(Protocol):
    """Long-term memories and their append-only history."""

    async def add(
        self, user: UserRef, memory: NewMemory, embedding: Vector, *, limit: int | None = None, actor: str = "user"
    ) -> Memory:
        """Insert one memory. With ``limit``, raise ``LimitReached`` if the user already has that many active
        memories; the count and the insert are one transaction."""
        ...

    async def add_many(
        self, user: UserRef, memories: Sequence[NewMemory], embeddings: Vector, *, actor: str = "system"
    ) -> builtins.list[Memory]:
        """Bulk insert (imports, benchmarks, re-embedding): one transaction, no tier limit, history recorded."""
        ...

    async def get(self, user: UserRef, memory_id: str) -> Memory:
        """One memory, active or not (``NotFound`` if it is not this user's)."""
        ...

    async def update(
        self,
        user: UserRef,
        memory_id: str,
        patch: MemoryPatch,
        embedding: Vector | None = None,
        *,
        action: HistoryAction = HistoryAction.UPDATE,
        actor: str = "user",
        note: str = "",
    ) -> Memory:
        """Change fields (``embedding`` must accompany a content change) and record before/after."""
        ...

    async def forget(
        self, user: UserRef, memory_id: str, *, by: DeletedBy, merged_into: str | None = None, note: str = ""
    ) -> Memory:
        """Soft delete: inactive, restorable, history kept. ``merged_into`` records a consolidation."""
        ...

    async def restore(self, user: UserRef, memory_id: str, *, limit: int | None = None) -> Memory:
        """Make a soft-deleted memory active again (tier limit applies)."""
        ...

    async def delete(self, user: UserRef, memory_id: str) -> None:
        """Permanent delete: the row and its vector are gone; a ``delete`` history row remains."""
        ...


@runtime_checkable
class MemoryIndex(Protocol):
    """Reading memories back: listing, counting, nearest-neighbour and full-text search."""

    async def list(self, user: UserRef, flt: MemoryFilter | None = None) -> builtins.list[Memory]:
        """Newest first, filtered by category / text / agent / deleted, paged by limit and offset."""
        ...

    async def count_active(self, user: UserRef) -> int: ...

    async def history(self, user: UserRef, memory_id: str) -> builtins.list[MemoryEvent]:
        """Every create/update/forget/restore/merge/delete of one memory, oldest first."""
        ...

    async def nearest(
        self, user: UserRef, vector: Vector, k: int, flt: MemoryFilter | None = None
    ) -> builtins.list[ScoredMemory]:
        """The ``k`` active memories closest to ``vector`` by cosine similarity, best first, in one call.

        Exactly ``min(k, matching memories)`` results: never fewer because of index post-filtering."""
        ...

    async def search_text(self, user: UserRef, query: str, k: int) -> builtins.list[ScoredMemory]:
        """Full-text (BM25-style) search over active memories, best first."""
        ...


# -- tenants: API keys and agent definitions ---------------------------------------------------------------------------

#: Every secret starts with this, so a leaked key is recognisable (and secret scanners can be taught it).
API_KEY_PREFIX = "msk_"


def new_api_key() -> str:
    """A fresh secret: ``msk_`` + 40 characters (240 random bits, URL-safe)."""
    return API_KEY_PREFIX + secrets.token_urlsafe(30)


def check_name(kind: str, value: str) -> str:
    """Tenant, key and agent names for the stores: 1-200 printable characters (an empty key name is allowed)."""
    if not isinstance(value, str) or len(value) > 200 or not value.isprintable() or (kind != "key name" and not value):
        raise InputError(f"{kind} must be 1-200 printable characters, got {value!r}")
    return value


def hash_api_key(secret: str) -> str:
    """What a store keeps instead of the secret. A plain SHA-256 is enough: the secret is random, not a password."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@runtime_checkable
class KeyStore(Protocol):
    """API keys: each scopes every request made with it to one tenant. Only hashes are stored."""

    async def create(self, tenant: str, *, name: str = "") -> tuple[ApiKey, str]:
        """A new key for ``tenant``: its record and the secret, which is never available again."""
        ...

    async def authenticate(self, secret: str) -> ApiKey | None:
        """The active key whose secret this is; ``None`` for an unknown or revoked one."""
        ...

    async def list(self, tenant: str | None = None, *, include_revoked: bool = False) -> builtins.list[ApiKey]:
        """Keys of one tenant (every tenant when ``None``), oldest first."""
        ...

    async def revoke(self, key_id: str) -> ApiKey:
        """Revoke by public id (``key_…``); ``NotFound`` if there is no such key. Revoking twice is harmless."""
        ...


@runtime_checkable
class AgentStore(Protocol):
    """Agent definitions stored per tenant (the plain values of an agent YAML), by name."""

    async def put(self, tenant: str, name: str, definition: dict[str, Any]) -> AgentRecord:
        """Create or replace; the caller validates the definition first."""
        ...

    async def get(self, tenant: str, name: str) -> AgentRecord:
        """``NotFound`` if this tenant has no agent of that name."""
        ...

    async def list(self, tenant: str) -> builtins.list[AgentRecord]:
        """The tenant's agents by name."""
        ...

    async def delete(self, tenant: str, name: str) -> None:
        """``NotFound`` if this tenant has no agent of that name."""
        ...


@runtime_checkable
class ContextStore(Protocol):
    """Context manifests, one per response: what the model saw (``memstack context explain``).

    A manifest is written once, keyed by its context id, and belongs to one ``(tenant, user)``. Manifests of a
    temporary chat are never stored: ``save`` refuses them."""

    async def save(self, user: UserRef, manifest: Manifest, *, session_id: str | None = None) -> None:
        """Keep ``manifest``. Raises ``InputError`` for a temporary chat's manifest or a context id already kept."""
        ...

    async def get(self, tenant: str, context_id: str, *, user_id: str | None = None) -> Manifest:
        """One manifest of ``tenant`` (and of ``user_id`` when given); ``NotFound`` otherwise."""
        ...

    async def recent(self, user: UserRef, *, session_id: str | None = None, limit: int = 20) -> builtins.list[Manifest]:
        """The user's latest manifests (of one session when given), newest first."""
        ...


class Store(Protocol):
    """A backend: owns its connections, created with the embedding dimension it stores."""

    @property
    def memories(self) -> MemoryStore: ...

    @property
    def index(self) -> MemoryIndex: ...

    @property
    def keys(self) -> KeyStore: ...

    @property
    def agents(self) -> AgentStore: ...

    @property
    def contexts(self) -> ContextStore: ...

    @property
    def dim(self) -> int: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def close(self) -> None: ...
