"""Train the update judge's news head (``memstack.capture.judge.newshead``: the statement alone, its MiniLM
embedding through one tanh layer) and its combination with the cross-encoder's score, in memstack's own environment
(numpy only)::

    .venv/bin/python scripts/train_update_crossencoder.py pairs --out judge-pairs
    .venv/bin/python scripts/train_update_head.py --pairs judge-pairs \
        --out src/memstack/capture/judge/data/update-news-head.json

Three parts, each fitted on data the next one does not reuse:

* the **news layer** (one tanh layer over a statement's MiniLM embedding) on the statements of the written training
  pairs (``train.jsonl`` of the pairs dump): the statement nearest an update's memory is news, every statement of a
  compatible case is not; an update's other statements are unlabelled and the cross pairs (a statement of another
  case) say nothing about the statement itself, so both are left out;
* the **combination** (``a · logit(cross) + b · news + c``) on the development pairs (``dev.jsonl``) less the
  held-out cases (``--held-out``, default the most recent spent blind set, ``b8-``): the cross-encoder never trained
  on them, so its scores there are the kind it gives at run time;
* the **threshold** on the same cases: the lowest combined score superseding at most ``TARGET_FP`` of their
  compatible cases (the rule of the cross-encoder's card).

The held-out cases are scored last, with the shipped cross-encoder alone at its card's threshold beside the combined
judge; both figures go into the head's ``about``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src")]
TARGET_FP = 0.02
HIDDEN = 64
L2 = 0.01
STEPS = 300
SEED = 0


def log(msg: str) -> None:
    print(msg, flush=True)


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def labelled(row: dict[str, Any]) -> bool:
    """An update's statements other than the nearest one are unlabelled (which one carries the news is not said)."""
    return not (row["update"] and not row["nearest"] and not row["cross"])


async def embed(texts: list[str]) -> dict[str, np.ndarray]:
    from memstack.embed import get_embedder

    embedder = get_embedder("local:minilm")
    try:
        unique = sorted(set(texts))
        out: list[np.ndarray] = []
        for i in range(0, len(unique), 256):
            out.append(np.asarray(await embedder.embed(unique[i : i + 256]), dtype=np.float32))
        vectors = np.concatenate(out)
        return {text: vectors[i] for i, text in enumerate(unique)}
    finally:
        await embedder.aclose()


def fit_news(train: list[dict[str, Any]], vectors: dict[str, np.ndarray]) -> tuple[Any, ...]:
    from memstack.capture.softmax import fit_mlp

    rows = [r for r in train if labelled(r) and not r["cross"]]
    x = np.stack([vectors[r["said"]] for r in rows])
    y = np.array([int(r["update"]) for r in rows], dtype=np.int64)
    log(f"news layer: {len(rows)} statements ({int(y.sum())} news)")
    w1, b1, w2, b2 = fit_mlp(x, y, 2, np.ones(len(y)), l2=L2, steps=STEPS, hidden=HIDDEN, seed=SEED)
    return w1, b1, (w2[1] - w2[0]).astype(np.float32), float(b2[1] - b2[0])


def fit_combine(features: np.ndarray, y: np.ndarray, l2: float = 1.0) -> tuple[float, float, float]:
    """Logistic regression of ``y`` on the feature columns (Newton steps, L2 on the weights, not the bias)."""
    x = np.c_[features, np.ones(len(y))]
    w = np.zeros(x.shape[1])
    reg = np.diag([l2] * features.shape[1] + [0.0])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + reg @ w
        hess = (x * (p * (1 - p))[:, None]).T @ x + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return float(w[0]), float(w[1]), float(w[2])


def case_best(rows: list[dict[str, Any]], scores: np.ndarray) -> dict[str, tuple[bool, float]]:
    """Per case the best score of its own statements (the pipeline supersedes when any of them does)."""
    best: dict[str, tuple[bool, float]] = {}
    for row, score in zip(rows, scores, strict=True):
        if not row["cross"]:
            update, seen = best.get(row["id"], (row["update"], -np.inf))
            best[row["id"]] = (update, max(seen, float(score)))
    return best


def threshold_for(best: dict[str, tuple[bool, float]]) -> float:
    compatible = np.sort(np.array([s for u, s in best.values() if not u]))[::-1]
    return float(compatible[int(np.floor(TARGET_FP * len(compatible)))]) + 1e-6


def figures(best: dict[str, tuple[bool, float]], threshold: float) -> dict[str, Any]:
    updates = np.array([s for u, s in best.values() if u])
    compatible = np.array([s for u, s in best.values() if not u])
    return {
        "updates": len(updates),
        "updates_applied": int(np.sum(updates >= threshold)),
        "compatible": len(compatible),
        "compatible_superseded": int(np.sum(compatible >= threshold)),
    }


def logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.asarray(np.log(q / (1 - q)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, required=True, help="the folder of train.jsonl and dev.jsonl")
    parser.add_argument("--out", type=Path, required=True, help="the head file to write")
    parser.add_argument("--held-out", default="b8-", help="id prefix of the development cases kept out of fitting")
    args = parser.parse_args()

    from memstack.capture.judge.cross import CrossEncoder, load_card
    from memstack.capture.judge.newshead import NewsHead
    from memstack.embed.local import MiniLMEmbedder

    train, dev = load(args.pairs / "train.jsonl"), load(args.pairs / "dev.jsonl")
    vectors = asyncio.run(embed([r["said"] for r in [*train, *dev]]))
    w1, b1, w2, b2 = fit_news(train, vectors)
    probe = NewsHead(MiniLMEmbedder.name, (w1, b1), (w2, b2), (1.0, 0.0, 0.0), 0.5)
    news = probe.news(np.stack([vectors[r["said"]] for r in dev]))
    log(f"scoring {len(dev)} development pairs with the shipped cross-encoder")
    cross = CrossEncoder().score_sync([(r["memory"], r["said"]) for r in dev])
    card = load_card()

    held = np.array([r["id"].startswith(args.held_out) for r in dev])
    fit = ~held & np.array([labelled(r) for r in dev])
    a, b, c = fit_combine(np.c_[logit(cross)[fit], news[fit]], np.array([r["update"] for r in dev])[fit].astype(float))
    combined = NewsHead(probe.model, probe.hidden, probe.out, (a, b, c), 0.5).probability(cross, news)
    part = [r for r, h in zip(dev, held, strict=True) if not h]
    out = [r for r, h in zip(dev, held, strict=True) if h]
    threshold = threshold_for(case_best(part, combined[~held]))
    report = {
        "combine": {"cross_logit": round(a, 4), "news_logit": round(b, 4), "bias": round(c, 4)},
        "fitted_on": {
            "cross_encoder_alone": figures(case_best(part, cross[~held]), card.threshold),
            "with_news_head": figures(case_best(part, combined[~held]), threshold),
        },
        "held_out": {
            "cases": f"ids {args.held_out}* of the development set, never fitted on",
            "cross_encoder_alone": figures(case_best(out, cross[held]), card.threshold),
            "with_news_head": figures(case_best(out, combined[held]), threshold),
        },
    }
    log(json.dumps(report, indent=1))
    about = {
        "news_layer": {"statements_of": "the written training pairs (train.jsonl of the pairs dump)", "hidden": HIDDEN},
        "combine_and_threshold": {"target_fp": TARGET_FP, "fitted_on": "the development set less the held-out ids"},
        **report,
        "how": "scripts/train_update_head.py",
    }
    head = NewsHead(probe.model, probe.hidden, probe.out, (a, b, c), threshold, about)
    args.out.write_text(head.to_json(), encoding="utf-8")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
