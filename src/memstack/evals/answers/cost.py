"""What a run would cost on a paid API, printed before it starts when the provider's prices are known.

Prices are US dollars per million tokens (input, output) as the providers listed them in 2025; a model not listed
(a local one, or a new one) gets no estimate. Output tokens are guessed: a short answer, a one-sentence verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from memstack.evals.answers.cache import AnswerCache, call_key
from memstack.evals.answers.run import Prepared

__all__ = ["PRICES", "estimate"]

PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
}

_ANSWER_OUT = 30  # tokens of a short answer
_JUDGE_IN = 260  # the judge prompt with a question and two answers
_JUDGE_OUT = 50


def _price(model: str) -> tuple[float, float] | None:
    return PRICES.get(model.split(":", 1)[-1])


def estimate(prepared: Sequence[Prepared], answer_model: str, judge_model: str, cache: AnswerCache) -> float | None:
    """Dollars for the calls the cache does not hold yet (every judge call counted as new); ``None`` when a
    model's price is unknown."""
    answer_price, judge_price = _price(answer_model), _price(judge_model)
    if answer_price is None or judge_price is None:
        return None
    todo = [p for p in prepared if call_key(answer_model, p.messages) not in cache]
    answer_in = sum(p.context_tokens for p in todo)
    dollars = answer_in * answer_price[0] + len(todo) * _ANSWER_OUT * answer_price[1]
    dollars += len(prepared) * (_JUDGE_IN * judge_price[0] + _JUDGE_OUT * judge_price[1])
    return dollars / 1_000_000
