"""The summarizer role: one Protocol, whatever does the summarizing (offline rules or a model).

A summarizer only proposes. Word caps, plausibility, diff order, hard-exception protection, timeouts and retries
are applied around it (:mod:`memstack.session.policy`, :mod:`memstack.session.diff`,
:mod:`memstack.session.consolidate`), identically for every implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from memstack.types import BaseTruthDiff, Exchange, Fact, Route, TurnSummary

__all__ = ["Summarizer", "TurnDraft"]


@dataclass(frozen=True, slots=True)
class TurnDraft:
    """What a summarizer proposes for one exchange (seed 04 §2.2): the two summaries, the diff, free-form flags."""

    user_summary: str
    assistant_summary: str
    diff: BaseTruthDiff = field(default_factory=BaseTruthDiff)
    flags: tuple[str, ...] = ()


@runtime_checkable
class Summarizer(Protocol):
    """Compresses exchanges, condenses base truth and writes the cross-session line.

    ``name`` identifies it in results and logs (``offline:extractive``, ``openai:gpt-4o``); ``offline`` is true
    for the rule-based implementation, so output can be labelled honestly. Failures are typed:
    :class:`~memstack.errors.MalformedResponse` for an answer of the wrong shape,
    :class:`~memstack.errors.ProviderTimeout` / :class:`~memstack.errors.ProviderError` for the endpoint.
    """

    @property
    def name(self) -> str: ...

    @property
    def offline(self) -> bool: ...

    async def summarize_turn(self, exchange: Exchange, base_truth: Sequence[Fact], route: Route) -> TurnDraft:
        """Summaries of one exchange plus a diff against ``base_truth`` (empty diff for a short route)."""
        ...

    async def consolidate(self, base_truth: Sequence[Fact]) -> list[Fact]:
        """A condensed base truth: near-duplicates merged, superseded entries dropped, hard exceptions kept."""
        ...

    async def summarize_session(self, turn_log: Sequence[TurnSummary], base_truth: Sequence[Fact]) -> str:
        """One short, user-focused line about a whole session, for the user's later sessions."""
        ...
