"""A turn's stage timings (:class:`~memstack.types.TurnTimings`), taken as the turn runs.

A :class:`Stopwatch` is one monotonic clock (``time.perf_counter``) read at the end of each stage: the time since
the previous reading goes to the stage just finished, so the stages are consecutive and add up to the turn's time
with nothing counted twice. A few clock readings and dictionary updates a turn: microseconds, cheap enough to take
on every turn, so the figures describe real turns rather than a benchmark's instrumented copy.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import TypeVar

from memstack.types import TurnTimings

__all__ = ["Stopwatch"]

T = TypeVar("T")


class Stopwatch:
    """The stages of one turn, in milliseconds."""

    __slots__ = ("_last", "_start", "ends", "ms")

    def __init__(self) -> None:
        self._start = self._last = time.perf_counter()
        self.ms: dict[str, float] = {}
        self.ends: dict[str, float] = {}  # when work running beside the clock finished (:meth:`until`)

    def lap(self, stage: str) -> None:
        """The time since the previous reading goes to ``stage``."""
        now = time.perf_counter()
        self.ms[stage] = self.ms.get(stage, 0.0) + (now - self._last) * 1000
        self._last = now

    def carve(self, stage: str, part: str, ms: float) -> None:
        """``ms`` of what ``stage`` holds was ``part`` (a piece timed inside it, such as the guard in the assembly)."""
        part_ms = min(max(ms, 0.0), self.ms.get(stage, 0.0))
        self.ms[stage] = self.ms.get(stage, 0.0) - part_ms
        self.ms[part] = self.ms.get(part, 0.0) + part_ms

    def lap_at(self, stage: str, end: float) -> None:
        """Like :meth:`lap`, for a stage that ended at ``end`` (a reading of :meth:`until`), earlier than now."""
        end = max(end, self._last)
        self.ms[stage] = self.ms.get(stage, 0.0) + (end - self._last) * 1000
        self._last = end

    async def until(self, name: str, work: Awaitable[T]) -> T:
        """Await ``work`` and note when it finished (``ends[name]``), for work awaited together with other work."""
        try:
            return await work
        finally:
            self.ends[name] = time.perf_counter()

    def timings(self) -> TurnTimings:
        total = (time.perf_counter() - self._start) * 1000
        return TurnTimings(total_ms=total, **{f"{k}_ms": v for k, v in self.ms.items()})
