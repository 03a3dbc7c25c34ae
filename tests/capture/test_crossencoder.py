"""The dedup rule's cross-encoder step: its runtime's contract, and the rule with a stand-in model (none ships)."""

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from memstack.capture.crossencoder import (
    MODEL_FILE,
    MODEL_SHA256,
    CrossEncoder,
    file_sha256,
    shared_cross_encoder,
    shipped_model,
)
from memstack.capture.dedup import (
    CALIBRATED,
    CrossParams,
    DedupAction,
    DedupParams,
    DedupRule,
    pair_features,
    params_for,
)
from memstack.errors import ConfigError
from memstack.evals.dedup import Pair, evaluate
from memstack.types import Category, Memory, ScoredMemory, Source

T0 = datetime(2024, 5, 1, tzinfo=UTC)
FEATURES = replace(CALIBRATED["local:minilm"], cross=None)  # the feature rule alone


def memory(id_: str, content: str) -> Memory:
    return Memory(id_, "u1", "default", None, content, Category.FACT, Source.AUTO, 0.9, True, None, T0, T0)


def test_a_shipped_model_is_the_recorded_file_and_none_ships_today() -> None:
    path = shipped_model()
    assert (path is None) == (MODEL_SHA256 is None)  # a model file and its recorded hash come together
    if path is not None:
        assert path.name == MODEL_FILE and file_sha256(path) == MODEL_SHA256
    assert MODEL_SHA256 is None and shared_cross_encoder() is None  # the trained one was no gain (data/README.md)


def test_the_production_rule_for_minilm_is_the_feature_rule_without_a_model() -> None:
    params = params_for("local:minilm")
    assert params.cross is None and params == CALIBRATED["local:minilm"]
    rule = DedupRule.for_embedder("local:minilm")
    assert rule.scorer is None and not rule.needs_score(0.99)


def test_a_missing_model_file_says_what_to_do(tmp_path: Path) -> None:
    encoder = CrossEncoder(tmp_path / "missing.onnx")
    with pytest.raises(ConfigError, match="train_dedup_crossencoder"):
        encoder.score_sync([("a", "b")])
    assert encoder.score_sync([]).shape == (0,)


class TableScorer:
    """A stand-in model: fixed scores per pair, and a record of the batches it was asked for."""

    def __init__(self, table: dict[tuple[str, str], float]) -> None:
        self.table = table
        self.batches: list[list[tuple[str, str]]] = []

    @property
    def name(self) -> str:
        return "table"

    def score_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]:
        self.batches.append(list(pairs))
        return np.array([self.table.get(p, 0.0) for p in pairs], dtype=np.float32)

    async def score(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]:
        return await asyncio.to_thread(self.score_sync, pairs)

    async def aclose(self) -> None:
        return None


def with_cross(threshold: float = 0.8, blend: float = 0.0) -> DedupParams:
    return replace(FEATURES, cross=CrossParams("table.onnx", threshold, min_cosine=0.4, blend=blend))


async def test_the_model_score_decides_duplicates_in_one_batch_per_candidate() -> None:
    scorer = TableScorer(
        {("User is vegetarian", "User is a vegetarian"): 0.95, ("User is vegetarian", "User enjoys long walks"): 0.1}
    )
    rule = DedupRule(with_cross(), scorer)
    nearest = [
        ScoredMemory(memory("mem_walks", "User enjoys long walks"), 0.70),
        ScoredMemory(memory("mem_veg", "User is a vegetarian"), 0.65),
        ScoredMemory(memory("mem_far", "User owns a red bicycle"), 0.20),  # below min_cosine: never scored
    ]
    decision = await rule.adecide("User is vegetarian", nearest)
    assert decision.action is DedupAction.DUPLICATE and decision.existing_id == "mem_veg", decision.reason
    assert "cross-encoder score 0.95" in decision.reason
    veg = "User is vegetarian"
    assert scorer.batches == [[(veg, "User enjoys long walks"), (veg, "User is a vegetarian")]]
    assert rule.decide("User is vegetarian", nearest) == decision  # the blocking path agrees
    low = await DedupRule(with_cross(threshold=0.99), scorer).adecide("User is vegetarian", nearest)
    assert low.action is DedupAction.NEW and low.existing_id is None and "< 0.99" in low.reason


async def test_updates_and_word_swaps_are_decided_before_and_despite_the_model() -> None:
    swap = ("Bob's brother is Alice", "Alice's brother is Bob")
    scorer = TableScorer({swap: 1.0, ("User hates spicy food", "User loves spicy food"): 1.0})
    rule = DedupRule(with_cross(), scorer)
    action, _, reason = rule.judge(*swap, 0.97)
    assert action is DedupAction.NEW and "another order" in reason
    update = await rule.adecide("User hates spicy food", [ScoredMemory(memory("m", "User loves spicy food"), 0.9)])
    assert update.action is DedupAction.UPDATE and update.existing_id == "m"
    assert len(scorer.batches) == 1  # the update needed no model call


def test_the_blend_mixes_the_model_score_with_the_feature_probability() -> None:
    pair = ("User likes green tea", "User likes green tea a lot")
    f = pair_features(*pair, 0.9)
    blended = DedupRule(with_cross(threshold=0.0, blend=0.5), TableScorer({pair: 0.2}))
    _, prob, _ = blended.judge(*pair, 0.9)
    assert prob == pytest.approx(0.5 * 0.2 + 0.5 * FEATURES.probability(f))


def test_without_a_model_the_feature_rule_decides() -> None:
    rule = DedupRule(FEATURES)
    assert rule.scorer is None and not rule.needs_score(0.99)
    assert params_for("local:minilm", cross=False).cross is None


def test_far_pairs_are_not_scored() -> None:
    scorer = TableScorer({("User likes tea", "User likes tea"): 1.0})
    rule = DedupRule(with_cross(), scorer)
    assert not rule.needs_score(0.39) and rule.needs_score(0.4)
    action, prob, reason = rule.judge("User likes tea", "User likes tea", 0.39)
    assert action is DedupAction.NEW and prob == 0.0 and "too far apart" in reason and scorer.batches == []


def test_the_eval_scores_in_one_batch_and_reports_the_cross_encoder_step() -> None:
    pairs = [
        Pair("User is vegetarian", "User is a vegetarian", True, 5.0),
        Pair("User has two kids", "User has two children", True, 4.8),
        Pair("User is studying biology", "User has a biology quiz next week", False, 1.6),
        Pair("Bob's brother is Alice", "Alice's brother is Bob", False, 1.0),
        Pair("User plays chess", "The weather is cold today", False, 0.0),
    ]
    cosines = [0.97, 0.9, 0.7, 0.98, 0.1]
    # duplicates 0.9; the near-miss (same domain, another fact) 0.3; the word swap 0.95, kept apart by the gate
    scorer = TableScorer({(p.s1, p.s2): score for p, score in zip(pairs, [0.9, 0.9, 0.3, 0.95, 0.99], strict=True)})
    result = evaluate(DedupRule(with_cross(), scorer), pairs, cosines)
    assert len(scorer.batches) == 1 and len(scorer.batches[0]) == 4  # the far pair is never scored
    assert {k: result[k] for k in ("pairs", "threshold", "precision", "recall", "f1")} == {
        "pairs": 5,
        "threshold": 0.8,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
    }  # the word swap scored 0.95 and is still not a duplicate
    assert result["detail"]["model"] == "table.onnx" and result["detail"]["word_swaps"] == 1
    assert evaluate(DedupRule(FEATURES), pairs, cosines)["detail"]["model"] == "features"
