"""The engine: :class:`AsyncMemstack` (the async core) and :class:`Memstack` (its thin blocking wrapper).

``AsyncMemstack`` opens what the configuration names (``Config.resolve(**settings)``: the embedder of
``config.embedder`` and the store of ``config.database_url``) and manages a user's long-term memories: add, get,
list, search, edit, forget, restore, delete, history and tier usage. Users are named by id (tenant ``default``) or by
a :class:`~memstack.types.UserRef`.

``Memstack`` runs the same coroutines on a private event-loop thread; each of its methods is one line naming the
coroutine it runs, so the two APIs cannot drift apart.
"""

from __future__ import annotations

import asyncio
import builtins
import threading
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Self, TypeVar

from memstack.config import Config
from memstack.embed import Embedder, get_embedder
from memstack.errors import ConfigError, InputError, LimitReached
from memstack.store import Store, open_store
from memstack.types import (
    Category,
    DeletedBy,
    HistoryAction,
    Memory,
    MemoryEvent,
    MemoryFilter,
    MemoryPatch,
    MemoryUsage,
    NewMemory,
    ScoredMemory,
    Source,
    UserRef,
)

if TYPE_CHECKING:
    from memstack.capture.consolidate import MergeResult
    from memstack.capture.transparency import UsedMemory

__all__ = ["AsyncMemstack", "Memstack"]

P = ParamSpec("P")
R = TypeVar("R")

Categories = str | Category | Iterable[str | Category] | None


def _user(user: str | UserRef, tenant: str | None) -> UserRef:
    if isinstance(user, UserRef):
        if tenant is not None and tenant != user.tenant:
            raise InputError(f"user {user.user_id!r} belongs to tenant {user.tenant!r}, not {tenant!r}")
        return user
    return UserRef(user, tenant or "default")


