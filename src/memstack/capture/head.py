"""The capture head: whether a clause is a durable memory, and of which kind, read from its MiniLM embedding.

The rules screen (:mod:`~memstack.capture.rules`) recognises self-disclosure by its grammar: a first-person subject,
a verb it knows, an imperative it can parse. People also write "lactose intolerant.", "allergic to cats", "short
answers pls", "default to TypeScript": no first-person word, no verb the rules know, and the rules refuse them. A
pattern per such wording would never end; the head reads meaning instead. It is a small classifier over the
``local:minilm`` embedding the engine already computes (a softmax, or one hidden layer and a softmax), fitted with
numpy (:func:`fit_capture_head`) on broad written clauses (``tests/capture/data/capture_train/``: many people and
registers, lowercase, typos, slang, non-native English, bare statements, standing instructions of every kind, the
second clause of compound messages, and hard negatives: questions, one-off tasks, moods, hypotheticals, other
people's news, jokes, quotes, horoscopes), and shipped as ``data/capture_head.json`` with the threshold and the
out-of-fold figures it was chosen with. Retrain with ``python -m tests.capture.train_capture``.

The head may put one hidden layer (tanh) before its softmax (:func:`~memstack.capture.softmax.fit_mlp`): bare
fragments about the user and hard negatives of the same surface form ("celiac fyi" and "celiac bread recipe?") are
not told apart by one direction of the embedding. The file says which (``format`` 2 with a ``hidden`` layer; a file
without ``format`` is the plain softmax of format 1), and the run-time cost is one more ``64 × 384`` product per
batch of refused clauses.

The labels (:data:`LABELS`) are ``none``, the memory categories, and ``instruction``: a standing instruction about
the assistant's replies, which is a preference the classifier writes in the frame of
:mod:`~memstack.capture.instructions`, not a statement to turn to the third person.

The offline classifier asks the head only about clauses the rules refused, and keeps one when its probability of
being a memory (one minus ``none``'s) reaches :attr:`CaptureHead.threshold` (chosen on out-of-fold scores so that
few of the written negatives pass), as the most likely of the other labels. The head was trained on English and
MiniLM reads English; it is used only with the embedder it was trained on (``model``), so a deployment on another
embedder keeps the rules alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from memstack.capture.softmax import fit_mlp, fit_softmax
from memstack.errors import ConfigError
from memstack.types import Category

__all__ = ["INSTRUCTION", "LABELS", "NONE", "CaptureHead", "HeadVerdict", "fit_capture_head", "load_capture_head"]

NONE = "none"
INSTRUCTION = "instruction"
#: What the head tells apart: nothing to keep, each memory category, and a standing instruction to the assistant.
LABELS = (NONE, *(c.value for c in Category), INSTRUCTION)

Matrix = npt.NDArray[np.float32]
#: The newest head file format this code reads (1: a softmax over the embedding; 2: optionally a hidden layer first).
FORMAT = 2


@dataclass(frozen=True, slots=True)
class HeadVerdict:
    """The most likely kind of memory a clause is (a label other than ``none``) and the probability that it is a
    memory at all."""

    label: str
    probability: float

    @property
    def category(self) -> Category:
        """The memory's category (a standing instruction is a preference); only for a label other than ``none``."""
        return Category.PREFERENCE if self.label == INSTRUCTION else Category(self.label)


