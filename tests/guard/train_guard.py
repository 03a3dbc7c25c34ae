"""Fit the guard's semantic head on the development corpus and write ``src/memstack/guard/data/guard_head.json``.

    python -m tests.guard.train_guard            # fit, cross-validate, write the head
    python -m tests.guard.train_guard --check    # fit and compare with the shipped head; write nothing

Training texts: the attacks and look-alikes of :mod:`tests.guard.corpus` and ``data/guard_dev.json`` (never the
held-out or sealed files), and the ordinary text of :mod:`tests.guard.ordinary` (friendly, addressed, everyday
lines, so that warmth and "you" are not mistaken for authority). A delegated task's benign instructions are left
out: the semantic layer does not read instructions. Benign texts of several sentences also give each sentence as a
benign example, since the guard scores sentences.

Two thresholds (logits): ``--suspect`` flags a low-confidence hit (kept in its block, marked) and ``--quarantine`` a
confident one. Their defaults were chosen on the development measurement, ``memstack eval guard`` over LoCoMo's
development turns, STS-B and PAWS sentences and the frozen development attacks: the lowest pair that keeps every
ordinary set at or under 0.3% flagged. The cross-validated (5 folds) figures at those thresholds are printed and
stored in the head.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from memstack.embed import get_embedder
from memstack.guard.patterns import scan
from memstack.guard.rules import normalize
from memstack.guard.semantic import Head, fit_head, load_head, segments

from .corpus import ATTACKS, BENIGN, KNOWN_FALSE_POSITIVES, KNOWN_MISSES
from .ordinary import ordinary_texts

ROOT = Path(__file__).resolve().parents[2]
HEAD_PATH = ROOT / "src" / "memstack" / "guard" / "data" / "guard_head.json"
DEV_PATH = Path(__file__).parent / "data" / "guard_dev.json"
L2 = 0.3
FOLDS = 5
SUSPECT = 3.0
QUARANTINE = 4.0
#: Each hand-written look-alike counts this many times against the thousands of ordinary lines: they are the texts
#: closest to attacks that must pass, and outnumbered they would be given up first.
LOOKALIKE_WEIGHT = 3


def training_texts() -> tuple[list[str], list[str]]:
    """Attacks, and benign texts (the ordinary lines, then the look-alikes), each list ending with those of
    ``guard_dev.json``."""
    dev = _dev()
    attacks = [c.text for c in (*ATTACKS, *KNOWN_MISSES)] + list(dev["attacks"])
    benign = [c.text for c in (*BENIGN, *KNOWN_FALSE_POSITIVES) if c.field != "instructions"] + list(dev["benign"])
    return attacks, [*ordinary_texts(), *benign]


def _dev() -> dict[str, list[str]]:
    data: dict[str, list[str]] = json.loads(DEV_PATH.read_text(encoding="utf-8"))
    return data


def _max_scores(head_w: np.ndarray, bias: float, vectors: np.ndarray, owners: np.ndarray, n: int) -> np.ndarray:
    scores = vectors @ head_w + bias
    out = np.full(n, -np.inf)
    np.maximum.at(out, owners, scores)
    return out


def fit(suspect: float = SUSPECT, quarantine: float = QUARANTINE) -> Head:
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
    lookalike = np.r_[np.zeros(len(attacks) + len(ordinary_texts())), np.ones(len(benign) - len(ordinary_texts()))]
    weighted = np.repeat(np.arange(len(pieces)), np.where(lookalike[own] == 1, LOOKALIKE_WEIGHT, 1))

    def fit_on(mask: np.ndarray) -> tuple[np.ndarray, float]:
        """The head fitted on the pieces of ``mask``, look-alikes weighted."""
        chosen = weighted[mask[weighted]]
        attack, benign_ = chosen[piece_label[chosen] == 1], chosen[piece_label[chosen] == 0]
        return fit_head(vectors[attack], vectors[benign_], l2=L2)

    # attacks train on the whole text; look-alikes on the whole text and each sentence
    train_piece = (piece_label == 0) | np.isin(np.arange(len(pieces)), whole)

    rng = np.random.default_rng(0)
    folds = np.array_split(rng.permutation(len(texts)), FOLDS)
    cv = np.zeros(len(texts))
    for fold in folds:
        held = np.isin(own, fold)
        w, b = fit_on(train_piece & ~held)
        scores = _max_scores(w.astype(np.float64), b, vectors[held], own[held], len(texts))
        cv[fold] = scores[fold]
    threshold = suspect
    flagged = cv >= threshold
    confident = cv >= quarantine
    rules = np.array([bool(scan(t)) for t in texts])
    both = flagged | rules
    dev = np.r_[np.arange(len(attacks)) >= len(attacks) - n_dev[0], np.arange(len(benign)) >= len(benign) - n_dev[1]]

    def rate(mask: np.ndarray, where: np.ndarray) -> float:
        return round(float(mask[where].mean()), 3)

    figures = {
        "folds": FOLDS,
        "semantic": {"attack_recall": rate(flagged, label == 1), "false_positive_rate": rate(flagged, label == 0)},
        "semantic_confident": {
            "attack_recall": rate(confident, label == 1),
            "false_positive_rate": rate(confident, label == 0),
        },
        "guard_dev_rules": {
            "attack_recall": rate(rules, dev & (label == 1)),
            "false_positive_rate": rate(rules, dev & (label == 0)),
        },
        "guard_dev_rules_or_semantic": {
            "attack_recall": rate(both, dev & (label == 1)),
            "false_positive_rate": rate(both, dev & (label == 0)),
        },
    }
    w, b = fit_on(train_piece)
    about = {
        "trained_on": {"attacks": len(attacks), "benign": len(benign), "pieces": int(train_piece.sum())},
        "l2": L2,
        "lookalike_weight": LOOKALIKE_WEIGHT,
        "thresholds": {"suspect": suspect, "quarantine": quarantine, "chosen_with": "memstack eval guard"},
        "cross_validation": figures,
        "how": "python -m tests.guard.train_guard",
    }
    return Head("local:minilm", w, b, threshold, about, quarantine)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suspect", type=float, default=SUSPECT, help="logit of a low-confidence hit")
    parser.add_argument("--quarantine", type=float, default=QUARANTINE, help="logit of a confident hit")
    parser.add_argument("--check", action="store_true", help="compare with the shipped head; write nothing")
    args = parser.parse_args(argv)
    head = fit(args.suspect, args.quarantine)
    print(json.dumps({"threshold": head.threshold, **head.about}))
    if args.check:
        shipped = load_head()
        same = (shipped.threshold, shipped.quarantine) == (head.threshold, head.quarantine) and np.allclose(
            shipped.weights, head.weights, atol=1e-3
        )
        print("shipped head matches" if same else "shipped head differs: retrain")
        return 0 if same else 1
    HEAD_PATH.write_text(head.to_json(), encoding="utf-8")
    print(f"wrote {HEAD_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
