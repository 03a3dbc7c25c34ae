"""What the dedup cross-encoder experiment needs from memstack, now that memstack has no cross-encoder step.

memstack once carried a runtime for an int8 ONNX cross-encoder in its dedup rule (``memstack.capture.crossencoder``,
``CrossParams`` in ``memstack.capture.dedup``). No model was ever good enough to ship (``scripts/README.md``), so
the runtime was removed; what the training and benchmark scripts used of it lives here:

- :class:`PairScorer`: runs an exported model file (the removed runtime's loading and batching);
- :class:`CrossStep` and :func:`judge`: the step as the rule ran it, before the feature rule: the update gate first,
  no score below ``min_cosine``, ``(1 - blend)·score + blend·feature probability`` against ``threshold``, then the
  word-order gate;
- :func:`calibrate_cross_threshold`: ``(blend, threshold)`` from held-out scores, with nested CV against the feature
  rule alone.

Imported by ``train_dedup_crossencoder.py`` and ``bench_dedup_crossencoder.py`` (run from the repository root with
memstack installed: ``.venv/bin/python scripts/...``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memstack.capture.dedup import DedupAction, DedupParams, DedupRule, pair_features
from memstack.errors import InputError
from memstack.evals.common import BinaryScores, binary_scores
from memstack.evals.dedup import Pair, best_threshold

MAX_TOKENS = 128  # the training length; STS-B pairs and memories are far shorter

Scores = npt.NDArray[np.float32]


class PairScorer:
    """The int8 ONNX cross-encoder at ``path``: reads ``[CLS] a [SEP] b [SEP]`` with the vendored MiniLM tokenizer
    (the same vocabulary and pair template as training) and answers one score in 0..1 per pair. Nothing is read until
    the first score."""

    def __init__(self, path: Path, *, threads: int = 1, batch_size: int = 32) -> None:
        self.path = path
        self._threads = threads
        self._batch_size = batch_size
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        with self._lock:
            if self._session is not None:
                return
            if not self.path.is_file():
                raise InputError(f"no model file at {self.path}; build one with scripts/train_dedup_crossencoder.py")
            vocab = resources.files("memstack.embed") / "data" / "minilm-tokenizer.json"
            tokenizer = Tokenizer.from_str(vocab.read_text(encoding="utf-8"))
            tokenizer.enable_truncation(MAX_TOKENS)
            tokenizer.enable_padding()
            options = ort.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            self._session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
            self._tokenizer = tokenizer

    def score(self, pairs: Sequence[tuple[str, str]]) -> Scores:
        """One score per pair, in order (short pairs batched together: less padding)."""
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        if self._session is None:
            self._load()
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        out = np.zeros(len(pairs), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            idx = order[start : start + self._batch_size]
            encodings = self._tokenizer.encode_batch([pairs[i] for i in idx])
            feeds = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            out[idx] = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32).reshape(len(idx))
        return out


@dataclass(frozen=True, slots=True)
class CrossStep:
    """A pair is a duplicate when ``(1 - blend)·model score + blend·feature probability`` reaches ``threshold``;
    pairs whose cosine is below ``min_cosine`` are not scored (too far apart to be the same fact)."""

    threshold: float
    min_cosine: float = 0.40
    blend: float = 0.0

    def combine(self, score: float, feature_probability: float) -> float:
        return (1.0 - self.blend) * score + self.blend * feature_probability


def judge(
    params: DedupParams, step: CrossStep, new: str, existing: str, cosine: float, score: float | None
) -> tuple[DedupAction, float]:
    """The rule's decision for one pair with the cross-encoder step (``score``: the model's, ``None`` when the pair
    was not scored) in front of the feature rule's gates."""
    rule = DedupRule(params)
    if rule.contradiction(new, existing, cosine) is not None:
        return DedupAction.UPDATE, 0.0
    if cosine < step.min_cosine or score is None:
        return DedupAction.NEW, 0.0
    f = pair_features(new, existing, cosine)
    prob = step.combine(score, params.probability(f))
    if prob < step.threshold or f.swapped(params.min_order):
        return DedupAction.NEW, prob
    return DedupAction.DUPLICATE, prob


def evaluate(
    params: DedupParams, step: CrossStep, scorer: PairScorer, pairs: Sequence[Pair], cosines: Sequence[float]
) -> dict[str, Any]:
    """``memstack eval dedup``'s contract (pairs, threshold, precision, recall, f1) for the rule with ``step``."""
    wanted = [i for i, c in enumerate(cosines) if c >= step.min_cosine]
    scores: list[float | None] = [None] * len(pairs)
    for i, value in zip(wanted, scorer.score([(pairs[i].s1, pairs[i].s2) for i in wanted]).tolist(), strict=True):
        scores[i] = float(value)
    actions = [judge(params, step, p.s1, p.s2, float(c), s)[0] for p, c, s in zip(pairs, cosines, scores, strict=True)]
    result = binary_scores([a is DedupAction.DUPLICATE for a in actions], [p.duplicate for p in pairs])
    return {"pairs": len(pairs), "threshold": step.threshold, **result.as_dict()}


