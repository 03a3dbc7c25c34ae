"""The model-backed summarizer: seed 04's dedicated summarizer model, on any OpenAI-compatible endpoint.

It asks for JSON with the versioned prompts of :mod:`memstack.prompts` (``session_turn_system`` /
``session_turn_user``, ``session_consolidate``, ``session_cross_session``) and parses answers strictly
(:mod:`memstack.session.llm_format`). It retries nothing itself: the failure policy around it
(:class:`~memstack.session.policy.SummaryRunner`) retries a malformed answer once, falls back on timeouts and
endpoint errors, and checks every diff entry against the exchange.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, Self

from memstack.observe import role
from memstack.session.base import TurnDraft
from memstack.session.extractive import OfflineSummarizer
from memstack.session.llm_format import (
    consolidate_prompt,
    parse_facts,
    parse_line,
    parse_turn,
    session_prompt,
    turn_prompts,
)
from memstack.session.settings import SessionSettings
from memstack.types import Exchange, Fact, Route, TurnSummary

__all__ = ["JsonChatModel", "ModelSummarizer", "get_summarizer"]


class JsonChatModel(Protocol):
    """What the summarizer needs of a chat model (``memstack.models.ChatModel`` provides it)."""

    @property
    def name(self) -> str: ...

    async def complete_json(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


class ModelSummarizer:
    """Summarizes with ``model``; ``temperature`` 0 by default (memory wants the same answer twice)."""

    offline = False

    def __init__(
        self,
        model: JsonChatModel,
        settings: SessionSettings | None = None,
        *,
        temperature: float = 0.0,
        max_tokens: int = 800,
    ) -> None:
        self.model = model
        self.settings = settings or SessionSettings()
        self._temperature = temperature
        self._max_tokens = max_tokens

    @property
    def name(self) -> str:
        return self.model.name

    async def aclose(self) -> None:
        """Close the model's connections (the summarizer owns the model it was given)."""
        await self.model.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _ask(self, system: str | None, user: str) -> dict[str, Any]:
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": user})
        with role("summarizer"):
            return await self.model.complete_json(
                messages, temperature=self._temperature, max_tokens=self._max_tokens, timeout=self.settings.timeout_s
            )

    async def summarize_turn(self, exchange: Exchange, base_truth: Sequence[Fact], route: Route) -> TurnDraft:
        system, user = turn_prompts(exchange, base_truth, route, self.settings)
        return parse_turn(await self._ask(system, user))

    async def consolidate(self, base_truth: Sequence[Fact]) -> list[Fact]:
        return parse_facts(await self._ask(None, consolidate_prompt(base_truth)))

    async def summarize_session(self, turn_log: Sequence[TurnSummary], base_truth: Sequence[Fact]) -> str:
        prompt = session_prompt(turn_log, base_truth, self.settings.cross_session_words)
        return parse_line(await self._ask(None, prompt))


def get_summarizer(
    spec: str | None = None, settings: SessionSettings | None = None, **model_options: Any
) -> OfflineSummarizer | ModelSummarizer:
    """The summarizer for a model string (``Config.summarizer_model``): ``None`` or ``"offline"`` gives the offline
    extractive one; ``openai:gpt-4o``, ``ollama:llama3.2``, … a :class:`ModelSummarizer` on that endpoint
    (``model_options`` go to :func:`memstack.models.get_model`: ``base_url``, ``api_key``, ``timeout``…)."""
    if spec is None or spec in ("offline", "offline:extractive"):
        return OfflineSummarizer(settings)
    from memstack.models import get_model

    model: JsonChatModel = get_model(spec, **model_options)
    return ModelSummarizer(model, settings)
