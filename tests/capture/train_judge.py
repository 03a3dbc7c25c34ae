"""Fit the offline update judge's head and write ``src/memstack/capture/judge/data/update_head.json``.

    python -m tests.capture.train_judge            # fit, cross-validate, choose the threshold, write the head
    python -m tests.capture.train_judge --check    # fit and compare with the shipped head; write nothing

First the attribute head (:mod:`memstack.capture.judge.attributes`) on the written paraphrases of
``data/judge/attributes.jsonl`` (its 5-fold accuracy is recorded). Then the pair head on these cases: the written
pairs of ``data/judge/pairs-*.jsonl`` (2,000), the generated direct cases of :mod:`tests.capture.judge_templates`
(640), and the development set of ``memstack eval updates`` (``data/updates-dev.jsonl``; never a blind set). Each
message is read as the judge will read it: through the offline classifier, plus the statements the news step drafts
from what the classifier passed over.
For a compatible case every statement is a negative; for an update the statement nearest the memory is the positive
(which of several carries the news is not labelled, so the others are left out); one more negative per case pairs the
memory with a statement of another case, as the judge also reads memories about other things.

The threshold is chosen on out-of-fold scores of the development cases (5 folds: the pairs and four fifths of the
development set train, the fifth is scored): the lowest logit at which at most :data:`TARGET_FP` of the compatible
development cases would be superseded. The head also records, as a figure of generalisation, what a head trained on
the pairs alone (written and generated) does on the whole development set, which it never saw.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memstack.capture.judge.attributes import LABELS, AttributeHead, fit_attributes
from memstack.capture.judge.features import FEATURES_VERSION, pair_features
from memstack.capture.judge.offline import JudgeHead, load_head
from memstack.capture.news import _covered, _draft
from memstack.capture.offline import OfflineClassifier
from memstack.capture.rules import statements
from memstack.embed import Embedder, get_embedder
from memstack.evals.updates import UpdateCase, load_cases
from memstack.guard.semantic import fit_head

from .judge_templates import template_cases

ROOT = Path(__file__).resolve().parents[2]
HEAD_PATH = ROOT / "src" / "memstack" / "capture" / "judge" / "data" / "update_head.json"
DATA = Path(__file__).parent / "data"
PAIRS = sorted((DATA / "judge").glob("pairs-*.jsonl"))
ATTRIBUTES = DATA / "judge" / "attributes.jsonl"
DEV = DATA / "updates-dev.jsonl"
AT = datetime(2026, 11, 27, 10, tzinfo=UTC)
L2 = 0.3
UNITS = 32
WEIGHT_DECAY = 0.05
EPOCHS = 30
FOLDS = 5
#: The share of compatible development cases the chosen threshold may supersede (out of fold).
TARGET_FP = 0.02
SEED = 13

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Case:
    """One case as the judge reads it: the memory, the statements of the message, their embeddings and attribute
    distributions (row 0: the memory)."""

    id: str
    update: bool
    memory: str
    said: tuple[str, ...]
    vectors: Matrix
    kinds: Matrix

    def features(self) -> Matrix:
        return np.stack([self.pair(i, self) for i in range(len(self.said))])

    def pair(self, i: int, memory: Case) -> Matrix:
        """Statement ``i`` of this case against ``memory``'s memory."""
        return pair_features(
            self.said[i], memory.memory, self.vectors[i + 1], memory.vectors[0], self.kinds[i + 1], memory.kinds[0]
        )


async def read_cases(cases: Sequence[UpdateCase], embedder: Embedder, attributes: AttributeHead) -> list[Case]:
    classifier = OfflineClassifier(embedder)
    out: list[Case] = []
    for case in cases:
        found = await classifier.classify(case.message, at=AT)
        said = [c.content for c in found]
        for sentence in statements(case.message):
            if not _covered(sentence, found) and (draft := _draft(sentence, AT)) is not None:
                said.append(draft.content)
        said = list(dict.fromkeys(said))
        if not said:
            continue
        vectors = await embedder.embed([case.memory, *said])
        kinds = attributes.probabilities(vectors)
        out.append(Case(case.id, case.kind == "update", case.memory, tuple(said), vectors, kinds))
    return out


def examples(cases: Sequence[Case], seed: int = SEED) -> tuple[Matrix, Matrix]:
    """Positives and negatives (see the module docstring)."""
    rng = random.Random(seed)
    pos: list[Matrix] = []
    neg: list[Matrix] = []
    for case in cases:
        x = case.features()
        if case.update:
            pos.append(x[int(np.argmax(case.vectors[1:] @ case.vectors[0]))])
        else:
            neg.extend(x)
        other = cases[rng.randrange(len(cases))]
        if other is not case:
            neg.append(other.pair(0, case))
    return np.stack(pos), np.stack(neg)


