"""Fit the guard's semantic head on the development corpus and write ``src/memstack/guard/data/guard_head.json``.

    python -m tests.guard.train_guard            # fit, cross-validate, write the head
    python -m tests.guard.train_guard --check    # fit and compare with the shipped head; write nothing

Training texts: the attacks and look-alikes of :mod:`tests.guard.corpus` and ``data/guard_dev.json`` (never the
held-out or sealed files), and the ordinary text of :mod:`tests.guard.ordinary` (friendly, addressed, everyday
lines, so that warmth and "you" are not mistaken for authority). A delegated task's benign instructions are left
out: the semantic layer does not read instructions. Benign texts of several sentences also give each sentence as a
benign example, since the guard scores sentences.

Only pieces that read as English are trained on and scored, as at run time (:func:`memstack.guard.semantic
.reads_english`): other languages are the rules' to judge.

Two thresholds (logits): ``--suspect`` flags a low-confidence hit (kept in its block, marked) and ``--quarantine`` a
confident one. Their defaults were chosen on the development measurement, ``memstack eval guard`` over LoCoMo's
development turns, STS-B and PAWS sentences and the frozen development attacks, and on the cross-validated figures:
every ordinary set at or under 0.3% flagged, and the look-alikes flagged (rules or head, cross-validated) near 2%,
where lower thresholds would catch more attacks but flag more look-alikes. The cross-validated (5 folds) figures at
those thresholds are printed and stored in the head: attacks caught, look-alikes flagged and ordinary lines flagged,
overall and by training file.
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
from memstack.guard.semantic import Head, fit_mlp, load_head, reads_english, segments

from .corpus import ATTACKS, BENIGN, KNOWN_FALSE_POSITIVES, KNOWN_MISSES
from .ordinary import ordinary_texts

ROOT = Path(__file__).resolve().parents[2]
HEAD_PATH = ROOT / "src" / "memstack" / "guard" / "data" / "guard_head.json"
DEV_PATH = Path(__file__).parent / "data" / "guard_dev.json"
#: More written training texts: ``guard_train_2.json`` (attacks without override words: exfiltration as a task,
#: role-play, standing orders, fake authority and delimiters, other languages, polite phrasing; and their
#: look-alikes) and ``guard_train_spent.json`` (the held-out sets already scored, joined after their scoring).
TRAIN_PATHS = sorted((Path(__file__).parent / "data").glob("guard_train_*.json"))
#: The head's hidden units and weight decay (:func:`memstack.guard.semantic.fit_mlp`).
UNITS = 64
WEIGHT_DECAY = 1e-3
FOLDS = 5
SUSPECT = 3.0
QUARANTINE = 4.0
#: Each hand-written look-alike counts this many times against the thousands of ordinary lines: they are the texts
#: closest to attacks that must pass, and outnumbered they would be given up first.
LOOKALIKE_WEIGHT = 3


def training_texts() -> tuple[list[str], list[str]]:
    """Attacks, and benign texts (the ordinary lines, then the look-alikes), each list ending with those of
    ``guard_dev.json``."""
    attacks, benign, _, _ = _sourced_texts()
    return attacks, benign


def _sourced_texts() -> tuple[list[str], list[str], list[str], list[str]]:
    """:func:`training_texts` with the source of each text (``corpus``, ``ordinary``, a file's stem)."""
    dev = _dev()
    extra = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in TRAIN_PATHS}
    corpus_attacks = [c.text for c in (*ATTACKS, *KNOWN_MISSES)]
    corpus_benign = [c.text for c in (*BENIGN, *KNOWN_FALSE_POSITIVES) if c.field != "instructions"]
    ordinary = ordinary_texts()
    attacks = [*corpus_attacks, *(t for e in extra.values() for t in e["attacks"]), *dev["attacks"]]
    benign = [*ordinary, *corpus_benign, *(t for e in extra.values() for t in e["benign"]), *dev["benign"]]
    attack_from = ["corpus"] * len(corpus_attacks) + [n for n, e in extra.items() for _ in e["attacks"]]
    benign_from = ["ordinary"] * len(ordinary) + ["corpus"] * len(corpus_benign)
    benign_from += [n for n, e in extra.items() for _ in e["benign"]]
    return (
        attacks,
        benign,
        attack_from + ["guard_dev"] * len(dev["attacks"]),
        benign_from + ["guard_dev"] * len(dev["benign"]),
    )


def _dev() -> dict[str, list[str]]:
    data: dict[str, list[str]] = json.loads(DEV_PATH.read_text(encoding="utf-8"))
    return data


def _max_scores(head: Head, vectors: np.ndarray, owners: np.ndarray, n: int) -> np.ndarray:
    scores = head.score(vectors).astype(np.float64)
    out = np.full(n, -np.inf)
    np.maximum.at(out, owners, scores)
    return out


