"""Work a turn leaves running after its reply: tracked, logged when it fails, drained on shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["Background"]

log = logging.getLogger("memstack.turn")

T = TypeVar("T")


class Background:
    """A set of tasks that outlive the call that started them.

    A task that fails is logged with its traceback (never silently dropped); :meth:`drain` waits for every task,
    including tasks started while it waits, and cancels what is left after the timeout. ``on_done(kind, outcome)``
    hears of every task that ends (``kind``: its name up to the first ``:``, e.g. ``phase2``; ``outcome``: ``ok``,
    ``failed`` or ``cancelled``): the metrics of background work."""

    def __init__(self, on_done: Callable[[str, str], None] | None = None) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._on_done = on_done

    def __len__(self) -> int:
        return len(self._tasks)

    def spawn(self, coro: Coroutine[Any, Any, T], *, name: str) -> asyncio.Task[T]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        exc = None if task.cancelled() else task.exception()
        if exc is not None:
            log.error("background task %s failed", task.get_name(), exc_info=exc)
        if self._on_done is not None:
            outcome = "cancelled" if task.cancelled() else "failed" if exc is not None else "ok"
            self._on_done(task.get_name().partition(":")[0], outcome)

    async def drain(self, timeout_s: float) -> bool:
        """Wait for every task (new ones too) up to ``timeout_s`` seconds; cancel the rest. True when all finished."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self._tasks:
            left = deadline - loop.time()
            if left <= 0:
                break
            await asyncio.wait(set(self._tasks), timeout=left)
        pending = set(self._tasks)
        for task in pending:
            log.warning("background task %s did not finish within %gs; cancelled", task.get_name(), timeout_s)
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        return not pending