@dataclass(frozen=True, slots=True)
class Net:
    mean: Matrix
    scale: Matrix
    hidden: Matrix
    hidden_bias: Matrix
    out: Matrix
    out_bias: float

    def logits(self, x: Matrix) -> Matrix:
        h = np.maximum(((x - self.mean) / self.scale) @ self.hidden + self.hidden_bias, 0.0)
        return np.asarray(h @ self.out + self.out_bias, dtype=np.float32)


def fit(cases: Sequence[Case], seed: int = SEED) -> Net:
    """One hidden ReLU layer (:data:`UNITS`), inputs standardised, dropout 0.3 on the hidden layer, AdamW (decay
    :data:`WEIGHT_DECAY`), positives weighted to balance the classes, minibatches of 128, :data:`EPOCHS` epochs."""
    pos, neg = examples(cases)
    x = np.vstack([pos, neg]).astype(np.float64)
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-4
    x = (x - mean) / scale
    rng = np.random.default_rng(seed)
    params = {
        "w1": rng.uniform(-1, 1, (x.shape[1], UNITS)) / np.sqrt(x.shape[1]),
        "b1": np.zeros(UNITS),
        "w2": rng.uniform(-1, 1, UNITS) / np.sqrt(UNITS),
        "b2": np.zeros(1),
    }
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    weight = np.where(y == 1, len(neg) / len(pos), 1.0)
    step, lr, beta1, beta2 = 0, 1e-3, 0.9, 0.999
    for _ in range(EPOCHS):
        order = rng.permutation(len(y))
        for start in range(0, len(y), 128):
            idx = order[start : start + 128]
            xb, yb, wb = x[idx], y[idx], weight[idx]
            pre = xb @ params["w1"] + params["b1"]
            keep = (rng.random(pre.shape) >= 0.3) / 0.7
            h = np.maximum(pre, 0.0) * keep
            z = h @ params["w2"] + params["b2"][0]
            p = 1.0 / (1.0 + np.exp(-z))
            dz = (p - yb) * wb / len(idx)
            dh = np.outer(dz, params["w2"]) * keep * (pre > 0)
            grads = {"w1": xb.T @ dh, "b1": dh.sum(axis=0), "w2": h.T @ dz, "b2": np.array([dz.sum()])}
            step += 1
            for k, g in grads.items():
                m, v = moments[k]
                m[:] = beta1 * m + (1 - beta1) * g
                v[:] = beta2 * v + (1 - beta2) * g * g
                if k.startswith("w"):
                    params[k] *= 1 - lr * WEIGHT_DECAY
                params[k] -= lr * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + 1e-8)
    f32 = np.float32
    return Net(
        mean.astype(f32),
        scale.astype(f32),
        params["w1"].astype(f32),
        params["b1"].astype(f32),
        params["w2"].astype(f32),
        float(params["b2"][0]),
    )


@dataclass(frozen=True, slots=True)
class Linear:
    weights: Matrix
    bias: float

    def logits(self, x: Matrix) -> Matrix:
        return np.asarray(x @ self.weights + self.bias, dtype=np.float32)


def fit_linear(cases: Sequence[Case]) -> Linear:
    """An L2-regularised logistic regression (:data:`L2`), each class weighted to half the loss."""
    pos, neg = examples(cases)
    weights, bias = fit_head(pos, neg, l2=L2)
    return Linear(weights, bias)


def case_logits(cases: Sequence[Case], model: Net | Linear) -> Matrix:
    """Per case, the best logit of its statements (the pipeline supersedes when any statement does)."""
    return np.array([float(model.logits(case.features()).max()) for case in cases])


def norms(linear: Matrix, net: Matrix, compatible: Matrix) -> tuple[float, float, float, float]:
    """Mean and spread of each reader's scores over the compatible cases (the scale both are put on)."""
    return (
        float(linear[compatible].mean()),
        float(linear[compatible].std()),
        float(net[compatible].mean()),
        float(net[compatible].std()),
    )


def mixed(linear: Matrix, net: Matrix, n: tuple[float, float, float, float]) -> Matrix:
    return np.asarray(((linear - n[0]) / n[1] + (net - n[2]) / n[3]) / 2)


def threshold_for(updates: Sequence[float], compatible: Sequence[float], target: float) -> float:
    """The lowest threshold that supersedes at most ``target`` of the compatible cases."""
    ranked = sorted(compatible, reverse=True)
    allowed = int(np.floor(target * len(ranked)))
    return ranked[allowed] + 1e-4 if allowed < len(ranked) else min(updates, default=0.0)