@dataclass(frozen=True, slots=True)
class CaptureHead:
    """``probabilities(vectors)``: one distribution over :data:`LABELS` per row of unit embeddings; a clause is kept
    when the probability that it is not ``none`` reaches ``threshold``. ``hidden``: the weights ``(units, dim)`` and
    bias of a tanh layer read before the softmax, whose weights are then ``labels × units``."""

    model: str  # the embedding model the head reads
    weights: Matrix  # labels × dim (or × hidden units)
    bias: Matrix  # labels
    threshold: float
    about: dict[str, Any] = field(default_factory=dict)
    hidden: tuple[Matrix, Matrix] | None = None

    def probabilities(self, vectors: Matrix) -> Matrix:
        x = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        if self.hidden is not None:
            x = np.tanh(x @ self.hidden[0].T + self.hidden[1])
        logits = x @ self.weights.T + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float32)

    def verdicts(self, vectors: Matrix) -> list[HeadVerdict]:
        """Per row: the most likely label other than ``none``, with the probability that the clause is a memory at
        all (one minus ``none``'s): "allergic to cats" is surely a memory, whether a fact or a preference."""
        p = self.probabilities(vectors)
        none = LABELS.index(NONE)
        durable = 1.0 - p[:, none]
        p[:, none] = -1.0
        best = p.argmax(axis=1)
        return [HeadVerdict(LABELS[int(i)], float(d)) for i, d in zip(best, durable, strict=True)]

    def keeps(self, verdict: HeadVerdict) -> bool:
        return verdict.probability >= self.threshold

    def to_json(self) -> str:
        body: dict[str, Any] = {
            "format": FORMAT,
            "model": self.model,
            "labels": list(LABELS),
            "threshold": round(self.threshold, 4),
            "about": self.about,
            "bias": [round(float(b), 5) for b in self.bias],
            "weights": [[round(float(w), 5) for w in row] for row in self.weights],
        }
        if self.hidden is not None:
            body["hidden"] = {
                "bias": [round(float(b), 5) for b in self.hidden[1]],
                "weights": [[round(float(w), 5) for w in row] for row in self.hidden[0]],
            }
        return json.dumps(body, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> CaptureHead:
        data = json.loads(text)
        if int(data.get("format", 1)) > FORMAT:
            raise ConfigError("the capture head's file is newer than this memstack: upgrade memstack")
        layer = data.get("hidden")
        hidden = None
        if layer is not None:
            hidden = (np.asarray(layer["weights"], dtype=np.float32), np.asarray(layer["bias"], dtype=np.float32))
        if tuple(data["labels"]) != LABELS:
            raise ConfigError("the capture head was trained on other labels: python -m tests.capture.train_capture")
        return cls(
            str(data["model"]),
            np.asarray(data["weights"], dtype=np.float32),
            np.asarray(data["bias"], dtype=np.float32),
            float(data["threshold"]),
            dict(data.get("about", {})),
            hidden,
        )


@lru_cache(maxsize=1)
def load_capture_head() -> CaptureHead:
    """The shipped head (read on first use)."""
    path = resources.files("memstack.capture") / "data" / "capture_head.json"
    return CaptureHead.from_json(path.read_text(encoding="utf-8"))


def fit_capture_head(
    vectors: Matrix,
    labels: list[str],
    *,
    l2: float = 1e-3,
    steps: int = 500,
    none_share: float = 0.5,
    hidden: int = 0,
) -> tuple[Matrix, Matrix, tuple[Matrix, Matrix] | None]:
    """Weights, bias and hidden layer (``None`` for ``hidden=0``) of a classifier over :data:`LABELS`: a
    multinomial logistic regression (full-batch gradient descent with momentum), or with ``hidden`` units a network
    of one tanh layer (:func:`~memstack.capture.softmax.fit_mlp`); L2-regularised. ``none`` carries ``none_share``
    of the loss and the other labels share the rest equally, whatever their counts: weighted per label alone, seven
    kinds of memory against one of nothing would teach the head that most things are memories."""
    index = {label: i for i, label in enumerate(LABELS)}
    y = np.array([index[label] for label in labels])
    n, k = len(y), len(LABELS)
    counts = np.bincount(y, minlength=k).astype(np.float64)
    shares = np.full(k, (1.0 - none_share) / (k - 1))
    shares[index[NONE]] = none_share
    sample = (n * shares / np.maximum(counts, 1))[y]
    if hidden:
        w1, b1, w2, b2 = fit_mlp(vectors, y, k, sample, l2=l2, steps=steps, hidden=hidden)
        return w2, b2, (w1, b1)
    w, b = fit_softmax(vectors, y, k, sample, l2=l2, steps=steps)
    return w, b, None
