"""``memstack eval dedup``: the production dedup rule on paraphrase pairs, and how its parameters are derived.

Formats (no header line):
- ``stsb``: ``s1,s2,score`` CSV, score 0-5; a pair scored ≥ 4 is a duplicate.
- ``paws``: ``id<TAB>s1<TAB>s2<TAB>label`` TSV; label 1 is a duplicate.

A pair counts as "duplicate" only when the rule answers :attr:`DedupAction.DUPLICATE`; an update (contradiction)
and new are both "not duplicate".
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memstack.capture.dedup import FEATURES, DedupAction, DedupParams, DedupRule, pair_features
from memstack.embed import Embedder
from memstack.errors import InputError
from memstack.evals.common import binary_scores, progress
from memstack.files import read_text

__all__ = ["Pair", "best_threshold", "calibrate", "embed_pairs", "evaluate", "load_pairs"]

STSB_DUPLICATE = 4.0
CURVE_THRESHOLDS = tuple(round(0.30 + 0.05 * i, 2) for i in range(14))  # 0.30 … 0.95
FORMATS = ("stsb", "paws")


@dataclass(frozen=True, slots=True)
class Pair:
    s1: str
    s2: str
    duplicate: bool
    score: float  # STS-B similarity, or the PAWS label


def load_pairs(path: Path, fmt: str) -> list[Pair]:
    """Read an STS-B CSV or a PAWS TSV; a malformed row raises ``InputError`` naming its line."""
    pairs: list[Pair] = []
    with io.StringIO(read_text(path, f"{fmt} pair file", hint="pass the file's path with --data"), newline="") as fh:
        if fmt == "stsb":
            for line, row in enumerate(csv.reader(fh), start=1):
                if not row:
                    continue
                try:
                    s1, s2, raw = row
                    score = float(raw)
                except ValueError:
                    raise InputError(f"{path}:{line}: expected s1,s2,score with a numeric score, got {row!r}") from None
                pairs.append(Pair(s1, s2, score >= STSB_DUPLICATE, score))
        elif fmt == "paws":
            for line, text in enumerate(fh, start=1):
                cols = text.rstrip("\r\n").split("\t")
                if cols == [""]:
                    continue
                if len(cols) != 4 or cols[3] not in ("0", "1"):
                    if line == 1 and cols[-1] == "label":
                        continue  # tolerate the header of the original PAWS release
                    raise InputError(f"{path}:{line}: expected id<TAB>s1<TAB>s2<TAB>0|1, got {text[:80]!r}")
                pairs.append(Pair(cols[1], cols[2], cols[3] == "1", float(cols[3])))
        else:
            raise InputError(f"unknown pair format {fmt!r}; use one of: {', '.join(FORMATS)}")
    if not pairs:
        raise InputError(f"{path} holds no pairs")
    return pairs


async def embed_pairs(
    embedder: Embedder, pairs: Sequence[Pair], *, batch: int = 256, show_progress: bool = True
) -> npt.NDArray[np.float32]:
    """The cosine of each pair under ``embedder`` (rows are unit length, so a dot product)."""
    texts = sorted({t for p in pairs for t in (p.s1, p.s2)})
    index = {t: i for i, t in enumerate(texts)}
    parts = []
    with progress(f"embedding {len(texts)} texts", len(texts), enabled=show_progress) as bar:
        for start in range(0, len(texts), batch):
            chunk = texts[start : start + batch]
            parts.append(await embedder.embed(chunk))
            bar.advance(len(chunk))
    vectors = np.concatenate(parts) if parts else np.zeros((0, embedder.dim), dtype=np.float32)
    a = vectors[[index[p.s1] for p in pairs]]
    b = vectors[[index[p.s2] for p in pairs]]
    cos: npt.NDArray[np.float32] = np.einsum("ij,ij->i", a, b).astype(np.float32)
    return cos


def evaluate(rule: DedupRule, pairs: Sequence[Pair], cosines: Sequence[float]) -> dict[str, Any]:
    """Run the rule on every pair; the summary holds the contract keys plus a breakdown.

    ``detail.curve`` is the rule's precision / recall trade-off: the same rule (gates included) with its threshold
    moved, so the cost of a stricter or looser threshold can be read off without re-running anything."""
    judged = [rule.judge(p.s1, p.s2, float(c)) for p, c in zip(pairs, cosines, strict=True)]
    actions = [action for action, _, _ in judged]
    gold = [p.duplicate for p in pairs]
    result = binary_scores([a is DedupAction.DUPLICATE for a in actions], gold)
    baseline = binary_scores([float(c) > 0.92 for c in cosines], gold)
    # a pair the gates keep apart (an update, or the same words in another order) is never a duplicate
    open_ = [
        a is not DedupAction.UPDATE and not pair_features(p.s1, p.s2, float(c)).swapped(rule.params.min_order)
        for p, c, a in zip(pairs, cosines, actions, strict=True)
    ]
    curve = []
    for t in CURVE_THRESHOLDS:
        s = binary_scores([o and prob >= t for o, (_, prob, _) in zip(open_, judged, strict=True)], gold)
        curve.append({"threshold": t, **s.as_dict()})
    return {
        "pairs": len(pairs),
        "threshold": rule.params.threshold,
        **result.as_dict(),
        "detail": {
            "embedder": rule.params.embedder,
            "positives": sum(gold),
            "tp": result.tp,
            "fp": result.fp,
            "fn": result.fn,
            "updates": sum(a is DedupAction.UPDATE for a in actions),
            "word_swaps": sum(not o for o, a in zip(open_, actions, strict=True) if a is not DedupAction.UPDATE),
            "min_order": rule.params.min_order,
            "cosine_0.92": baseline.as_dict(),
            "curve": curve,
        },
    }


# --- calibration --------------------------------------------------------------------------------------------------


def _fit_logistic(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], l2: float = 1e-2) -> npt.NDArray[np.float64]:
    """L2-regularised logistic regression by Newton's method; ``x`` includes a bias column (last)."""
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -60, 60)))
        grad = x.T @ (p - y) / len(y) + penalty * w
        hess = (x.T * (p * (1 - p))) @ x / len(y) + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def best_threshold(
    scores: npt.NDArray[np.float64],
    eligible: npt.NDArray[np.bool_],
    y: npt.NDArray[np.float64],
    grid: npt.NDArray[np.float64],
    min_precision: float,
) -> tuple[float, float, float, float] | None:
    """``(threshold, f1, precision, recall)`` with the best F1 among thresholds whose precision is high enough."""
    best: tuple[float, float, float, float] | None = None
    for t in grid:
        s = binary_scores(list(eligible & (scores >= t)), list(y == 1))
        if s.precision >= min_precision and (best is None or s.f1 > best[1]):
            best = (float(t), s.f1, s.precision, s.recall)
    return best