def rates(cases: Sequence[Case], logits: Sequence[float], threshold: float) -> dict[str, float | int]:
    updates = [s for c, s in zip(cases, logits, strict=True) if c.update]
    compatible = [s for c, s in zip(cases, logits, strict=True) if not c.update]
    return {
        "updates": len(updates),
        "updates_applied": round(float(np.mean(np.asarray(updates) >= threshold)), 3),
        "compatible": len(compatible),
        "compatible_superseded": int(np.sum(np.asarray(compatible) >= threshold)),
    }


async def fit_attribute_head(embedder: Embedder) -> tuple[AttributeHead, dict[str, object]]:
    """The attribute head on the written paraphrases, with its 5-fold accuracy."""
    rows = [json.loads(line) for line in ATTRIBUTES.read_text(encoding="utf-8").splitlines() if line.strip()]
    vectors = await embedder.embed([r["text"] for r in rows])
    labels = [r["attribute"] for r in rows]
    order = list(range(len(rows)))
    random.Random(SEED).shuffle(order)
    right = 0
    for k in range(FOLDS):
        held = set(order[k::FOLDS])
        kept = [i for i in order if i not in held]
        head = fit_attributes(vectors[kept], [labels[i] for i in kept])
        guesses = head.probabilities(vectors[sorted(held)]).argmax(axis=1)
        right += sum(LABELS[g] == labels[i] for g, i in zip(guesses, sorted(held), strict=True))
    return fit_attributes(vectors, labels), {"statements": len(rows), "cv_accuracy": round(right / len(rows), 3)}


async def train() -> tuple[JudgeHead, dict[str, object]]:
    embedder = get_embedder("local:minilm")
    try:
        attributes, attribute_figures = await fit_attribute_head(embedder)
        written = [c for path in PAIRS for c in load_cases(path)]
        pairs = await read_cases([*written, *template_cases()], embedder, attributes)
        dev = await read_cases(load_cases(DEV), embedder, attributes)
    finally:
        await embedder.aclose()
    order = list(range(len(dev)))
    random.Random(SEED).shuffle(order)
    folds = [order[i::FOLDS] for i in range(FOLDS)]
    oof_linear, oof_net = np.zeros(len(dev)), np.zeros(len(dev))
    for held in folds:
        kept = set(held)
        training = [*pairs, *(dev[i] for i in order if i not in kept)]
        scored = [dev[i] for i in held]
        oof_linear[held] = case_logits(scored, fit_linear(training))
        oof_net[held] = case_logits(scored, fit(training))
    update = np.array([c.update for c in dev])
    scale = norms(oof_linear, oof_net, ~update)
    oof = mixed(oof_linear, oof_net, scale)
    threshold = threshold_for(oof[update].tolist(), oof[~update].tolist(), TARGET_FP)
    alone_linear, alone_net = case_logits(dev, fit_linear(pairs)), case_logits(dev, fit(pairs))
    unseen = mixed(alone_linear, alone_net, norms(alone_linear, alone_net, ~update))
    unseen_threshold = threshold_for(unseen[update].tolist(), unseen[~update].tolist(), TARGET_FP)
    linear, final = fit_linear([*pairs, *dev]), fit([*pairs, *dev])
    about: dict[str, object] = {
        "trained_on": {"pairs": len(pairs), "dev": len(dev)},
        "attributes": attribute_figures,
        "linear": {"l2": L2},
        "network": {"units": UNITS, "weight_decay": WEIGHT_DECAY, "epochs": EPOCHS},
        "threshold": {"target_fp": TARGET_FP, "chosen_with": f"{FOLDS}-fold out-of-fold scores of the dev cases"},
        "cross_validation": rates(dev, oof.tolist(), threshold),
        "pairs_only_on_dev": rates(dev, unseen.tolist(), unseen_threshold),
        "how": "python -m tests.capture.train_judge",
    }
    head = JudgeHead(
        "local:minilm",
        FEATURES_VERSION,
        linear.weights,
        linear.bias,
        scale,
        final.mean,
        final.scale,
        final.hidden,
        final.hidden_bias,
        final.out,
        final.out_bias,
        threshold,
        attributes,
        about,
    )
    return head, about


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped head; write nothing")
    args = parser.parse_args()
    head, about = asyncio.run(train())
    print(about)
    if args.check:
        shipped = load_head()
        diff = float(np.abs(shipped.hidden - head.hidden).max())
        print(f"max |weight difference| {diff:.2e}, threshold {shipped.threshold:.4f} → {head.threshold:.4f}")
        return 0 if diff < 1e-3 and abs(shipped.threshold - head.threshold) < 1e-3 else 1
    HEAD_PATH.parent.mkdir(parents=True, exist_ok=True)
    HEAD_PATH.write_text(head.to_json() + "\n", encoding="utf-8")
    print(f"wrote {HEAD_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
