"""An engine's telemetry hub: where its model calls, turns and background work are reported, and who listens."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memstack.observe.accounting import ModelCall
from memstack.observe.prices import PriceTable
from memstack.observe.usage import UsageBook
from memstack.types import TurnTimings

__all__ = ["Telemetry"]


@dataclass(slots=True)
class Telemetry:
    """An engine's counting: its prices, its usage sums per user and tenant (:class:`UsageBook`), and whoever
    else listens (a server's Prometheus metrics).

    Listeners are plain callables, called in the event loop; one that raises is a bug and raises. ``depths``
    reads the engine's queues when a scrape asks (turn work admitted and waiting, background tasks, running
    detections), set by the engine's turns."""

    prices: PriceTable = field(default_factory=PriceTable)
    usage: UsageBook = field(default_factory=UsageBook)
    on_model_call: list[Callable[[ModelCall], None]] = field(default_factory=list)
    on_turn: list[Callable[[str, TurnTimings], None]] = field(default_factory=list)  # (tenant, the turn's)
    on_job: list[Callable[[str, str], None]] = field(default_factory=list)  # (kind, outcome)
    depths: Callable[[], dict[str, int]] = dict

    def model_call(self, call: ModelCall) -> None:
        self.usage(call)
        for listener in self.on_model_call:
            listener(call)

    def turn(self, tenant: str, timings: TurnTimings) -> None:
        for listener in self.on_turn:
            listener(tenant, timings)

    def job(self, kind: str, outcome: str) -> None:
        """A piece of background work ended: ``outcome`` is ``ok``, ``failed`` or ``cancelled``."""
        for listener in self.on_job:
            listener(kind, outcome)
