"""The update judge's second reader: does a statement, on its own, read as news of a change?

The cross-encoder (:mod:`~memstack.capture.judge.cross`) reads a memory and a statement together and is the judge's
main evidence. It leans on the words of its training pairs: "switched their major to architecture" scored 0.015
against a memory of studying engineering where "changed their major" scored 0.98. This head reads the statement
alone, as its MiniLM sentence embedding, through one tanh layer (:func:`~memstack.capture.softmax.fit_mlp`), and
answers whether it tells of a change (moved, quit, ended, a new one, no longer) or of something added beside what
was true (a second pet, a visit, progress, a detail). On its own it is weak (it cannot tell *which* memory ends);
beside the cross-encoder it moves some of the news the pair model scores just below its threshold.

The two are combined by a logistic model of two weights (:meth:`NewsHead.probability`): ``a · logit(cross) +
b · news + c``, and the judge supersedes from :attr:`NewsHead.threshold`. ``scripts/train_update_head.py`` fits the
layer on the statements of the judge's written training pairs, and the weights and the threshold on the development
set of ``memstack eval updates`` less its most recent spent blind set, kept out to report a held-out figure (the
file's ``about``: a small gain, 22 / 40 against 20 / 40 on that set, none of its compatible cases superseded). The
head reads only vectors of the model it was trained on (:attr:`NewsHead.model`); with another embedder the judge
reads the cross-encoder alone, at its card's threshold.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from memstack.errors import ConfigError

__all__ = ["HEAD_FILE", "NewsHead", "load_news_head"]

#: The shipped head, under ``memstack/capture/judge/data/``.
HEAD_FILE = "update-news-head.json"
FORMAT = 1

Matrix = npt.NDArray[np.float32]
_EPS = 1e-6


@dataclass(frozen=True, slots=True)
class NewsHead:
    """``hidden``: weights ``(units, dim)`` and bias of the tanh layer; ``out``: the weights ``(units,)`` and bias of
    the news logit read from it; ``combine``: ``(a, b, c)`` of the combined logit; ``threshold``: the combined
    probability from which the judge supersedes; ``model``: the embedding model whose vectors it reads."""

    model: str
    hidden: tuple[Matrix, Matrix]
    out: tuple[Matrix, float]
    combine: tuple[float, float, float]
    threshold: float
    about: dict[str, Any] = field(default_factory=dict)

    def news(self, vectors: Matrix) -> Matrix:
        """The news logit of each row of unit ``vectors`` (positive: reads as a change)."""
        x = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        h = np.tanh(x @ self.hidden[0].T + self.hidden[1])
        return np.asarray(h @ self.out[0] + self.out[1], dtype=np.float32)

    def probability(self, cross: Matrix, news: Matrix) -> Matrix:
        """The combined probability of cross-encoder scores (0..1) and news logits, elementwise."""
        p = np.clip(np.asarray(cross, dtype=np.float64), _EPS, 1 - _EPS)
        a, b, c = self.combine
        z = a * np.log(p / (1 - p)) + b * np.asarray(news, dtype=np.float64) + c
        return np.asarray(1.0 / (1.0 + np.exp(-z)), dtype=np.float32)

    def to_json(self) -> str:
        body = {
            "format": FORMAT,
            "model": self.model,
            "threshold": round(self.threshold, 6),
            "combine": [round(float(v), 6) for v in self.combine],
            "about": self.about,
            "out": {"bias": round(float(self.out[1]), 6), "weights": [round(float(w), 6) for w in self.out[0]]},
            "hidden": {
                "bias": [round(float(b), 6) for b in self.hidden[1]],
                "weights": [[round(float(w), 6) for w in row] for row in self.hidden[0]],
            },
        }
        return json.dumps(body, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> NewsHead:
        """``ConfigError`` for a file this memstack cannot read (newer, malformed, or of mismatched shapes)."""
        try:
            data = json.loads(text)
            if int(data.get("format", 1)) > FORMAT:
                raise ConfigError("the update judge's news head is newer than this memstack: upgrade memstack")
            w1 = np.asarray(data["hidden"]["weights"], dtype=np.float32)
            b1 = np.asarray(data["hidden"]["bias"], dtype=np.float32)
            w2 = np.asarray(data["out"]["weights"], dtype=np.float32)
            a, b, c = (float(v) for v in data["combine"])
            head = cls(
                str(data["model"]),
                (w1, b1),
                (w2, float(data["out"]["bias"])),
                (a, b, c),
                float(data["threshold"]),
                dict(data.get("about", {})),
            )
        except ConfigError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"the update judge's news head is malformed ({exc}); reinstall memstack") from exc
        if w1.ndim != 2 or b1.shape != (w1.shape[0],) or w2.shape != (w1.shape[0],):
            raise ConfigError("the update judge's news head has mismatched layer shapes; reinstall memstack")
        return head


@lru_cache(maxsize=1)
def load_news_head() -> NewsHead:
    """The shipped head (read on first use)."""
    path = resources.files("memstack.capture.judge") / "data" / HEAD_FILE
    return NewsHead.from_json(path.read_text(encoding="utf-8"))
