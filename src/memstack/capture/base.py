"""The classifier role: one user message in, the facts worth remembering out (usually none).

Two implementations: :class:`~memstack.capture.offline.OfflineClassifier` (rules + embeddings, the default,
labelled ``offline:rules-v1``) and :class:`~memstack.capture.llm.LLMClassifier` (seed 02's prompt on any
OpenAI-compatible model). Both return only candidates with ``confidence ≥ min_confidence`` (0.7 by default) and
never raise for a message they cannot handle: a failing model is recorded as a :class:`ClassifierFailure`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from memstack.types import Candidate

__all__ = ["MIN_CONFIDENCE", "Classifier", "ClassifierFailure", "ClassifyContext"]

#: Seed 02: candidates below this confidence are discarded.
MIN_CONFIDENCE = 0.7


@dataclass(frozen=True, slots=True)
class ClassifyContext:
    """What a classifier may know besides the message.

    ``recent``: the previous messages of the conversation, oldest first, as ``(role, text)`` pairs — the assistant's
    last question turns a bare answer ("5 years already!") into a fact. ``user_name``: how the user is called, so
    third-person mentions of them count as self-disclosure."""

    recent: tuple[tuple[str, str], ...] = ()
    user_name: str | None = None


@dataclass(frozen=True, slots=True)
class ClassifierFailure:
    """One message the classifier gave up on (after its retry): recorded, never raised into the chat."""

    classifier: str
    at: datetime
    error: str  # the error class, e.g. "ProviderTimeout"
    detail: str
    attempts: int


@runtime_checkable
class Classifier(Protocol):
    @property
    def name(self) -> str:
        """What produced the candidates, e.g. ``offline:rules-v1`` or ``llm:openai:gpt-4o-mini``."""
        ...

    async def classify(self, message: str, *, at: datetime, context: ClassifyContext | None = None) -> list[Candidate]:
        """Candidates worth remembering in ``message`` sent at ``at`` (its times are read against it)."""
        ...

    async def aclose(self) -> None: ...
