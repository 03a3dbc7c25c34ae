"""The offline update judge (``offline``): a learned head over the embeddings memstack computes, no phrase tables.

For each candidate, the memories nearest to it (at most :data:`TOP`, cosine ≥ :data:`MIN_COSINE`: a memory about
something else is not read) are scored with the candidate by two readers of
:func:`~memstack.capture.judge.features.pair_features` (the two embeddings and a few general cues), a logistic
regression and a small network with one hidden layer, averaged; the head answers
how likely the candidate makes the memory no longer true. The most likely memory is superseded when the head's logit
reaches its threshold, unless the candidate is news about someone else ("User's sister moved to Berlin", "Robert's
father passed away") and the memory is about the user: that never ends what the user's memory says. Otherwise the
candidate is an addition (the dedup rule still decides duplicate / new).

The head (``data/update_head.json``) is trained by ``python -m tests.capture.train_judge`` on 2,000 written
(memory, message) pairs (``tests/capture/data/judge/``) and the development set of ``memstack eval updates``, each
message read through the capture pipeline as the judge will see it; its threshold was chosen on out-of-fold scores for
precision (the file records how). What it reaches on wordings it has never seen is measured on blind sets (README);
a model judge (``$MEMSTACK_UPDATE_MODEL``) reads news far better.

Cost: the candidate and the memories read are embedded in one batch (texts the embedder has just embedded are
usually cached by it), then one dot product per pair.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from memstack.capture.judge.attributes import AttributeHead
from memstack.capture.judge.base import JudgeItem, UpdateKind, UpdateVerdict
from memstack.capture.judge.features import FEATURES_VERSION, about_someone_else, pair_features
from memstack.embed import Embedder, get_embedder
from memstack.errors import ConfigError
from memstack.types import ScoredMemory

__all__ = ["MIN_COSINE", "TOP", "JudgeHead", "LearnedJudge", "load_head"]

#: Memories less similar than this to the candidate are not read.
MIN_COSINE = 0.2
#: At most this many memories per candidate are read (the nearest first).
TOP = 4


@dataclass(frozen=True, slots=True)
class JudgeHead:
    """Two readers of the pair features, averaged: a logistic regression (``linear``, ``linear_bias``) and a small
    network (standardised inputs, one hidden ReLU layer, one logit). Each score is put on the scale of its
    compatible development cases (``norms``: mean and spread of the linear, then of the network's out-of-fold
    scores) before the two are averaged; a memory is superseded from ``threshold`` up. ``attributes``: the
    attribute head the features read (:mod:`~memstack.capture.judge.attributes`)."""

    model: str  # the embedding model the head reads
    features: int  # FEATURES_VERSION it was trained on
    linear: npt.NDArray[np.float32]
    linear_bias: float
    norms: tuple[float, float, float, float]
    mean: npt.NDArray[np.float32]
    scale: npt.NDArray[np.float32]
    hidden: npt.NDArray[np.float32]  # features × units
    hidden_bias: npt.NDArray[np.float32]
    out: npt.NDArray[np.float32]  # units
    out_bias: float
    threshold: float
    attributes: AttributeHead
    about: dict[str, Any] = field(default_factory=dict)

    def logits(self, x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        linear_mean, linear_spread, net_mean, net_spread = self.norms
        linear = (x @ self.linear + self.linear_bias - linear_mean) / linear_spread
        h = np.maximum(((x - self.mean) / self.scale) @ self.hidden + self.hidden_bias, 0.0)
        net = (h @ self.out + self.out_bias - net_mean) / net_spread
        return np.asarray((linear + net) / 2, dtype=np.float32)

    def to_json(self) -> str:
        def rounded(a: npt.NDArray[np.float32]) -> Any:
            return np.round(a.astype(np.float64), 5).tolist()

        return json.dumps(
            {
                "model": self.model,
                "features": self.features,
                "threshold": round(self.threshold, 5),
                "linear": rounded(self.linear),
                "linear_bias": round(self.linear_bias, 6),
                "norms": [round(n, 6) for n in self.norms],
                "mean": rounded(self.mean),
                "scale": rounded(self.scale),
                "hidden": rounded(self.hidden),
                "hidden_bias": rounded(self.hidden_bias),
                "out": rounded(self.out),
                "out_bias": round(self.out_bias, 6),
                "attributes": self.attributes.to_dict(),
                "about": self.about,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> JudgeHead:
        data = json.loads(text)

        def array(key: str) -> npt.NDArray[np.float32]:
            return np.asarray(data[key], dtype=np.float32)

        return cls(
            str(data["model"]),
            int(data["features"]),
            array("linear"),
            float(data["linear_bias"]),
            (float(data["norms"][0]), float(data["norms"][1]), float(data["norms"][2]), float(data["norms"][3])),
            array("mean"),
            array("scale"),
            array("hidden"),
            array("hidden_bias"),
            array("out"),
            float(data["out_bias"]),
            float(data["threshold"]),
            AttributeHead.from_dict(data["attributes"]),
            dict(data.get("about", {})),
        )


@lru_cache(maxsize=1)
def load_head() -> JudgeHead:
    """The shipped head (read on first use); ``ConfigError`` when it was trained on other features."""
    path = resources.files("memstack.capture.judge") / "data" / "update_head.json"
    head = JudgeHead.from_json(path.read_text(encoding="utf-8"))
    if head.features != FEATURES_VERSION:
        raise ConfigError(
            f"the offline update judge's head was trained on features v{head.features}, this memstack computes "
            f"v{FEATURES_VERSION}; retrain it with python -m tests.capture.train_judge"
        )
    return head


def _read(item: JudgeItem) -> list[ScoredMemory]:
    return [hit for hit in item.nearest if hit.score >= MIN_COSINE][:TOP]


class LearnedJudge:
    """The learned offline judge. ``embedder``: the engine's, used when it is the head's model (``local:minilm``);
    otherwise the judge embeds with its own copy of that model. ``head``: default the shipped one."""

    name = "offline"

    def __init__(self, embedder: Embedder | None = None, *, head: JudgeHead | None = None) -> None:
        self._head = head
        self._given = embedder
        self._own: Embedder | None = None

    @property
    def head(self) -> JudgeHead:
        if self._head is None:
            self._head = load_head()
        return self._head

    def _embedder(self) -> Embedder:
        if self._given is not None and self._given.name == self.head.model:
            return self._given
        if self._own is None:
            self._own = get_embedder(self.head.model)
        return self._own

    async def judge(self, items: Sequence[JudgeItem]) -> list[UpdateVerdict]:
        read = [_read(item) for item in items]
        texts = list(
            dict.fromkeys(t for item, hits in zip(items, read, strict=True) if hits for t in _texts(item, hits))
        )
        vectors = await self._embedder().embed(texts) if texts else None
        at = {text: i for i, text in enumerate(texts)}
        out: list[UpdateVerdict] = []
        for item, hits in zip(items, read, strict=True):
            if not hits or vectors is None:
                out.append(UpdateVerdict.add("no memory near enough to be about the same thing", self.name))
                continue
            said = item.candidate.content
            head = self.head
            mine = np.stack([vectors[at[said]], *(vectors[at[h.memory.content]] for h in hits)])
            kinds = head.attributes.probabilities(mine)
            rows = [
                pair_features(said, h.memory.content, mine[0], mine[i], kinds[0], kinds[i])
                for i, h in enumerate(hits, start=1)
            ]
            logits = head.logits(np.stack(rows))
            best = int(np.argmax(logits))
            if logits[best] < head.threshold:
                why = f"the head does not read it as news about a memory (best {float(logits[best]):.2f})"
                out.append(UpdateVerdict.add(why, self.name))
                continue
            hit = hits[best]
            if about_someone_else(said) and not about_someone_else(hit.memory.content):
                why = "news about someone else leaves what the user's memory says about the user"
                out.append(UpdateVerdict.add(why, self.name))
                continue
            why = f"the head reads it as news that ends the memory ({float(logits[best]):.2f}, cosine {hit.score:.2f})"
            out.append(UpdateVerdict(UpdateKind.SUPERSEDE, hit.memory.id, why, self.name))
        return out

    async def aclose(self) -> None:
        if self._own is not None:
            await self._own.aclose()
            self._own = None


def _texts(item: JudgeItem, hits: Sequence[ScoredMemory]) -> list[str]:
    return [item.candidate.content, *(h.memory.content for h in hits)]