def calibrate_cross_threshold(
    params: DedupParams,
    pairs: Sequence[Pair],
    cosines: Sequence[float],
    scores: Sequence[float],
    *,
    min_precision: float = 0.80,
    min_cosine: float = 0.40,
    blends: Sequence[float] = (0.0,),
    folds: int = 5,
) -> tuple[float, float, list[str]]:
    """The cross-encoder step's ``(blend, threshold)`` from out-of-sample scores of labelled pairs.

    ``scores``: the model's scores of ``pairs`` from a model that did not train on them (held-out or out-of-fold).
    The rule's gates apply as they would in production (``params``' update and word-order gates, no score below
    ``min_cosine``); for each blend of the model's score with ``params``' feature probability, the threshold with
    the best F1 among those whose precision is ≥ ``min_precision``; the best blend wins.
    """
    if len(pairs) < 50 or sum(p.duplicate for p in pairs) < 10:
        raise InputError("calibration needs at least 50 pairs with 10 duplicates; pass a larger --data file")
    probe = DedupRule(params)
    feats = [pair_features(p.s1, p.s2, float(c)) for p, c in zip(pairs, cosines, strict=True)]
    y = np.array([p.duplicate for p in pairs], dtype=np.float64)
    cos = np.asarray(cosines, dtype=np.float64)
    gated = np.array(
        [
            probe.contradiction(p.s1, p.s2, float(c)) is not None or f.swapped(params.min_order)
            for p, c, f in zip(pairs, cosines, feats, strict=True)
        ]
    )
    eligible = ~gated & (cos >= min_cosine)
    lost = int(np.sum((y == 1) & (cos < min_cosine)))
    lines = [
        f"{len(pairs)} pairs, {int(y.sum())} duplicates; {lost} duplicates have a cosine below {min_cosine:.2f} "
        f"(never scored), {int(np.sum(gated & (y == 1)))} are kept apart by the update / word-order gates"
    ]
    model = np.asarray(scores, dtype=np.float64)
    prob = np.array([params.probability(f) for f in feats])
    grid = np.round(np.arange(0.30, 1.0, 0.01), 2)
    chosen: tuple[float, tuple[float, float, float, float]] | None = None
    for blend in blends:
        x = (1.0 - blend) * model + blend * prob
        best = best_threshold(x, eligible, y, grid, min_precision)
        if best is None:
            lines.append(f"blend {blend:.2f}: no threshold reaches precision {min_precision:.2f}")
            continue
        lines.append(
            f"blend {blend:.2f}: best F1 {best[1]:.3f} at threshold {best[0]:.2f} (precision {best[2]:.3f}, "
            f"recall {best[3]:.3f})"
        )
        if chosen is None or best[1] > chosen[1][1]:
            chosen = (float(blend), best)
    if chosen is None:
        raise InputError(f"no threshold reaches precision {min_precision} on these scores; lower --min-precision")
    blend, best = chosen
    x = (1.0 - blend) * model + blend * prob
    lines.append(f"trade-off at blend {blend:.2f} (threshold: precision / recall / F1):")
    for t in (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9):
        s = binary_scores(list(eligible & (x >= t)), list(y == 1))
        lines.append(f"  {t:.2f}: {s.precision:.3f} / {s.recall:.3f} / {s.f1:.3f}")
    lines.append(
        f"blend = {blend:.2f}, threshold = {best[0]:.2f}: best F1 {best[1]:.3f} with precision {best[2]:.3f} ≥ "
        f"{min_precision:.2f} (recall {best[3]:.3f})"
    )
    # the choice above is made and scored on the same pairs; nested CV scores it on pairs it did not see, the same
    # way for the feature rule alone, so the two can be compared
    for name, options in (("blends " + ",".join(f"{b:g}" for b in blends), blends), ("feature rule alone", (1.0,))):
        s = _nested(model, prob, eligible, y, options, grid, min_precision, folds)
        lines.append(
            f"nested {folds}-fold ({name}: blend and threshold chosen on the other folds): precision "
            f"{s.precision:.3f}, recall {s.recall:.3f}, F1 {s.f1:.3f}"
        )
    return blend, best[0], lines


def _nested(
    model: npt.NDArray[np.float64],
    prob: npt.NDArray[np.float64],
    eligible: npt.NDArray[np.bool_],
    y: npt.NDArray[np.float64],
    blends: Sequence[float],
    grid: npt.NDArray[np.float64],
    min_precision: float,
    folds: int,
) -> BinaryScores:
    fold = np.arange(len(y)) % folds
    called = np.zeros(len(y), dtype=bool)
    for k in range(folds):
        fit, test = fold != k, fold == k
        chosen: tuple[float, float, float] | None = None  # (f1, blend, threshold)
        for blend in blends:
            x = (1.0 - blend) * model + blend * prob
            best = best_threshold(x[fit], eligible[fit], y[fit], grid, min_precision)
            if best is not None and (chosen is None or best[1] > chosen[0]):
                chosen = (best[1], float(blend), best[0])
        if chosen is not None:
            _, blend, threshold = chosen
            x = (1.0 - blend) * model + blend * prob
            called[test] = eligible[test] & (x[test] >= threshold)
    return binary_scores(list(called), list(y == 1))