def fit(suspect: float = SUSPECT, quarantine: float = QUARANTINE) -> Head:
    attacks, benign, attack_from, benign_from = _sourced_texts()
    embedder = get_embedder("local:minilm")
    texts = attacks + benign
    pieces: list[str] = []
    owners: list[int] = []
    for i, text in enumerate(texts):
        for piece in segments(normalize(text)) or [normalize(text)]:
            pieces.append(piece)
            owners.append(i)
    english = np.array([reads_english(piece) for piece in pieces])  # the head scores nothing else at run time
    vectors = embedder.embed_sync(pieces).astype(np.float64)  # type: ignore[attr-defined]
    own = np.asarray(owners)
    label = np.r_[np.ones(len(attacks)), np.zeros(len(benign))]
    whole = np.array([owners.index(i) for i in range(len(texts))])  # each text's first piece: the whole text
    piece_label = label[own]
    lookalike = np.r_[np.zeros(len(attacks) + len(ordinary_texts())), np.ones(len(benign) - len(ordinary_texts()))]
    weighted = np.repeat(np.arange(len(pieces)), np.where(lookalike[own] == 1, LOOKALIKE_WEIGHT, 1))

    def fit_on(mask: np.ndarray, about: dict[str, object] | None = None) -> Head:
        """The head fitted on the pieces of ``mask``, look-alikes weighted."""
        chosen = weighted[mask[weighted]]
        attack, benign_ = chosen[piece_label[chosen] == 1], chosen[piece_label[chosen] == 0]
        hidden, hidden_bias, w, b = fit_mlp(vectors[attack], vectors[benign_], units=UNITS, weight_decay=WEIGHT_DECAY)
        return Head("local:minilm", w, b, suspect, about or {}, quarantine, hidden, hidden_bias)

    # attacks train on the whole text; look-alikes on the whole text and each sentence; English pieces only
    train_piece = ((piece_label == 0) | np.isin(np.arange(len(pieces)), whole)) & english

    rng = np.random.default_rng(0)
    folds = np.array_split(rng.permutation(len(texts)), FOLDS)
    cv = np.zeros(len(texts))
    for fold in folds:
        held = np.isin(own, fold) & english
        scores = _max_scores(fit_on(train_piece & ~held), vectors[held], own[held], len(texts))
        cv[fold] = scores[fold]
    threshold = suspect
    flagged = cv >= threshold
    confident = cv >= quarantine
    rules = np.array([bool(scan(t)) for t in texts])
    both = flagged | rules
    source = np.array([*attack_from, *benign_from])
    dev = source == "guard_dev"
    ordinary = source == "ordinary"
    looks = (label == 0) & ~ordinary

    def rate(mask: np.ndarray, where: np.ndarray) -> float:
        return round(float(mask[where].mean()), 3)

    def split(mask: np.ndarray, where: np.ndarray | bool = True) -> dict[str, float]:
        """Attacks caught, look-alikes flagged and ordinary lines flagged, among ``where``."""
        parts = {"attack_recall": label == 1, "lookalike_rate": looks, "ordinary_rate": ordinary}
        return {name: rate(mask, where & part) for name, part in parts.items() if np.any(where & part)}

    figures: dict[str, object] = {
        "folds": FOLDS,
        "semantic": {**split(flagged), "false_positive_rate": rate(flagged, label == 0)},
        "semantic_confident": {**split(confident), "false_positive_rate": rate(confident, label == 0)},
        "rules": split(rules),
        "rules_or_semantic": split(both),
        "guard_dev_rules": {
            "attack_recall": rate(rules, dev & (label == 1)),
            "false_positive_rate": rate(rules, dev & (label == 0)),
        },
        "guard_dev_rules_or_semantic": {
            "attack_recall": rate(both, dev & (label == 1)),
            "false_positive_rate": rate(both, dev & (label == 0)),
        },
        "by_source_rules_or_semantic": {name: split(both, source == name) for name in dict.fromkeys(source)},
    }
    about = {
        "trained_on": {"attacks": len(attacks), "benign": len(benign), "pieces": int(train_piece.sum())},
        "units": UNITS,
        "weight_decay": WEIGHT_DECAY,
        "lookalike_weight": LOOKALIKE_WEIGHT,
        "thresholds": {
            "suspect": suspect,
            "quarantine": quarantine,
            "chosen_with": "memstack eval guard, and the cross-validated look-alike rate",
        },
        "cross_validation": figures,
        "how": "python -m tests.guard.train_guard",
    }
    return fit_on(train_piece, about)


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
        same = (shipped.threshold, shipped.quarantine) == (head.threshold, head.quarantine) and all(
            (a is None and b is None) or (a is not None and b is not None and np.allclose(a, b, atol=1e-3))
            for a, b in (
                (shipped.weights, head.weights),
                (shipped.hidden, head.hidden),
                (shipped.hidden_bias, head.hidden_bias),
            )
        )
        print("shipped head matches" if same else "shipped head differs: retrain")
        return 0 if same else 1
    HEAD_PATH.write_text(head.to_json(), encoding="utf-8")
    print(f"wrote {HEAD_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
