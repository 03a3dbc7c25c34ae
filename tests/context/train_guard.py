"""Fit the guard's semantic head on the development corpus and write ``src/memstack/context/data/guard_head.json``.

    python -m tests.context.train_guard            # fit, cross-validate, write the head
    python -m tests.context.train_guard --check    # fit and compare with the shipped head; write nothing

Training texts: the attacks and look-alikes of :mod:`tests.context.corpus` and ``data/guard_dev.json`` (never the
held-out or sealed files). A delegated task's benign instructions are left out: the semantic layer does not read
instructions. Benign texts of several sentences also give each sentence as a benign example, since the guard scores
sentences. The threshold is the lowest logit at which the cross-validated (5 folds) semantic layer flags at most
``--max-fpr`` of the look-alikes; the figures it was chosen with are printed and stored in the head.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from memstack.context.patterns import scan
from memstack.context.rules import normalize
from memstack.context.semantic import Head, fit_head, load_head, segments
from memstack.embed import get_embedder

from .corpus import ATTACKS, BENIGN, KNOWN_FALSE_POSITIVES, KNOWN_MISSES

ROOT = Path(__file__).resolve().parents[2]
HEAD_PATH = ROOT / "src" / "memstack" / "context" / "data" / "guard_head.json"
DEV_PATH = Path(__file__).parent / "data" / "guard_dev.json"
L2 = 0.1
FOLDS = 5


def training_texts() -> tuple[list[str], list[str]]:
    """Attacks and look-alikes, each list ending with those of ``guard_dev.json``."""
    dev = _dev()
    attacks = [c.text for c in (*ATTACKS, *KNOWN_MISSES)] + list(dev["attacks"])
    benign = [c.text for c in (*BENIGN, *KNOWN_FALSE_POSITIVES) if c.field != "instructions"] + list(dev["benign"])
    return attacks, benign


def _dev() -> dict[str, list[str]]:
    data: dict[str, list[str]] = json.loads(DEV_PATH.read_text(encoding="utf-8"))
    return data


def _max_scores(head_w: np.ndarray, bias: float, vectors: np.ndarray, owners: np.ndarray, n: int) -> np.ndarray:
    scores = vectors @ head_w + bias
    out = np.full(n, -np.inf)
    np.maximum.at(out, owners, scores)
    return out


def fit(max_fpr: float) -> Head:
    attacks, benign = training_texts()
    n_dev = len(_dev()["attacks"]), len(_dev()["benign"])
    embedder = get_embedder("local:minilm")
    texts = attacks + benign
    pieces: list[str] = []
    owners: list[int] = []
    for i, text in enumerate(texts):
        for piece in segments(normalize(text)) or [normalize(text)]:
            pieces.append(piece)
            owners.append(i)
    vectors = embedder.embed_sync(pieces).astype(np.float64)  # type: ignore[attr-defined]
    own = np.asarray(owners)
    label = np.r_[np.ones(len(attacks)), np.zeros(len(benign))]
    whole = np.array([owners.index(i) for i in range(len(texts))])  # each text's first piece: the whole text
    piece_label = label[own]
    # attacks train on the whole text; look-alikes on the whole text and each sentence
    train_piece = (piece_label == 0) | np.isin(np.arange(len(pieces)), whole)

    rng = np.random.default_rng(0)
    folds = np.array_split(rng.permutation(len(texts)), FOLDS)
    cv = np.zeros(len(texts))
    for fold in folds:
        held = np.isin(own, fold)
        w, b = fit_head(
            vectors[train_piece & ~held & (piece_label == 1)], vectors[train_piece & ~held & (piece_label == 0)], l2=L2
        )
        scores = _max_scores(w.astype(np.float64), b, vectors[held], own[held], len(texts))
        cv[fold] = scores[fold]
    benign_scores = np.sort(cv[label == 0])[::-1]
    allowed = int(np.floor(max_fpr * len(benign_scores)))
    threshold = float(np.nextafter(benign_scores[allowed], np.inf)) if allowed < len(benign_scores) else float("-inf")
    threshold = round(threshold + 5e-4, 3)
    flagged = cv >= threshold
    rules = np.array([bool(scan(t)) for t in texts])
    both = flagged | rules
    dev = np.r_[np.arange(len(attacks)) >= len(attacks) - n_dev[0], np.arange(len(benign)) >= len(benign) - n_dev[1]]

    def rate(mask: np.ndarray, where: np.ndarray) -> float:
        return round(float(mask[where].mean()), 3)

    figures = {
        "folds": FOLDS,
        "max_fpr": max_fpr,
        "semantic": {"attack_recall": rate(flagged, label == 1), "false_positive_rate": rate(flagged, label == 0)},
        "guard_dev_rules": {
            "attack_recall": rate(rules, dev & (label == 1)),
            "false_positive_rate": rate(rules, dev & (label == 0)),
        },
        "guard_dev_rules_or_semantic": {
            "attack_recall": rate(both, dev & (label == 1)),
            "false_positive_rate": rate(both, dev & (label == 0)),
        },
    }
    w, b = fit_head(vectors[train_piece & (piece_label == 1)], vectors[train_piece & (piece_label == 0)], l2=L2)
    about = {
        "trained_on": {"attacks": len(attacks), "benign": len(benign), "pieces": int(train_piece.sum())},
        "l2": L2,
        "cross_validation": figures,
        "how": "python -m tests.context.train_guard",
    }
    return Head("local:minilm", w, b, threshold, about)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-fpr", type=float, default=0.02, help="cross-validated look-alike rate to allow")
    parser.add_argument("--check", action="store_true", help="compare with the shipped head; write nothing")
    args = parser.parse_args(argv)
    head = fit(args.max_fpr)
    print(json.dumps({"threshold": head.threshold, **head.about}))
    if args.check:
        shipped = load_head()
        same = shipped.threshold == head.threshold and np.allclose(shipped.weights, head.weights, atol=1e-3)
        print("shipped head matches" if same else "shipped head differs: retrain")
        return 0 if same else 1
    HEAD_PATH.write_text(head.to_json(), encoding="utf-8")
    print(f"wrote {HEAD_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
