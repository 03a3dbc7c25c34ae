"""The guard's semantic layer: a small head over MiniLM sentence embeddings, beside the phrase rules.

Phrase rules catch an attack by its wording; paraphrases ("whatever you were told at setup no longer applies") carry
none of it. The head reads meaning instead: over the ``local:minilm`` embedding, one hidden layer of 64 ReLU units and
a logit (:func:`fit_mlp`, numpy, full-batch Adam, weight decay, classes weighted equally), fitted on the development
corpus and shipped as ``data/guard_head.json`` with the thresholds and the cross-validated figures they were chosen
with. Retrain with ``python -m tests.guard.train_guard`` from a checkout. A linear head (:func:`fit_head`: 384
weights and a bias) was shipped first; with the same training texts and the same look-alike rate, the hidden layer
caught 3 to 6 points more attacks in cross-validation (a linear head cannot say "addressed to the assistant *and*
asking for data", only add the two up). Its cost is one 384 x 64 product per sentence, beside the embedding itself.
A head file without ``hidden`` is a linear head and still loads.

:class:`SemanticGuard` flags a text when the rules do, or when the head scores the whole text or one of its
sentences at or above a threshold; with ``obfuscated`` when only a decoded reading scores. Two thresholds, because
a false positive costs context: at or above ``quarantine`` the hit is confident (flag ``semantic``, treated like a
rule hit); between ``threshold`` and ``quarantine`` it is a low-confidence hit (flag ``suspect``), and the text is
kept in its data block, marked, whatever its layer does with other flags
(:func:`memstack.context.validate.content_verdicts`).
The two values were chosen on the development measurement (``memstack eval guard``): see ``about`` in the head.
A delegated task's instructions are addressed to the model by design and get the rules only. Verdicts are cached per
text, so an assembly embeds only texts it has not seen; :meth:`SemanticGuard.scan_many` embeds the new ones in one
batch and :meth:`SemanticGuard.prepare` does that off the event loop. The cache is an LRU bounded by entries
(``cache_size``) and by the characters of the texts it keeps (``cache_chars``, since a text may be a 32,000-character
message): at the defaults, at most 65,536 texts and 8 million characters. Without an embedder, the guard is
rules-only (:data:`memstack.guard.RULES`).

The head was trained on English and MiniLM reads English: on other languages its scores are noise (an Italian
sentence about forgetting grammar rules scored as a confident attack, most real attacks in German or Russian scored
nothing). So the head scores only pieces that read as English (:func:`reads_english`: a quarter of their words are
English words the guard knows, the stop words among them), and other languages are judged by the rules of
:mod:`memstack.guard.foreign`. Decoded readings (reversed, spaced, hidden text) are English again and are scored.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Protocol

import numpy as np

from memstack.errors import ConfigError
from memstack.guard.content import RULES
from memstack.guard.decode import decoded_variants, vocabulary
from memstack.guard.patterns import FLAGS
from memstack.guard.rules import normalize
from memstack.types import Vector

__all__ = ["Head", "SemanticGuard", "SyncEmbedder", "fit_head", "fit_mlp", "load_head", "reads_english", "segments"]

MAX_SEGMENTS = 48  # per text; longer texts are cut into that many runs of consecutive sentences
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+|(?=<!--)|(?<=-->)|(?<=:)\s+(?=[A-Z])")
_MIN_WORDS = 3
_WORDS = re.compile(r"[^\W\d_]{2,}")
_ENGLISH_SHARE = 0.25


class SyncEmbedder(Protocol):
    """What the semantic layer needs of an embedder: a blocking batch call (``local:minilm`` has one)."""

    @property
    def name(self) -> str: ...

    def embed_sync(self, texts: Sequence[str]) -> Vector: ...


@dataclass(frozen=True, slots=True)
class Head:
    """A head's logit: ``score = relu(vector @ hidden + hidden_bias) @ weights + bias``, or ``vector @ weights +
    bias`` without a hidden layer; ``suspect`` at ``score >= threshold``, ``semantic`` (confident) at
    ``score >= quarantine``."""

    model: str
    weights: Vector
    bias: float
    threshold: float
    about: dict[str, Any]
    quarantine: float = float("inf")
    hidden: Vector | None = None  # (dimensions, units)
    hidden_bias: Vector | None = None  # (units,)

    def level(self, score: float) -> int:
        """0: no hit; 1: low confidence (``suspect``); 2: confident (``semantic``)."""
        return 2 if score >= self.quarantine else 1 if score >= self.threshold else 0

    def score(self, vectors: Vector) -> Vector:
        x = np.asarray(vectors, dtype=np.float32)
        if self.hidden is not None and self.hidden_bias is not None:
            x = np.maximum(x @ self.hidden + self.hidden_bias, 0.0)
        out: Vector = (x @ self.weights + self.bias).astype(np.float32)
        return out

    def to_json(self) -> str:
        body: dict[str, Any] = {
            "model": self.model,
            "threshold": self.threshold,
            "quarantine": self.quarantine,
            "bias": round(self.bias, 6),
            "weights": [round(float(w), 6) for w in self.weights],
        }
        if self.hidden is not None and self.hidden_bias is not None:
            body["hidden_bias"] = [round(float(w), 6) for w in self.hidden_bias]
            body["hidden"] = [[round(float(w), 5) for w in row] for row in self.hidden]
        body["about"] = self.about
        return json.dumps(body, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Head:
        data = json.loads(text)
        weights = np.asarray(data["weights"], dtype=np.float32)
        threshold = float(data["threshold"])
        quarantine = float(data.get("quarantine", threshold))
        hidden = np.asarray(data["hidden"], dtype=np.float32) if "hidden" in data else None
        hidden_bias = np.asarray(data["hidden_bias"], dtype=np.float32) if "hidden_bias" in data else None
        units = (len(weights),)
        if (hidden is None) != (hidden_bias is None) or (
            hidden is not None
            and hidden_bias is not None
            and (hidden.ndim != 2 or hidden.shape[1:] != units or hidden_bias.shape != units)
        ):
            raise ConfigError(
                "a guard head's 'hidden' (dimensions x units) and 'hidden_bias' (units) go together, with one weight "
                "per unit: retrain with python -m tests.guard.train_guard"
            )
        return cls(
            str(data["model"]),
            weights,
            float(data["bias"]),
            threshold,
            dict(data["about"]),
            quarantine,
            hidden,
            hidden_bias,
        )


@lru_cache(maxsize=1)
def load_head() -> Head:
    """The shipped head (read on first use)."""
    path = resources.files("memstack.guard") / "data" / "guard_head.json"
    return Head.from_json(path.read_text(encoding="utf-8"))


def fit_head(attacks: Vector, benign: Vector, *, l2: float = 0.3, iterations: int = 50) -> tuple[Vector, float]:
    """Weights and bias of an L2-regularized logistic regression, attacks = 1, benign = 0, each class weighted to half
    the loss; Newton's method (exact for this size: 385 unknowns)."""
    x = np.vstack([attacks, benign]).astype(np.float64)
    y = np.r_[np.ones(len(attacks)), np.zeros(len(benign))]
    sample = np.where(y == 1, 0.5 / max(len(attacks), 1), 0.5 / max(len(benign), 1)) * len(y)
    xb = np.hstack([x, np.ones((len(x), 1))])
    reg = np.eye(xb.shape[1]) * l2
    reg[-1, -1] = 0.0
    w = np.zeros(xb.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(xb @ w)))
        grad = xb.T @ ((p - y) * sample) + reg @ w
        hess = (xb * (p * (1 - p) * sample)[:, None]).T @ xb + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-7:
            break
    return w[:-1].astype(np.float32), float(w[-1])