def calibrate(
    embedder_name: str,
    pairs: Sequence[Pair],
    cosines: Sequence[float],
    *,
    min_precision: float = 0.80,
    order_keep: float = 0.90,
    folds: int = 5,
) -> tuple[DedupParams, list[str]]:
    """Derive the parameters of ``embedder_name`` from labelled pairs; returns them with a readable derivation.

    1. ``min_order``: the word-order gate may cost at most ``1 - order_keep`` of the true duplicates that share
       their words (the only pairs it applies to, see :attr:`PairFeatures.same_words`).
    2. ``update_cosine``: the lowest cosine above which ≥ 90% of pairs share a topic (STS-B score ≥ 2).
    3. Weights: logistic regression of "duplicate" on :data:`FEATURES`, features standardised for the fit and
       folded back into raw units.
    4. ``threshold``: from ``folds``-fold cross-validated probabilities of the full rule (gates included), the value
       with the best F1 among those whose precision is ≥ ``min_precision``.
    """
    if len(pairs) < 50 or sum(p.duplicate for p in pairs) < 10:
        raise InputError("calibration needs at least 50 pairs with 10 duplicates; pass a larger --data file")
    feats = [pair_features(p.s1, p.s2, float(c)) for p, c in zip(pairs, cosines, strict=True)]
    y = np.array([p.duplicate for p in pairs], dtype=np.float64)
    cos = np.asarray(cosines, dtype=np.float64)
    lines: list[str] = [f"{len(pairs)} pairs, {int(y.sum())} duplicates, embedder {embedder_name}"]

    order = np.array([f.order for f in feats])
    same = np.array([f.same_words for f in feats])
    same_dups = order[(y == 1) & same]
    min_order = float(np.floor(np.quantile(same_dups, 1 - order_keep) * 100) / 100) if len(same_dups) else 1.0
    lines.append(
        f"min_order = {min_order:.2f}: {order_keep:.0%} of the {len(same_dups)} duplicates that share their words "
        "keep their word order at least this well"
    )

    topical = np.array([p.score >= 2.0 for p in pairs])
    update_cosine = 0.95
    for c in np.arange(0.40, 0.96, 0.01):
        above = cos >= c
        if above.sum() >= 20 and topical[above].mean() >= 0.90:
            update_cosine = round(float(c), 2)
            break
    lines.append(f"update_cosine = {update_cosine:.2f}: ≥ 90% of pairs at least this close share a topic (score ≥ 2)")

    raw = np.array([f.vector() for f in feats], dtype=np.float64)
    mu, sd = raw.mean(axis=0), raw.std(axis=0)
    sd[sd == 0] = 1.0
    x = np.column_stack([(raw - mu) / sd, np.ones(len(raw))])

    probe = DedupRule(DedupParams(embedder_name, {}, 0.0, 0.5, min_order, update_cosine))
    gated = np.array(
        [probe.judge(p.s1, p.s2, float(c))[0] is DedupAction.UPDATE for p, c in zip(pairs, cosines, strict=True)]
    )
    cv = np.zeros(len(pairs))
    fold = np.arange(len(pairs)) % folds
    for k in range(folds):
        w = _fit_logistic(x[fold != k], y[fold != k])
        cv[fold == k] = 1.0 / (1.0 + np.exp(-np.clip(x[fold == k] @ w, -60, 60)))
    swapped = np.array([f.swapped(min_order) for f in feats])
    eligible = ~gated & ~swapped
    best = best_threshold(cv, eligible, y, np.round(np.arange(0.30, 0.96, 0.01), 2), min_precision)
    if best is None:
        raise InputError(f"no threshold reaches precision {min_precision} on this file; lower --min-precision")
    threshold = best[0]
    lines.append("cross-validated trade-off (threshold: precision / recall / F1):")
    for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        s = binary_scores(list(eligible & (cv >= t)), list(y == 1))
        lines.append(f"  {t:.1f}: {s.precision:.3f} / {s.recall:.3f} / {s.f1:.3f}")
    lines.append(
        f"threshold = {threshold:.2f}: best {folds}-fold cross-validated F1 {best[1]:.3f} with precision "
        f"{best[2]:.3f} ≥ {min_precision:.2f} (recall {best[3]:.3f})"
    )
    alone = best_threshold(cos, eligible, y, np.round(np.arange(0.50, 1.0, 0.005), 3), min_precision)
    lines.append(
        "for comparison, cosine alone (same gates, its best threshold on this file): "
        + (
            f"F1 {alone[1]:.3f} at cosine ≥ {alone[0]:.3f} (precision {alone[2]:.3f}, recall {alone[3]:.3f})"
            if alone
            else f"never reaches precision {min_precision:.2f}"
        )
    )

    w = _fit_logistic(x, y)
    weights = {name: round(float(w[i] / sd[i]), 4) for i, name in enumerate(FEATURES)}
    bias = round(float(w[-1] - np.sum(w[:-1] * mu / sd)), 4)
    lines.append(
        "weights (raw units): " + ", ".join(f"{k} {v:+.4f}" for k, v in weights.items()) + f", bias {bias:+.4f}"
    )
    derivation = (
        f"memstack eval dedup --calibrate on {len(pairs)} STS-B train pairs: CV F1 {best[1]:.3f} at precision "
        f"{best[2]:.3f}"
    )
    params = DedupParams(embedder_name, weights, bias, threshold, min_order, update_cosine, derivation)
    return params, lines
