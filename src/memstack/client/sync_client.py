"""``MemstackClient``: the blocking form of :class:`AsyncMemstackClient`, as :class:`~memstack.blocking.Memstack` is
of ``AsyncMemstack``: the same coroutines run on a private event-loop thread, one line per method, so the two
cannot drift apart."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Self

from memstack.blocking import Blocking, _close, _LoopThread, _Namespace, _next
from memstack.client._namespaces import RemoteAgents, RemoteContexts, RemoteSessions, RemoteUsers
from memstack.client._webhooks import RemoteWebhooks
from memstack.client.async_client import AsyncMemstackClient
from memstack.types import ChatEvent, UserRef

__all__ = ["MemstackClient"]


class MemstackClient:
    """The memstack HTTP API as :class:`~memstack.blocking.Memstack`'s methods, blocking.

    ``with MemstackClient("http://127.0.0.1:8700", api_key="msk_...") as ms: ms.add("alice", "Prefers tea")``."""

    def __init__(
        self, base_url: str | None = None, *, api_key: str | None = None, timeout: float = 120.0, retries: int = 2
    ) -> None:
        self._loop = _LoopThread()
        try:
            self._core = self._loop.run(
                _make(base_url, api_key, timeout, retries)
            )  # httpx binds to the loop it runs on
        except BaseException:
            self._loop.stop()
            raise
        self._open = True
        self.sessions = _Sessions(self._loop, self._core.sessions)
        self.agents = _Agents(self._loop, self._core.agents)
        self.contexts = _Contexts(self._loop, self._core.contexts)
        self.users = _Users(self._loop, self._core.users)
        self.webhooks = _Webhooks(self._loop, self._core.webhooks)

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

    tenant = Blocking(AsyncMemstackClient.tenant)
    chat = Blocking(AsyncMemstackClient.chat)
    end_session = Blocking(AsyncMemstackClient.end_session)
    add = Blocking(AsyncMemstackClient.add)
    add_result = Blocking(AsyncMemstackClient.add_result)
    get = Blocking(AsyncMemstackClient.get)
    list = Blocking(AsyncMemstackClient.list)
    search = Blocking(AsyncMemstackClient.search)
    edit = Blocking(AsyncMemstackClient.edit)
    forget = Blocking(AsyncMemstackClient.forget)
    forget_about = Blocking(AsyncMemstackClient.forget_about)
    restore = Blocking(AsyncMemstackClient.restore)
    delete = Blocking(AsyncMemstackClient.delete)
    history = Blocking(AsyncMemstackClient.history)
    count = Blocking(AsyncMemstackClient.count)
    usage = Blocking(AsyncMemstackClient.usage)
    recall = Blocking(AsyncMemstackClient.recall)
    ingest = Blocking(AsyncMemstackClient.ingest)
    export = Blocking(AsyncMemstackClient.export)
    import_user = Blocking(AsyncMemstackClient.import_user)
    erase = Blocking(AsyncMemstackClient.erase)


class _Sessions(_Namespace[RemoteSessions]):
    list = Blocking(RemoteSessions.list)
    get = Blocking(RemoteSessions.get)
    turns = Blocking(RemoteSessions.turns)


class _Agents(_Namespace[RemoteAgents]):
    list = Blocking(RemoteAgents.list)
    get = Blocking(RemoteAgents.get)
    put = Blocking(RemoteAgents.put)
    delete = Blocking(RemoteAgents.delete)


class _Contexts(_Namespace[RemoteContexts]):
    get = Blocking(RemoteContexts.get)
    recent = Blocking(RemoteContexts.recent)


class _Users(_Namespace[RemoteUsers]):
    list = Blocking(RemoteUsers.list)


class _Webhooks(_Namespace[RemoteWebhooks]):
    create = Blocking(RemoteWebhooks.create)
    list = Blocking(RemoteWebhooks.list)
    get = Blocking(RemoteWebhooks.get)
    update = Blocking(RemoteWebhooks.update)
    delete = Blocking(RemoteWebhooks.delete)
    deliveries = Blocking(RemoteWebhooks.deliveries)
    replay = Blocking(RemoteWebhooks.replay)


async def _make(base_url: str | None, api_key: str | None, timeout: float, retries: int) -> AsyncMemstackClient:
    return AsyncMemstackClient(base_url, api_key=api_key, timeout=timeout, retries=retries)
