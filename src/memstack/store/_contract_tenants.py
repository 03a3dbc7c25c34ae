"""The roles of the storage contract about tenants and users as a whole (:mod:`memstack.store.base`, which exports
them): API keys (``KeyStore``, and the helpers every key store uses), agent definitions (``AgentStore``) and one
user's data, exported, imported or erased (``UserData``)."""

from __future__ import annotations

import builtins
import hashlib
import secrets
from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol, runtime_checkable

from memstack.errors import InputError
from memstack.types import (
    AgentRecord,
    ApiKey,
    ErasureReport,
    UserRecord,
    UserRef,
    UserSummary,
    Vector,
    check_text,
)

__all__ = ["API_KEY_PREFIX", "AgentStore", "KeyStore", "UserData", "check_name", "hash_api_key", "new_api_key"]


#: Every secret starts with this, so a leaked key is recognisable (and secret scanners can be taught it).
API_KEY_PREFIX = "msk_"


def new_api_key() -> str:
    """A fresh secret: ``msk_`` + 40 characters (240 random bits, URL-safe)."""
    return API_KEY_PREFIX + secrets.token_urlsafe(30)


def check_name(kind: str, value: str) -> str:
    """Tenant, key and agent names for the stores: 1-200 printable characters (an empty key name is allowed)."""
    if isinstance(value, str):
        check_text(value, kind)
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
class UserData(Protocol):
    """Everything a store holds about one ``(tenant, user)``, as a whole: handed over (data access) or erased
    (data deletion). The two cover the same tables; a table added to hold user data must be added to both (the
    contract test ``tests/store/test_users_contract.py`` reads the tables from the database catalogue and fails
    otherwise)."""

    def export(self, user: UserRef) -> AsyncIterator[UserRecord]:
        """The user's data a record at a time, read in pages (a large user is never held in memory at once):
        memories (active, forgotten, superseded; and those permanently deleted whose history remains), each with
        its history and what its forget hides (``hides``); sessions, each with its facts, turn log, archived
        messages, artifacts and snapshots; stored context manifests; background jobs recorded for the user. Vectors
        and kept HTTP responses (``idempotency``) are not exported. A user the store has never seen yields
        nothing."""
        ...

    async def erase(self, user: UserRef) -> ErasureReport:
        """Remove every row of the user in one transaction (memories, history, hidden items, full-text terms,
        vectors and per-user search indexes, sessions with their turn log, archive, artifacts and snapshots, archive
        statistics, context manifests, session leases, background jobs, responses kept under idempotency keys) and
        say how many rows of each table went. The same transaction gives the user a new erasure epoch
        (:mod:`memstack.store.fence`): from its commit on, every write of work that pinned the old one is refused
        (``UserErased``), in any process sharing the store. A pending job removed here is never claimed again.
        Erasing a user the store has never seen removes nothing and is not an error. On SQLite the erased text is
        then gone from every file of the store (the database, its write-ahead log, its full-text indexes)."""
        ...

    async def load(
        self,
        user: UserRef,
        document: Mapping[str, builtins.list[dict[str, Any]]],
        vectors: Mapping[str, Vector],
        *,
        merge: bool = False,
    ) -> dict[str, int]:
        """Import: write the sections of an export document (``memories``, ``sessions``, ``contexts``, ``jobs``,
        ``dropped_captures``, as :meth:`export` reads them back) for ``user`` in one transaction under the caller's
        erasure fence, keeping ids, history and times; ``vectors``: each stored memory's, by id. The archived
        messages' vectors are not written (the engine embeds them again). ``ImportConflict`` when the user holds
        data already, or the document names ids another user holds; nothing is written then. Rows per table
        (:mod:`memstack.store._users_load`)."""
        ...

    async def list(self, tenant: str, *, after: str | None = None, limit: int = 100) -> builtins.list[UserSummary]:
        """The tenant's users (anyone with a memory, forgotten ones included, or a session) in user-id order (byte
        order on every backend), after the cursor ``after`` (the last id of the previous page), at most ``limit``
        (1-1000), each with its active memories, sessions and last change. ``InputError`` for a bad limit."""
        ...

    async def epoch(self, user: UserRef) -> int:
        """The user's erasure epoch (``0`` when never erased): what work pins before it reads the user's data
        (:mod:`memstack.store.fence`)."""
        ...