def _categories(value: Categories) -> tuple[Category, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (Category.parse(value),)
    return tuple(Category.parse(c) for c in value)


class AsyncMemstack:
    """Long-term memory management, async. Use as ``async with AsyncMemstack(home=...) as ms:``.

    Settings are those of :class:`~memstack.config.Config` (``home``, ``database_url``, ``embedder``, ``tiers``…),
    falling back to ``MEMSTACK_*`` environment variables; or pass a ready ``config``."""

    def __init__(self, config: Config | None = None, **settings: Any) -> None:
        if config is not None and settings:
            raise ConfigError("pass either a Config or settings, not both")
        self._given = config
        self._settings = settings
        self._config: Config | None = None
        self._embedder: Embedder | None = None
        self._store: Store | None = None

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def open(self) -> None:
        """Resolve the configuration, load the embedder and open (creating, migrating) the store."""
        if self._store is not None:
            return
        config = self._given or Config.resolve(**self._settings)
        embedder = get_embedder(config.embedder)
        self._store = await open_store(config, dim=embedder.dim, embedder=embedder.name)
        self._config, self._embedder = config, embedder

    async def aclose(self) -> None:
        store, embedder = self._store, self._embedder
        self._store = self._embedder = None
        if store is not None:
            await store.close()
        if embedder is not None:
            await embedder.aclose()

    @property
    def is_open(self) -> bool:
        return self._store is not None

    @property
    def config(self) -> Config:
        if self._config is None:
            raise ConfigError("memstack is not open; use `async with AsyncMemstack(...) as ms:` or await ms.open()")
        return self._config

    @property
    def store(self) -> Store:
        if self._store is None:
            raise ConfigError("memstack is not open; use `async with AsyncMemstack(...) as ms:` or await ms.open()")
        return self._store

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            raise ConfigError("memstack is not open; use `async with AsyncMemstack(...) as ms:` or await ms.open()")
        return self._embedder

    async def _embed(self, text: str) -> Any:
        return (await self.embedder.embed([text]))[0]

    def _limit(self, tier: str | None) -> tuple[str, int | None]:
        tiers = self.config.tiers
        limit = tiers.limit_for(tier)  # InputError naming the configured tiers if unknown
        return (tier or tiers.default_tier).lower(), limit

    # -- memory management ------------------------------------------------------------------------------------------

    async def add(
        self,
        user: str | UserRef,
        content: str,
        *,
        category: str | Category = Category.GENERAL,
        tier: str | None = None,
        source: str | Source = Source.MANUAL,
        agent_id: str | None = None,
        confidence: float = 1.0,
        tenant: str | None = None,
    ) -> Memory:
        """Store one memory; with the user's ``tier`` (default tier if omitted), ``LimitReached`` when full."""
        ref = _user(user, tenant)
        try:
            src = Source(source)
        except ValueError:
            raise InputError(f"unknown source {source!r}; use one of: {', '.join(s.value for s in Source)}") from None
        new = NewMemory(content, Category.parse(category), src, confidence, agent_id)
        tier_name, limit = self._limit(tier)
        try:
            return await self.store.memories.add(ref, new, await self._embed(content), limit=limit, actor="user")
        except LimitReached as full:
            raise LimitReached(tier_name, full.limit) from None

    async def get(self, user: str | UserRef, memory_id: str, *, tenant: str | None = None) -> Memory:
        return await self.store.memories.get(_user(user, tenant), memory_id)

    async def list(
        self,
        user: str | UserRef,
        *,
        category: Categories = None,
        text: str | None = None,
        agent_id: str | None = None,
        include_deleted: bool = False,
        limit: int = 100,
        offset: int = 0,
        tenant: str | None = None,
    ) -> builtins.list[Memory]:
        """Newest first; ``text`` keeps memories containing every word of it."""
        flt = MemoryFilter(_categories(category), text, agent_id, include_deleted, limit, offset)
        return await self.store.index.list(_user(user, tenant), flt)

    async def search(
        self,
        user: str | UserRef,
        query: str,
        *,
        k: int = 5,
        category: Categories = None,
        agent_id: str | None = None,
        tenant: str | None = None,
    ) -> builtins.list[ScoredMemory]:
        """The ``k`` active memories closest in meaning to ``query``, best first (cosine similarity)."""
        if not query.strip():
            raise InputError("search query is empty; pass the text to search for")
        flt = MemoryFilter(categories=_categories(category), agent_id=agent_id)
        return await self.store.index.nearest(_user(user, tenant), await self._embed(query), k, flt)

    async def edit(
        self,
        user: str | UserRef,
        memory_id: str,
        *,
        content: str | None = None,
        category: str | Category | None = None,
        confidence: float | None = None,
        tenant: str | None = None,
    ) -> Memory:
        """Change content (re-embedded), category or confidence; the change is recorded in the history."""
        if content is None and category is None and confidence is None:
            raise InputError("nothing to change: pass new content, category or confidence")
        patch = MemoryPatch(content, Category.parse(category) if category is not None else None, confidence)
        embedding = await self._embed(content) if content is not None else None
        ref = _user(user, tenant)
        return await self.store.memories.update(ref, memory_id, patch, embedding, action=HistoryAction.UPDATE)

    async def forget(
        self,
        user: str | UserRef,
        memory_id: str,
        *,
        by: str | DeletedBy = DeletedBy.USER,
        note: str = "",
        tenant: str | None = None,
    ) -> Memory:
        """Soft delete: the memory stops being used but can be restored."""
        try:
            who = DeletedBy(by)
        except ValueError:
            raise InputError(f"forgotten by must be 'ai' or 'user', got {by!r}") from None
        return await self.store.memories.forget(_user(user, tenant), memory_id, by=who, note=note)

    async def restore(
        self, user: str | UserRef, memory_id: str, *, tier: str | None = None, tenant: str | None = None
    ) -> Memory:
        """Make a forgotten memory active again; the tier limit applies."""
        tier_name, limit = self._limit(tier)
        try:
            return await self.store.memories.restore(_user(user, tenant), memory_id, limit=limit)
        except LimitReached as full:
            raise LimitReached(tier_name, full.limit) from None

    async def delete(self, user: str | UserRef, memory_id: str, *, tenant: str | None = None) -> None:
        """Permanent delete: content and vector are gone; only the history remains."""
        await self.store.memories.delete(_user(user, tenant), memory_id)

    async def history(
        self, user: str | UserRef, memory_id: str, *, tenant: str | None = None
    ) -> builtins.list[MemoryEvent]:
        return await self.store.index.history(_user(user, tenant), memory_id)

    async def count(self, user: str | UserRef, *, tenant: str | None = None) -> int:
        """Active memories of the user."""
        return await self.store.index.count_active(_user(user, tenant))

    async def usage(self, user: str | UserRef, *, tier: str | None = None, tenant: str | None = None) -> MemoryUsage:
        tier_name, limit = self._limit(tier)
        return MemoryUsage(tier_name, await self.count(user, tenant=tenant), limit)

    async def memories_used(
        self, user: str | UserRef, context_id: str, *, tenant: str | None = None
    ) -> builtins.list[UsedMemory]:
        """The long-term memories the response with ``context_id`` used (kept in its context), as they are now:
        forgotten ones included (inactive), permanently deleted ones with ``memory=None``."""
        from memstack.capture.transparency import memories_used

        return await memories_used(self.store, _user(user, tenant), context_id)

    async def consolidate(
        self, user: str | UserRef, *, dry_run: bool = False, tenant: str | None = None
    ) -> builtins.list[MergeResult]:
        """Merge related memories of the user into richer ones; the originals are forgotten with ``merged_into``
        (restorable) and every step is in their history. With ``summarizer_model`` configured the merged text is
        written by that model (checked, else the offline merge); ``dry_run`` shows the merges without storing."""
        from memstack.capture.consolidate import Consolidator, LLMMerger

        ref = _user(user, tenant)
        if self.config.summarizer_model is None:
            return await Consolidator(self.store, self.embedder).consolidate(ref, dry_run=dry_run)
        from memstack.models import get_model

        async with get_model(self.config.summarizer_model) as model:
            consolidator = Consolidator(self.store, self.embedder, merger=LLMMerger(model))
            return await consolidator.consolidate(ref, dry_run=dry_run)


class _LoopThread:
    """A private event loop on a daemon thread: runs coroutines for blocking callers."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="memstack-loop", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, R]) -> R:
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("Memstack methods cannot be called from its own event loop; use AsyncMemstack")
        future: Future[R] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return future.result()

    def stop(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


class _Blocking(Generic[P, R]):
    """Descriptor: the blocking form of one ``AsyncMemstack`` coroutine method, same signature and docs."""

    def __init__(self, method: Callable[Concatenate[AsyncMemstack, P], Coroutine[Any, Any, R]]) -> None:
        self._method = method
        self.__doc__ = method.__doc__

    def __get__(self, obj: Memstack, owner: type[Memstack] | None = None) -> Callable[P, R]:
        method = self._method

        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            return obj._loop.run(method(obj._core, *args, **kwargs))

        call.__doc__ = method.__doc__
        call.__name__ = method.__name__
        return call


class Memstack:
    """The blocking API: the methods of :class:`AsyncMemstack`, run on a private event-loop thread.

    ``with Memstack(home=...) as ms: ms.add("alice", "Prefers tea")``."""

    def __init__(self, config: Config | None = None, **settings: Any) -> None:
        self._loop = _LoopThread()
        self._core = AsyncMemstack(config, **settings)
        try:
            self._loop.run(self._core.open())
        except BaseException:
            self._loop.stop()
            raise

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._core.is_open:
            self._loop.run(self._core.aclose())
        self._loop.stop()

    @property
    def config(self) -> Config:
        return self._core.config

    add = _Blocking(AsyncMemstack.add)
    get = _Blocking(AsyncMemstack.get)
    list = _Blocking(AsyncMemstack.list)
    search = _Blocking(AsyncMemstack.search)
    edit = _Blocking(AsyncMemstack.edit)
    forget = _Blocking(AsyncMemstack.forget)
    restore = _Blocking(AsyncMemstack.restore)
    delete = _Blocking(AsyncMemstack.delete)
    history = _Blocking(AsyncMemstack.history)
    count = _Blocking(AsyncMemstack.count)
    usage = _Blocking(AsyncMemstack.usage)
    consolidate = _Blocking(AsyncMemstack.consolidate)
    memories_used = _Blocking(AsyncMemstack.memories_used)
