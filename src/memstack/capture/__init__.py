"""Long-term memory capture: classifiers, date resolution, memory updates and the calibrated dedup rule.

``get_classifier(None)`` is the offline rules + embeddings classifier (``offline:rules-v1``); a model string such
as ``openai:gpt-4o-mini`` selects the LLM classifier. Each candidate is written by
:class:`~memstack.capture.writer.MemoryWriter` after one nearest-neighbour call: first the **update judge**
(:mod:`~memstack.capture.judge`, its own role and setting: a model, or offline) decides whether it is news that
replaces one of those memories (superseded in place, history kept), then
:class:`~memstack.capture.dedup.DedupRule` decides duplicate or new. ``memstack eval updates`` measures the first
step end to end.
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
