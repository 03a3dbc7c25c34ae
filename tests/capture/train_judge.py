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
from memstack.context.semantic import fit_head
from memstack.embed import Embedder, get_embedder
from memstack.evals.updates import UpdateCase, load_cases

from .judge_templates import template_cases

ROOT = Path(__file__).resolve().parents[2]
HEAD_PATH = ROOT / "src" / "memstack" / "capture" / "judge" / "data" / "update_head.json"
DATA = Path(__file__).parent / "data"
PAIRS = sorted((DATA / "judge").glob("pairs-*.jsonl"))
ATTRIBUTES = DATA / "judge" / "attributes.jsonl"
DEV = DATA / "updates-dev.jsonl"
AT = datetime(2026, 11, 27, 10, tzinfo=UTC)
L2 = 0.3
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


def fit(cases: Sequence[Case]) -> tuple[Matrix, float]:
    pos, neg = examples(cases)
    return fit_head(pos, neg, l2=L2)


def case_logits(cases: Sequence[Case], weights: Matrix, bias: float) -> list[float]:
    """Per case, the best logit of its statements (the pipeline supersedes when any statement does)."""
    return [float((case.features() @ weights + bias).max()) for case in cases]


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
    oof = [0.0] * len(dev)
    for held in folds:
        kept = set(held)
        w, b = fit([*pairs, *(dev[i] for i in order if i not in kept)])
        for i, s in zip(held, case_logits([dev[i] for i in held], w, b), strict=True):
            oof[i] = s
    threshold = threshold_for(
        [s for c, s in zip(dev, oof, strict=True) if c.update],
        [s for c, s in zip(dev, oof, strict=True) if not c.update],
        TARGET_FP,
    )
    w_pairs, b_pairs = fit(pairs)
    unseen = case_logits(dev, w_pairs, b_pairs)
    unseen_threshold = threshold_for(
        [s for c, s in zip(dev, unseen, strict=True) if c.update],
        [s for c, s in zip(dev, unseen, strict=True) if not c.update],
        TARGET_FP,
    )
    weights, bias = fit([*pairs, *dev])
    about: dict[str, object] = {
        "trained_on": {"pairs": len(pairs), "dev": len(dev)},
        "attributes": attribute_figures,
        "l2": L2,
        "threshold": {"target_fp": TARGET_FP, "chosen_with": f"{FOLDS}-fold out-of-fold scores of the dev cases"},
        "cross_validation": rates(dev, oof, threshold),
        "pairs_only_on_dev": rates(dev, unseen, unseen_threshold),
        "how": "python -m tests.capture.train_judge",
    }
    head = JudgeHead("local:minilm", FEATURES_VERSION, weights, bias, threshold, attributes, about)
    return head, about


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped head; write nothing")
    args = parser.parse_args()
    head, about = asyncio.run(train())
    print(about)
    if args.check:
        shipped = load_head()
        diff = float(np.abs(shipped.weights - head.weights).max())
        print(f"max |weight difference| {diff:.2e}, threshold {shipped.threshold:.4f} → {head.threshold:.4f}")
        return 0 if diff < 1e-3 and abs(shipped.threshold - head.threshold) < 1e-3 else 1
    HEAD_PATH.parent.mkdir(parents=True, exist_ok=True)
    HEAD_PATH.write_text(head.to_json() + "\n", encoding="utf-8")
    print(f"wrote {HEAD_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