def fit_mlp(
    attacks: Vector,
    benign: Vector,
    *,
    units: int = 64,
    weight_decay: float = 1e-3,
    epochs: int = 300,
    learning_rate: float = 0.01,
    seed: int = 0,
) -> tuple[Vector, Vector, Vector, float]:
    """``(hidden, hidden_bias, weights, bias)`` of a one-hidden-layer ReLU network, attacks = 1, benign = 0, each
    class weighted to half the loss (a row given twice counts twice); full-batch Adam from a seeded start, so the same
    rows give the same head. Weight decay on the two weight matrices keeps the logits in the range the thresholds
    were chosen in."""
    x = np.vstack([attacks, benign]).astype(np.float64)
    y = np.r_[np.ones(len(attacks)), np.zeros(len(benign))]
    sample = np.where(y == 1, 0.5 / max(len(attacks), 1), 0.5 / max(len(benign), 1))
    rng = np.random.default_rng(seed)
    params = [
        rng.normal(0.0, 1.0 / np.sqrt(x.shape[1]), (x.shape[1], units)),
        np.zeros(units),
        rng.normal(0.0, 1.0 / np.sqrt(units), units),
        np.zeros(1),
    ]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    for step in range(1, epochs + 1):
        pre = x @ params[0] + params[1]
        act = np.maximum(pre, 0.0)
        p = 1.0 / (1.0 + np.exp(-(act @ params[2] + params[3][0])))
        g = (p - y) * sample
        back = np.outer(g, params[2]) * (pre > 0)
        grads = [
            x.T @ back + weight_decay * params[0],
            back.sum(0),
            act.T @ g + weight_decay * params[2],
            g.sum(None, keepdims=True),
        ]
        for i, grad in enumerate(grads):
            first[i] = 0.9 * first[i] + 0.1 * grad
            second[i] = 0.999 * second[i] + 0.001 * grad * grad
            corrected = first[i] / (1 - 0.9**step)
            params[i] = params[i] - learning_rate * corrected / (np.sqrt(second[i] / (1 - 0.999**step)) + 1e-8)
    hidden, hidden_bias, weights, bias = params
    f32 = np.float32
    return hidden.astype(f32), hidden_bias.astype(f32), weights.astype(f32), float(bias[0])


