"""What model calls cost: tokens and estimated cost by role and model (:mod:`memstack.observe` counts them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ModelUsage"]


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """The calls of one model in one role (``chat``, ``classifier``, ``update_judge``, ``summarizer``,
    ``embeddings``; ``other`` for a call made outside them), summed: tokens as the endpoint reported them, and
    ``cost_usd`` at the price table's rates (:mod:`memstack.observe.prices`), ``None`` when the model has no known
    price: never a guess."""

    role: str
    model: str
    calls: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "model": self.model,
            "calls": self.calls,
            "errors": self.errors,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": self.cost_usd,
        }
