"""What a dedup cross-encoder would cost per saved candidate, beside the feature rule's decision.

A saved candidate is checked against its ``NEAREST_K`` nearest memories; a cross-encoder step would score those hits
in one ONNX batch (memstack has no such step: ``scripts/README.md``). This prints, as one JSON line, the model's
first-use load time, the latency of one pair and of one candidate's batch, and the feature rule's whole decision
(p50 / p95 in ms). Run with memstack's own environment:
``.venv/bin/python scripts/bench_dedup_crossencoder.py --rounds 200 --model M.onnx``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from dedup_cross import PairScorer

from memstack.capture.dedup import NEAREST_K, DedupRule, params_for
from memstack.types import Category, Memory, ScoredMemory, Source

CANDIDATES = (
    "User is vegetarian",
    "User has a biology quiz next week",
    "User's sister lives in Berlin and works as a nurse",
    "User prefers short answers with examples",
)
STORED = (
    "User is a vegetarian",
    "User studies biology at UCLA",
    "User lives in Paris",
    "User likes examples in explanations",
    "User's brother is a software engineer",
)


def _hits(i: int) -> list[ScoredMemory]:
    t0 = datetime(2024, 5, 1, tzinfo=UTC)
    out = []
    for j in range(NEAREST_K):
        text = STORED[(i + j) % len(STORED)]
        memory = Memory(f"m{j}", "u", "default", None, text, Category.FACT, Source.AUTO, 0.9, True, None, t0, t0)
        out.append(ScoredMemory(memory, 0.75 - 0.1 * j))  # all close enough to be scored
    return out


def _ms(samples: list[float]) -> dict[str, float]:
    p50, p95 = np.percentile(samples, [50, 95])
    return {"p50_ms": round(float(p50), 3), "p95_ms": round(float(p95), 3)}


async def main(rounds: int, model: Path) -> dict[str, object]:
    encoder = PairScorer(model)
    t = time.perf_counter()
    encoder.score([("warm", "up")])
    load_ms = (time.perf_counter() - t) * 1000
    single, batch = [], []
    for i in range(rounds):
        cand = CANDIDATES[i % len(CANDIDATES)]
        t = time.perf_counter()
        encoder.score([(cand, STORED[i % len(STORED)])])
        single.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        await asyncio.to_thread(encoder.score, [(cand, h.memory.content) for h in _hits(i)])
        batch.append((time.perf_counter() - t) * 1000)
    rule = DedupRule(params_for("local:minilm"))
    features: list[float] = []
    for i in range(rounds):
        hits = _hits(i)
        t = time.perf_counter()
        rule.decide(CANDIDATES[i % len(CANDIDATES)], hits)
        features.append((time.perf_counter() - t) * 1000)
    return {
        "rounds": rounds,
        "load_ms": round(load_ms, 1),
        "one_pair": _ms(single),
        f"one_candidate_{NEAREST_K}_pairs": _ms(batch),
        "decide_features": _ms(features),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--model", type=Path, required=True, help="an exported model")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main(args.rounds, args.model))))