def segments(text: str) -> list[str]:
    """What the head scores for one (normalized) text: the whole text, plus each sentence or line of three words or
    more when there are several; at most :data:`MAX_SEGMENTS` pieces."""
    parts = [p.strip() for p in _SPLIT.split(text) if p and len(p.split()) >= _MIN_WORDS]
    if len(parts) <= 1:
        return [text] if len(text.split()) >= _MIN_WORDS else []
    if len(parts) > MAX_SEGMENTS - 1:
        size = -(-len(parts) // (MAX_SEGMENTS - 1))
        parts = [" ".join(parts[i : i + size]) for i in range(0, len(parts), size)]
    return [text, *parts]


def reads_english(piece: str) -> bool:
    """Whether the head can read ``piece`` (normalized text): at least a quarter of its words of two letters or more
    are English words the guard knows (:func:`memstack.guard.decode.vocabulary`); English prose holds far more
    (its stop words alone), other languages almost none."""
    words = _WORDS.findall(piece)
    if not words:
        return False
    known = vocabulary()
    return sum(w in known for w in words) >= _ENGLISH_SHARE * len(words)


class SemanticGuard:
    """Phrase rules plus the semantic head; ``embedder`` must be the head's model (``local:minilm``)."""

    def __init__(
        self,
        embedder: SyncEmbedder,
        *,
        head: Head | None = None,
        cache_size: int = 65_536,
        cache_chars: int = 8_000_000,
    ) -> None:
        self.head = head if head is not None else load_head()
        if embedder.name != self.head.model:
            raise ConfigError(
                f"the guard's semantic head was trained on {self.head.model!r} embeddings, not {embedder.name!r}; "
                f"pass get_embedder({self.head.model!r})"
            )
        self._embedder = embedder
        self._cache: OrderedDict[str, tuple[int, bool]] = OrderedDict()  # text -> (level, only when decoded)
        self._cache_size = cache_size
        self._cache_chars = cache_chars
        self._chars = 0  # characters of the texts in the cache
        self._generation = 0  # bumped by clear(): verdicts scored before it are not kept
        self._lock = threading.Lock()

    name = "rules+semantic"

    @property
    def cached(self) -> int:
        """Texts whose verdict is cached (not ``__len__``: a guard with none is still a guard)."""
        return len(self._cache)

    def scan(self, text: str, *, instructions: bool = False) -> tuple[str, ...]:
        return self.scan_many([(text, instructions)])[0]

    def scan_many(self, items: Sequence[tuple[str, bool]]) -> list[tuple[str, ...]]:
        """Flags of each ``(text, instructions)`` item; texts not seen before are embedded in one batch."""
        verdicts = self._verdicts([text for text, instructions in items if not instructions])
        out: list[tuple[str, ...]] = []
        for text, instructions in items:
            flags = RULES.scan(text, instructions=instructions)
            verdict = None if instructions else verdicts.get(text)
            if verdict is not None and verdict[0]:
                extra = {"semantic" if verdict[0] == 2 else "suspect", *(("obfuscated",) if verdict[1] else ())}
                found = set(flags).union(extra)
                flags = tuple(flag for flag in FLAGS if flag in found)
            out.append(flags)
        return out

    def score(self, text: str) -> float:
        """The head's highest logit over the text's segments and decoded readings (``-inf`` when too short)."""
        norm = normalize(text)
        pieces = [*segments(norm), *(p for v in decoded_variants(norm, text) for p in segments(v))]
        pieces = [p for p in pieces if reads_english(p)]
        if not pieces:
            return float("-inf")
        return float(self._scores(pieces).max())

    def knows(self, text: str) -> bool:
        """Whether ``text``'s verdict is cached (reading it again embeds nothing)."""
        return self._cached(text) is not None

    async def prepare(self, texts: Sequence[str]) -> None:
        """Score the texts not seen before, in a thread: an assembly that follows finds every verdict cached."""
        if any(self._cached(t) is None for t in texts):
            await asyncio.to_thread(self._score_new, list(texts))

    def _scores(self, pieces: list[str]) -> Vector:
        """Head scores of the pieces, embedded shortest first so that each batch pads to similar lengths."""
        order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))
        scores = self.head.score(self._embedder.embed_sync([pieces[i] for i in order]))
        out: Vector = np.empty_like(scores)
        out[order] = scores
        return out

    def _cached(self, text: str) -> tuple[int, bool] | None:
        with self._lock:
            verdict = self._cache.get(text)
            if verdict is not None:
                self._cache.move_to_end(text)
            return verdict

    def _verdicts(self, texts: Sequence[str]) -> dict[str, tuple[int, bool]]:
        """The verdict of each text: from the cache (one lock for the batch), the new ones scored in one batch."""
        with self._lock:
            cache = self._cache
            known = {t: v for t in texts if (v := cache.get(t)) is not None}
            for t in known:
                cache.move_to_end(t)
        new = [t for t in dict.fromkeys(texts) if t and t not in known]
        if new:
            known.update(self._score_new(new))
        return known

    def clear(self) -> None:
        """Forget every verdict and the texts they were kept under (a user was erased: what they wrote must not
        stay in this process)."""
        with self._lock:
            self._cache.clear()
            self._chars = 0
            self._generation += 1

    def _score_new(self, texts: Sequence[str]) -> dict[str, tuple[int, bool]]:
        """Score the texts not cached yet, cache their verdicts (unless :meth:`clear` ran meanwhile) and return
        them."""
        generation = self._generation
        out: dict[str, tuple[int, bool]] = {}
        new: list[str] = []
        for text in dict.fromkeys(texts):
            if text and (verdict := self._cached(text)) is not None:
                out[text] = verdict  # scored by another thread meanwhile
            elif text:
                new.append(text)
        if not new:
            return out
        pieces: list[str] = []
        owners: list[tuple[int, bool]] = []
        for i, text in enumerate(new):
            norm = normalize(text)
            for piece in segments(norm):
                if reads_english(piece):
                    pieces.append(piece)
                    owners.append((i, False))
            for variant in decoded_variants(norm, text):
                for piece in segments(variant):
                    if reads_english(piece):
                        pieces.append(piece)
                        owners.append((i, True))
        levels: dict[int, int] = {}
        decoded_only: dict[int, bool] = {}
        if pieces:
            scores = self._scores(pieces)
            for (i, decoded), score in zip(owners, scores, strict=True):
                level = self.head.level(float(score))
                if level:
                    levels[i] = max(levels.get(i, 0), level)
                    decoded_only[i] = decoded_only.get(i, True) and decoded
        verdicts = {text: (levels.get(i, 0), decoded_only.get(i, False)) for i, text in enumerate(new)}
        out.update(verdicts)
        with self._lock:
            if generation != self._generation:
                return out
            for text, verdict in verdicts.items():
                if text not in self._cache:
                    self._chars += len(text)
                self._cache[text] = verdict
            while self._cache and (len(self._cache) > self._cache_size or self._chars > self._cache_chars):
                self._chars -= len(self._cache.popitem(last=False)[0])
        return out
