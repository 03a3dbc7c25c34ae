"""Which attribute of the user's life a statement is about: a softmax head over the statement's embedding.

"User lives in Paris." and "finally unpacked the last box in the new Denver place" are both about ``residence``;
"User works as a nurse." and "they made me head of nursing" about ``occupation``; "my sister moved to Berlin" is
``other`` (the attributes are the user's own). The labels (:data:`SINGLE_VALUED` and ``other``) are single-valued
attributes: the user has one residence, one employer, one partner at a time, so news that gives one of them a new
value replaces the memory that holds the old one. The update judge reads the two statements' distributions
(:func:`~memstack.capture.judge.features.pair_features`).

Trained by ``python -m tests.capture.train_judge`` on written paraphrases (``tests/capture/data/judge/
attributes.jsonl``: memory-style and chat-style statements per attribute, and statements about someone else), stored
in the judge's head file beside the pair weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memstack.capture.softmax import fit_softmax
from memstack.errors import ConfigError

__all__ = ["LABELS", "SINGLE_VALUED", "AttributeHead", "fit_attributes"]

#: The user's own single-valued attributes.
SINGLE_VALUED = (
    "residence",
    "employer",
    "occupation",
    "school",
    "partner",
    "diet",
    "vehicle",
    "device",
    "age",
    "income",
    "schedule",
    "favourite",
    "habit",
    "pet",
    "health",
    "household",
    "answer_style",
)
LABELS = (*SINGLE_VALUED, "other")

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class AttributeHead:
    """``probabilities(vectors)``: one distribution over :data:`LABELS` per row of unit embeddings."""

    weights: Matrix  # labels × dim
    bias: Matrix  # labels

    def probabilities(self, vectors: Matrix) -> Matrix:
        logits = np.atleast_2d(vectors) @ self.weights.T + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float32)

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": list(LABELS),
            "weights": [[round(float(w), 5) for w in row] for row in self.weights],
            "bias": [round(float(b), 5) for b in self.bias],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AttributeHead:
        if tuple(data["labels"]) != LABELS:
            raise ConfigError("the update judge's attribute head was trained on other labels; retrain it")
        return cls(np.asarray(data["weights"], dtype=np.float32), np.asarray(data["bias"], dtype=np.float32))


def fit_attributes(vectors: Matrix, labels: list[str], *, l2: float = 1e-3, steps: int = 400) -> AttributeHead:
    """A multinomial logistic regression (full-batch gradient descent with momentum; classes weighted equally)."""
    index = {label: i for i, label in enumerate(LABELS)}
    y = np.array([index[label] for label in labels])
    n, k = len(y), len(LABELS)
    counts = np.bincount(y, minlength=k).astype(np.float64)
    return AttributeHead(*fit_softmax(vectors, y, k, (n / (k * np.maximum(counts, 1)))[y], l2=l2, steps=steps))
