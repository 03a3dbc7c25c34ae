"""A mem0 drop-in: ``from memstack.compat.mem0 import Memory`` where mem0 code said ``from mem0 import Memory``.

``Memory`` / ``AsyncMemory`` run memstack embedded (its settings as keyword arguments: ``Memory(home="data")``);
``MemoryClient`` / ``AsyncMemoryClient`` talk to a memstack server. All four have mem0's method names, parameters
and return shapes (``add``, ``search``, ``get``, ``get_all``, ``update``, ``delete``, ``delete_all``,
``history``); ``docs/adapters-mem0.md`` lists every difference. The mapping is written once, on the async core
(:mod:`._async`); the blocking classes run its coroutines on a private loop thread, as
:class:`~memstack.blocking.Memstack` does for ``AsyncMemstack``. mem0 itself is never imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from memstack.blocking import Blocking, _LoopThread
from memstack.compat.mem0._async import AsyncMemory, AsyncMemoryClient, settings_of

__all__ = ["AsyncMemory", "AsyncMemoryClient", "Memory", "MemoryClient"]


class _Blocking:
    """The blocking form of an :class:`AsyncMemory`: each method one line, so the two cannot drift apart."""

    _core: AsyncMemory

    def __init__(self, make: Any) -> None:
        self._loop = _LoopThread()
        try:
            self._core = self._loop.run(_opened(make))  # made on the loop it will run on (httpx binds to it)
        except BaseException:
            self._loop.stop()
            raise

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close what this object opened (the embedded engine or the HTTP client) and its loop thread."""
        if hasattr(self, "_core"):
            self._loop.run(self._core.aclose())
            del self._core
        self._loop.stop()

    add = Blocking(AsyncMemory.add)
    search = Blocking(AsyncMemory.search)
    get = Blocking(AsyncMemory.get)
    get_all = Blocking(AsyncMemory.get_all)
    update = Blocking(AsyncMemory.update)
    delete = Blocking(AsyncMemory.delete)
    delete_all = Blocking(AsyncMemory.delete_all)
    history = Blocking(AsyncMemory.history)
    reset = Blocking(AsyncMemory.reset)


async def _opened(make: Any) -> AsyncMemory:
    core: AsyncMemory = make()
    await core.open()
    return core


class Memory(_Blocking):
    """mem0's ``Memory`` on an embedded memstack: ``Memory(home="data", embedder="local:minilm")`` (memstack's
    settings, :class:`~memstack.config.Config`; none: its defaults and ``MEMSTACK_*`` environment)."""

    def __init__(self, *, tenant: str | None = None, **settings: Any) -> None:
        super().__init__(lambda: AsyncMemory(tenant=tenant, **settings))

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Self:
        """See :meth:`AsyncMemory.from_config`."""
        return cls(**settings_of(config_dict))


class MemoryClient(_Blocking):
    """mem0's ``MemoryClient`` on a memstack server: ``MemoryClient(host="http://127.0.0.1:8700",
    api_key="msk_...")``."""

    def __init__(
        self, api_key: str | None = None, host: str | None = None, *, tenant: str | None = None,
        timeout: float = 120.0,
    ) -> None:  # fmt: skip
        super().__init__(lambda: AsyncMemoryClient(api_key, host, tenant=tenant, timeout=timeout))
