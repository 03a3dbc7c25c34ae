"""Watching memstack run: what model calls cost, Prometheus metrics, OpenTelemetry traces.

- :mod:`~memstack.observe.accounting`: every model call counted once, where it is made, by role and account
  (context variables: no caller passes anything along); an engine's :class:`Telemetry` hands the calls, turns and
  background work to its listeners.
- :mod:`~memstack.observe.prices`: the price table (per model, dollars per million input/output tokens,
  ``$MEMSTACK_MODEL_PRICES`` on top); an unknown model's cost is ``None``, never a guess.
- :mod:`~memstack.observe.usage`: sums per user and tenant (what ``usage`` reports), in this process.
- :mod:`~memstack.observe.metrics`: the ``/metrics`` registry (``prometheus-client``, imported only by a server).
- :mod:`~memstack.observe.tracing`: spans of turns, their stages and background work (``memstack[otel]``; off
  unless configured, and then one check of a global per hook).

It sits beside the model clients (which count their calls through it) and below the turn, the engine and the
server, which report to it; it imports nothing above them.
"""

from __future__ import annotations

from memstack.config import Config, setting
from memstack.observe import tracing
from memstack.observe.accounting import (
    ROLES,
    Account,
    Ledger,
    ModelCall,
    accounting,
    current_account,
    record_model_call,
    role,
)
from memstack.observe.prices import PriceTable, parse_prices
from memstack.observe.telemetry import Telemetry
from memstack.observe.usage import UsageBook

__all__ = [
    "ROLES",
    "Account",
    "Ledger",
    "ModelCall",
    "PriceTable",
    "Telemetry",
    "UsageBook",
    "accounting",
    "configure",
    "current_account",
    "parse_prices",
    "record_model_call",
    "role",
]


def configure(telemetry: Telemetry, config: Config) -> None:
    """At an engine's open: ``config.model_prices`` on top of the price table (``ConfigError`` naming the setting
    when malformed), and traces on if the environment configured them (:func:`tracing.from_env`)."""
    if config.model_prices:
        telemetry.prices = PriceTable(parse_prices(config.model_prices, setting=setting("model_prices")))
    tracing.from_env()
