"""What PostgreSQL's vector index needs of its store, as Protocols.

The backend composes the index (``store/postgres`` imports ``store/vectors``), so the index never imports the
backend: it is handed the store's pool (:class:`Pool`, :class:`memstack.store.postgres._db.Database`) and erasure
fence (:class:`Fencing`, the module :mod:`memstack.store.postgres._fence`), and imports point one way.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import psycopg

from memstack.store.fence import Fence
from memstack.types import UserRef

__all__ = ["Conn", "Fencing", "Pool"]

Conn = psycopg.AsyncConnection[Any]


class Pool(Protocol):
    """The store's connections."""

    @property
    def pooler(self) -> str:
        """``"transaction"`` behind a transaction pooler (settings per transaction), else ``"none"``."""
        ...

    def connection(self) -> AbstractAsyncContextManager[Conn]:
        """A pooled connection; driver errors come out as memstack errors."""
        ...

    def session(self) -> AbstractAsyncContextManager[Conn]:
        """A connection that is one server session while held (session advisory locks, concurrent index builds)."""
        ...

    def vector_param(self, vector: Any) -> Any:
        """A query vector as the store sends it."""
        ...


class Fencing(Protocol):
    """The store's erasure fence (:mod:`memstack.store.fence`) in SQL."""

    USER_ERASED: str  # the SQLSTATE a fenced write raises when the user was erased meanwhile

    async def enter_fence(self, conn: Conn, fence: Fence | None = None) -> None: ...

    async def erasure_epoch(self, conn: Conn, user: UserRef) -> int: ...
