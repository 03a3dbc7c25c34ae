"""What a model call costs: a price table per model, in US dollars per million input and output tokens.

The built-in table holds OpenAI's published list prices (:data:`PRICES_AS_OF`) for the models memstack's settings
name most often, keyed by memstack's model string (``openai:gpt-4o-mini``): a price belongs to an endpoint, so
``ollama:…`` or ``custom:…`` (a model on your own machine, or someone else's gateway with its own rates) has no
price unless you give it one. Prices change: ``model_prices`` (``$MEMSTACK_MODEL_PRICES``) overrides the table and
adds models, ``MODEL=INPUT/OUTPUT`` pairs separated by commas::

    MEMSTACK_MODEL_PRICES="openai:gpt-4o-mini=0.15/0.60,custom:llama-70b=0.59/0.79,ollama:llama3.2=0/0"

A model with no price reports its tokens with ``cost_usd`` ``None``: an estimate is only as honest as its rates, so
an unknown rate is never guessed (nor taken as zero: a local model is free only when you say so, ``=0/0``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from memstack.errors import ConfigError

__all__ = ["PRICES", "PRICES_AS_OF", "Price", "PriceTable", "parse_prices"]

#: When the built-in table was checked against the provider's price page.
PRICES_AS_OF = "2025-08"


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million input (prompt) and output (completion) tokens."""

    input_per_m: float
    output_per_m: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_m + completion_tokens * self.output_per_m) / 1_000_000


PRICES: Mapping[str, Price] = MappingProxyType(
    {
        "openai:gpt-4o": Price(2.50, 10.00),
        "openai:gpt-4o-mini": Price(0.15, 0.60),
        "openai:gpt-4.1": Price(2.00, 8.00),
        "openai:gpt-4.1-mini": Price(0.40, 1.60),
        "openai:gpt-4.1-nano": Price(0.10, 0.40),
        "openai:gpt-5": Price(1.25, 10.00),
        "openai:gpt-5-mini": Price(0.25, 2.00),
        "openai:gpt-5-nano": Price(0.05, 0.40),
        "openai:o3-mini": Price(1.10, 4.40),
        "openai:o4-mini": Price(1.10, 4.40),
        "openai:text-embedding-3-small": Price(0.02, 0.0),
        "openai:text-embedding-3-large": Price(0.13, 0.0),
        "openai:text-embedding-ada-002": Price(0.10, 0.0),
    }
)


class PriceTable:
    """The built-in :data:`PRICES` with ``overrides`` on top; :meth:`cost` of a call, ``None`` for an unknown model.

    A name is looked up as given, then without a size suffix an embedder's name carries (``…@512``)."""

    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        self._prices = {**PRICES, **(overrides or {})}

    def price(self, model: str) -> Price | None:
        found = self._prices.get(model)
        if found is None and "@" in model:
            found = self._prices.get(model.rpartition("@")[0])
        return found

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        price = self.price(model)
        return None if price is None else price.cost(prompt_tokens, completion_tokens)


def parse_prices(spec: str, *, setting: str = "model_prices") -> dict[str, Price]:
    """``MODEL=INPUT/OUTPUT,…`` (dollars per million tokens) → prices; ``ConfigError`` naming ``setting`` and the
    entry at fault."""
    out: dict[str, Price] = {}
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            continue
        model, eq, rates = entry.rpartition("=")
        given, slash, taken = rates.partition("/")
        try:
            price = Price(float(given), float(taken))
        except ValueError:
            price = None
        if not eq or not model.strip() or not slash or price is None or min(price.input_per_m, price.output_per_m) < 0:
            raise ConfigError(
                f"{setting}: {entry!r} is not MODEL=INPUT/OUTPUT (US dollars per million tokens, e.g. "
                "openai:gpt-4o-mini=0.15/0.60)"
            )
        if not all(map(_finite, (price.input_per_m, price.output_per_m))):
            raise ConfigError(f"{setting}: {entry!r} has a price that is not a finite number")
        out[model.strip()] = price
    return out


def _finite(value: float) -> bool:
    return value == value and value not in (float("inf"), float("-inf"))
