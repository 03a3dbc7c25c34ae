"""``MemstackClient``: the blocking form of :class:`AsyncMemstackClient`, as :class:`~memstack.blocking.Memstack` is
of ``AsyncMemstack``: the same coroutines run on a private event-loop thread, one line per method, so the two
cannot drift apart."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar

from memstack.blocking import _close, _LoopThread, _next
from memstack.client.async_client import AsyncMemstackClient
from memstack.types import ChatEvent, UserRef

__all__ = ["MemstackClient"]

P = ParamSpec("P")
R = TypeVar("R")


class _Blocking(Generic[P, R]):
    """Descriptor: the blocking form of one ``AsyncMemstackClient`` coroutine method, same signature and docs."""

    def __init__(self, method: Callable[Concatenate[AsyncMemstackClient, P], Coroutine[Any, Any, R]]) -> None:
        self._method = method
        self.__doc__ = method.__doc__

    def __get__(self, obj: MemstackClient, owner: type[MemstackClient] | None = None) -> Callable[P, R]:
        method = self._method

        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            return obj._loop.run(method(obj._core, *args, **kwargs))

        call.__doc__ = method.__doc__
        call.__name__ = method.__name__
        return call


class MemstackClient:
    """The memstack HTTP API as :class:`~memstack.blocking.Memstack`'s methods, blocking.

    ``with MemstackClient("http://127.0.0.1:8700", api_key="msk_...") as ms: ms.add("alice", "Prefers tea")``."""

    def __init__(self, base_url: str | None = None, *, api_key: str | None = None, timeout: float = 120.0) -> None:
        self._loop = _LoopThread()
        try:
            self._core = self._loop.run(_make(base_url, api_key, timeout))  # httpx binds to the loop it runs on
        except BaseException:
            self._loop.stop()
            raise
        self._open = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._open:
            self._open = False
            self._loop.run(self._core.aclose())
        self._loop.stop()

    @property
    def base_url(self) -> str:
        return self._core.base_url

    def chat_stream(self, user_id: str | UserRef, message: str, **options: Any) -> Iterator[ChatEvent]:
        """The events of :meth:`AsyncMemstackClient.chat_stream` (same arguments), as a blocking iterator."""
        events = self._core.chat_stream(user_id, message, **options)
        try:
            while (event := self._loop.run(_next(events))) is not None:
                yield event
        finally:
            self._loop.run(_close(events))

    tenant = _Blocking(AsyncMemstackClient.tenant)
    chat = _Blocking(AsyncMemstackClient.chat)
    end_session = _Blocking(AsyncMemstackClient.end_session)
    add = _Blocking(AsyncMemstackClient.add)
    get = _Blocking(AsyncMemstackClient.get)
    list = _Blocking(AsyncMemstackClient.list)
    search = _Blocking(AsyncMemstackClient.search)
    edit = _Blocking(AsyncMemstackClient.edit)
    forget = _Blocking(AsyncMemstackClient.forget)
    restore = _Blocking(AsyncMemstackClient.restore)
    delete = _Blocking(AsyncMemstackClient.delete)
    history = _Blocking(AsyncMemstackClient.history)
    count = _Blocking(AsyncMemstackClient.count)
    usage = _Blocking(AsyncMemstackClient.usage)
    recall = _Blocking(AsyncMemstackClient.recall)
    ingest = _Blocking(AsyncMemstackClient.ingest)
    export = _Blocking(AsyncMemstackClient.export)
    erase = _Blocking(AsyncMemstackClient.erase)


async def _make(base_url: str | None, api_key: str | None, timeout: float) -> AsyncMemstackClient:
    return AsyncMemstackClient(base_url, api_key=api_key, timeout=timeout)
