"""The update judge's third reader: which single-valued attribute of a user's life is a sentence about?

Some things a user has only one of at a time: a home city, an employer, a partner, a car, a diet, a name to be
called, a language to be answered in. News of such an attribute ends the memory that gives its old value, however
sideways it is told: "finally got the keys to our flat in Glasgow" ends "User lives in Leeds."; "traded the civic
in for a tacoma" ends "User drives a 2012 Honda Civic.". The cross-encoder (:mod:`~memstack.capture.judge.cross`)
scores such pairs below its threshold when the wording is far from its training pairs, and the threshold cannot come
down for them alone: it is high because compatible pairs on the same topic (a visit to Glasgow, a friend's new car)
score high too.

This head reads each sentence alone, as the MiniLM embedding memstack already computes, through one softmax layer
over :attr:`AttributeHead.labels`: about 30 attributes and ``none`` (a trip, someone else's news, a feeling, progress
on a goal, a one-off event, a question, a plan being weighed). The judge
(:class:`~memstack.capture.judge.offline.LearnedJudge`) supersedes below its main threshold when the statement and
the memory are read as the *same* attribute, each at least :attr:`AttributeHead.margin` likely, the statement is not
about someone else, and the combined chance of the cross-encoder and the news head still reaches the lower
:attr:`AttributeHead.threshold`: the head says the two sentences compete for one value, the pair readers that the
statement is news about the memory at all. The head reads what a sentence is about more than whose it is or
whether it happened: "User's friend moved to Aberdeen." and "thinking maybe one day I'll learn the harp" read as a
home city and an instrument (held out, about half of the written ``none`` sentences, most chosen to tempt, are
read as some attribute, an eighth at a margin of 0.7), which is why the gate never decides on the head alone.

``scripts/train_attribute_head.py`` fits the layer on the written, reviewed sentences of
``tests/capture/data/judge/attributes-*.jsonl`` (numpy only; the held-out accuracy of the same recipe is in the
card's ``about``) and calibrates the two numbers on the development set of ``memstack eval updates`` less its most
recent spent blind set (at most 2% of its compatible cases superseded). The weights are a ``.npz`` beside a card
(:data:`CARD_FILE`) holding its sha256, checked when it loads. The head reads only vectors of the model it was
trained on (:attr:`AttributeHead.model`); with another embedder the judge does without it.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from memstack.errors import ConfigError

__all__ = ["CARD_FILE", "NONE", "WEIGHTS_FILE", "AttributeHead", "load_attribute_head"]

#: The shipped weights and their card, under ``memstack/capture/judge/data/``.
WEIGHTS_FILE = "update-attribute-head.npz"
CARD_FILE = "update-attribute-head.json"
FORMAT = 1
#: The label of a sentence about no single-valued attribute of the user.
NONE = "none"

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class AttributeHead:
    """``weights`` ``(labels, dim)`` and ``bias`` ``(labels,)`` of the softmax layer; ``margin``: the probability
    each of the two sentences must reach for one attribute; ``threshold``: the combined chance from which the judge
    supersedes a memory of the same attribute; ``model``: the embedding model whose vectors it reads."""

    model: str
    labels: tuple[str, ...]
    weights: Matrix
    bias: Matrix
    margin: float
    threshold: float
    about: dict[str, Any] = field(default_factory=dict)

    def probabilities(self, vectors: Matrix) -> Matrix:
        """One row of label probabilities per row of unit ``vectors``."""
        x = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        z = x @ self.weights.T + self.bias
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        return np.asarray(p / p.sum(axis=1, keepdims=True), dtype=np.float32)

    def read(self, vectors: Matrix) -> list[tuple[str, float]]:
        """Per row, the most likely label and its probability."""
        p = self.probabilities(vectors)
        best = p.argmax(axis=1)
        return [(self.labels[int(i)], float(p[row, i])) for row, i in enumerate(best)]

    def pair(self, first: Matrix, second: Matrix) -> tuple[str, float, float] | None:
        """The attribute two sentences (one unit vector each) are both most likely about, with the two
        probabilities; ``None`` when their labels differ or either is ``none``. Whether both are sure enough
        (:attr:`margin`) is the caller's to check."""
        (a, pa), (b, pb) = self.read(np.stack([np.ravel(first), np.ravel(second)]))
        return None if a != b or a == NONE else (a, pa, pb)

    def weights_bytes(self) -> bytes:
        """The ``.npz`` of the layer (what the card's sha256 is of)."""
        buffer = io.BytesIO()
        np.savez(buffer, weights=self.weights.astype(np.float32), bias=self.bias.astype(np.float32))
        return buffer.getvalue()

    def card_json(self, sha256: str) -> str:
        body = {
            "format": FORMAT,
            "model": self.model,
            "sha256": sha256,
            "labels": list(self.labels),
            "margin": round(self.margin, 6),
            "threshold": round(self.threshold, 6),
            "about": self.about,
        }
        return json.dumps(body, indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def from_files(cls, card: str, weights: bytes) -> AttributeHead:
        """``ConfigError`` for files this memstack cannot read: newer, malformed, of mismatched shapes, or weights
        that are not the ones the card was written for (its sha256)."""
        try:
            data = json.loads(card)
            if int(data.get("format", 1)) > FORMAT:
                raise ConfigError("the update judge's attribute head is newer than this memstack: upgrade memstack")
            if hashlib.sha256(weights).hexdigest() != data["sha256"]:
                raise ConfigError(
                    f"the update judge's attribute head {WEIGHTS_FILE} does not match its card's sha256 (damaged or "
                    "replaced); reinstall memstack"
                )
            with np.load(io.BytesIO(weights), allow_pickle=False) as arrays:
                w = np.asarray(arrays["weights"], dtype=np.float32)
                b = np.asarray(arrays["bias"], dtype=np.float32)
            labels = tuple(str(label) for label in data["labels"])
            head = cls(
                str(data["model"]),
                labels,
                w,
                b,
                float(data["margin"]),
                float(data["threshold"]),
                dict(data.get("about", {})),
            )
        except ConfigError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, OSError) as exc:
            raise ConfigError(f"the update judge's attribute head is malformed ({exc}); reinstall memstack") from exc
        if w.ndim != 2 or w.shape[0] != len(labels) or b.shape != (len(labels),) or NONE not in labels:
            raise ConfigError("the update judge's attribute head has mismatched shapes or labels; reinstall memstack")
        return head


@lru_cache(maxsize=1)
def load_attribute_head() -> AttributeHead:
    """The shipped head (read on first use)."""
    data = resources.files("memstack.capture.judge") / "data"
    return AttributeHead.from_files((data / CARD_FILE).read_text(encoding="utf-8"), (data / WEIGHTS_FILE).read_bytes())
