"""Long-term memory capture: classifiers, date resolution and the calibrated dedup rule.

``get_classifier(None)`` is the offline rules + embeddings classifier (``offline:rules-v1``); a model string such
as ``openai:gpt-4o-mini`` selects the LLM classifier. :class:`~memstack.capture.dedup.DedupRule` decides
duplicate / update / new for a candidate against its nearest memories.
"""

from __future__ import annotations

from typing import Any

from memstack.capture.base import MIN_CONFIDENCE, Classifier, ClassifierFailure, ClassifyContext
from memstack.capture.dedup import DedupAction, DedupDecision, DedupParams, DedupRule, params_for
from memstack.embed import Embedder

__all__ = [
    "MIN_CONFIDENCE",
    "Classifier",
    "ClassifierFailure",
    "ClassifyContext",
    "DedupAction",
    "DedupDecision",
    "DedupParams",
    "DedupRule",
    "get_classifier",
    "params_for",
]


def get_classifier(spec: str | None = None, *, embedder: Embedder | None = None, **options: Any) -> Classifier:
    """``None`` or ``"offline"``: rules + embeddings; otherwise a chat model string for the LLM classifier."""
    if spec is None or spec in ("offline", "offline:rules-v1"):
        from memstack.capture.offline import OfflineClassifier

        return OfflineClassifier(embedder, **options)
    from memstack.capture.llm import LLMClassifier

    return LLMClassifier.from_spec(spec, **options)
