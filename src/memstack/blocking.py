"""The blocking API: :class:`Memstack` runs the methods of :class:`~memstack.engine.AsyncMemstack` on a private
event-loop thread, for scripts and notebooks that do not use asyncio."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Protocol, Self, TypeVar

from memstack.config import Config
from memstack.engine import Agents, AsyncMemstack, Contexts, Keys, Sessions, Users, Webhooks
from memstack.turn.models import Models, Tuning
from memstack.types import ChatEvent, UserRef

if TYPE_CHECKING:
    from memstack.context import Agent

__all__ = ["BlockingAgents", "BlockingContexts", "BlockingKeys", "BlockingSessions", "Memstack"]

P = ParamSpec("P")
R = TypeVar("R")


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


async def _next(events: AsyncIterator[ChatEvent]) -> ChatEvent | None:
    try:
        return await anext(events)
    except StopAsyncIteration:
        return None


async def _close(events: AsyncIterator[ChatEvent]) -> None:
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()


C = TypeVar("C")
C_co = TypeVar("C_co", covariant=True)


class _Wrapped(Protocol[C_co]):
    """What :class:`Blocking` needs of its owner: the private loop thread and the async object it drives."""

    @property
    def _loop(self) -> _LoopThread: ...

    @property
    def _core(self) -> C_co: ...


class Blocking(Generic[C, P, R]):
    """Descriptor: the blocking form of one coroutine method of the owner's async core (``AsyncMemstack`` for
    :class:`Memstack`, ``AsyncMemstackClient`` for the client), same signature and docs (``help()``, IDEs and
    ``inspect.signature`` show the coroutine's parameters, not ``*args, **kwargs``)."""

    def __init__(self, method: Callable[Concatenate[C, P], Coroutine[Any, Any, R]]) -> None:
        self._method = method
        self.__doc__ = method.__doc__
        full = inspect.signature(method)
        self._signature = full.replace(parameters=list(full.parameters.values())[1:])  # without self

    def __set_name__(self, owner: type, name: str) -> None:
        self._qualname = f"{owner.__qualname__}.{name}"

    def __get__(self, obj: _Wrapped[C] | None, owner: type | None = None) -> Callable[P, R]:
        method = self._method

        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            if obj is None:
                raise TypeError(f"{self._qualname} is a method: call it on an instance")
            return obj._loop.run(method(obj._core, *args, **kwargs))

        call.__doc__ = method.__doc__
        call.__name__ = method.__name__
        call.__qualname__ = getattr(self, "_qualname", method.__qualname__)
        call.__module__ = method.__module__
        call.__signature__ = self._signature  # type: ignore[attr-defined]
        return call


class _Namespace(Generic[C]):
    """The blocking form of one of the engine's namespaces (``sessions``, ``agents``…): its coroutines, run on the
    owner's loop thread by :class:`Blocking` descriptors."""

    def __init__(self, loop: _LoopThread, core: C) -> None:
        self._loop = loop
        self._core = core


class BlockingSessions(_Namespace[Sessions]):
    """:class:`~memstack.engine.Sessions`, blocking."""

    list = Blocking(Sessions.list)
    current = Blocking(Sessions.current)
    get = Blocking(Sessions.get)
    turns = Blocking(Sessions.turns)
    snapshots = Blocking(Sessions.snapshots)
    artifacts = Blocking(Sessions.artifacts)
    search = Blocking(Sessions.search)


class BlockingAgents(_Namespace[Agents]):
    """:class:`~memstack.engine.Agents`, blocking."""

    parse = staticmethod(Agents.parse)
    list = Blocking(Agents.list)
    get = Blocking(Agents.get)
    put = Blocking(Agents.put)
    delete = Blocking(Agents.delete)
    load = Blocking(Agents.load)


class BlockingContexts(_Namespace[Contexts]):
    """:class:`~memstack.engine.Contexts`, blocking."""

    get = Blocking(Contexts.get)
    recent = Blocking(Contexts.recent)


class BlockingKeys(_Namespace[Keys]):
    """:class:`~memstack.engine.Keys`, blocking."""

    create = Blocking(Keys.create)
    list = Blocking(Keys.list)
    revoke = Blocking(Keys.revoke)
    authenticate = Blocking(Keys.authenticate)


class BlockingUsers(_Namespace[Users]):
    """:class:`~memstack.engine.Users`, blocking: the tenant's users and imports (their records and fences are
    async only)."""

    list = Blocking(Users.list)
    import_mem0 = Blocking(Users.import_mem0)
    import_messages = Blocking(Users.import_messages)


class BlockingWebhooks(_Namespace[Webhooks]):
    """:class:`~memstack.engine.Webhooks`, blocking: the tenant's webhook endpoints and their deliveries."""

    create = Blocking(Webhooks.create)
    list = Blocking(Webhooks.list)
    get = Blocking(Webhooks.get)
    update = Blocking(Webhooks.update)
    delete = Blocking(Webhooks.delete)
    deliveries = Blocking(Webhooks.deliveries)
    replay = Blocking(Webhooks.replay)


class Memstack:
    """The blocking API: the methods of :class:`AsyncMemstack`, run on a private event-loop thread.

    ``with Memstack(home=...) as ms: ms.add("alice", "Prefers tea")``."""

    def __init__(
        self,
        config: Config | None = None,
        *,
        models: Models | None = None,
        tuning: Tuning | None = None,
        resume: bool = True,
        **settings: Any,
    ) -> None:
        self._loop = _LoopThread()
        self._core = AsyncMemstack(config, models=models, tuning=tuning, resume=resume, **settings)
        self.sessions = BlockingSessions(self._loop, self._core.sessions)
        self.agents = BlockingAgents(self._loop, self._core.agents)
        self.contexts = BlockingContexts(self._loop, self._core.contexts)
        self.keys = BlockingKeys(self._loop, self._core.keys)
        self.users = BlockingUsers(self._loop, self._core.users)
        self.webhooks = BlockingWebhooks(self._loop, self._core.webhooks)
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

    def chat_stream(self, user_id: str | UserRef, message: str, **options: Any) -> Iterator[ChatEvent]:
        """The events of :meth:`AsyncMemstack.chat_stream` (same arguments), as a blocking iterator."""
        events = self._core.chat_stream(user_id, message, **options)
        try:
            while (event := self._loop.run(_next(events))) is not None:
                yield event
        finally:
            self._loop.run(_close(events))

    def register_agent(self, agent: Agent | str | Path) -> Agent:
        return self._core.register_agent(agent)

    chat = Blocking(AsyncMemstack.chat)
    delegate = Blocking(AsyncMemstack.delegate)
    end_session = Blocking(AsyncMemstack.end_session)
    wait_idle = Blocking(AsyncMemstack.wait_idle)
    add = Blocking(AsyncMemstack.add)
    add_result = Blocking(AsyncMemstack.add_result)
    get = Blocking(AsyncMemstack.get)
    list = Blocking(AsyncMemstack.list)
    search = Blocking(AsyncMemstack.search)
    edit = Blocking(AsyncMemstack.edit)
    supersede = Blocking(AsyncMemstack.supersede)
    forget = Blocking(AsyncMemstack.forget)
    forget_about = Blocking(AsyncMemstack.forget_about)
    restore = Blocking(AsyncMemstack.restore)
    delete = Blocking(AsyncMemstack.delete)
    history = Blocking(AsyncMemstack.history)
    count = Blocking(AsyncMemstack.count)
    usage = Blocking(AsyncMemstack.usage)
    consolidate = Blocking(AsyncMemstack.consolidate)
    recall = Blocking(AsyncMemstack.recall)
    ingest = Blocking(AsyncMemstack.ingest)
    memories_used = Blocking(AsyncMemstack.memories_used)
    export = Blocking(AsyncMemstack.export)
    import_user = Blocking(AsyncMemstack.import_user)
    erase = Blocking(AsyncMemstack.erase)
