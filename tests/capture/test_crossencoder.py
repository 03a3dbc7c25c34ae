"""The shipped dedup cross-encoder (int8 ONNX) and the production dedup rule that uses it for ``local:minilm``."""

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from click.testing import CliRunner

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
from memstack.cli import main
from memstack.embed import get_embedder
from memstack.errors import ConfigError
from memstack.types import Category, Memory, ScoredMemory, Source

T0 = datetime(2024, 5, 1, tzinfo=UTC)
FEATURES = replace(CALIBRATED["local:minilm"], cross=None)  # the feature rule alone
Cosine = Callable[[str, str], float]


def memory(id_: str, content: str) -> Memory:
    return Memory(id_, "u1", "default", None, content, Category.FACT, Source.AUTO, 0.9, True, None, T0, T0)


@pytest.fixture(scope="module")
def minilm_cosine() -> Cosine:
    emb = get_embedder("local:minilm")

    def cosine(a: str, b: str) -> float:
        va, vb = asyncio.run(emb.embed([a, b]))
        return float(va @ vb)

    return cosine


def test_the_shipped_model_is_the_recorded_file() -> None:
    path = shipped_model()
    assert path is not None and path.name == MODEL_FILE
    assert file_sha256(path) == MODEL_SHA256


def test_the_production_rule_for_minilm_uses_the_cross_encoder_and_can_do_without() -> None:
    params = params_for("local:minilm")
    assert params.cross is not None and params.cross.model == MODEL_FILE
    assert DedupRule(params).scorer is shared_cross_encoder()
    assert params_for("local:minilm", cross=False).cross is None
    assert DedupRule.for_embedder("local:minilm", cross=False).scorer is None


def test_a_missing_model_file_says_what_to_do(tmp_path: Path) -> None:
    encoder = CrossEncoder(tmp_path / "missing.onnx")
    with pytest.raises(ConfigError, match="train_dedup_crossencoder"):
        encoder.score_sync([("a", "b")])
    assert encoder.score_sync([]).shape == (0,)


async def test_scores_are_in_order_and_do_not_depend_on_the_batch() -> None:
    pairs = [
        ("User is vegetarian", "User is a vegetarian"),
        ("User has a cat named Tom", "User has a dog named Max and works as a nurse in a large hospital in Leeds"),
        ("User studies biology at UCLA", "User studies biology at UCLA."),
        ("User plays chess", "The weather is cold today"),
    ]
    encoder = CrossEncoder(batch_size=3)
    together = await encoder.score(pairs)
    alone = [float(encoder.score_sync([pair])[0]) for pair in pairs]
    assert together.shape == (4,) and all(0.0 <= s <= 1.0 for s in alone)
    assert together.tolist() == pytest.approx(alone, abs=0.01)  # padding in a batch changes (nearly) nothing
    assert together[2] > 0.8 > together[3]
    await encoder.aclose()


@pytest.mark.parametrize(
    ("new", "old", "action"),
    [
        ("User studies biology at UCLA", "User studies biology at UCLA.", DedupAction.DUPLICATE),
        ("User is vegetarian", "User is a vegetarian", DedupAction.DUPLICATE),
        ("User has two kids", "User has two children", DedupAction.DUPLICATE),
        ("User's favourite drink is green tea", "User's favorite drink is green tea", DedupAction.DUPLICATE),
        # the same domain, another fact
        ("User is studying biology", "User has a biology quiz next week", DedupAction.NEW),
        ("User has a cat named Tom", "User has a dog named Max", DedupAction.NEW),
        ("User plays tennis on Sundays", "User watches tennis on TV", DedupAction.NEW),
        # contradictions are updates, whatever the model says
        ("User loves spicy food", "User hates spicy food", DedupAction.UPDATE),
        ("User lives in Berlin", "User lives in Paris", DedupAction.UPDATE),
        # the same words in another order: never a duplicate
        ("Bob's brother is Alice", "Alice's brother is Bob", DedupAction.NEW),
        ("The team from Leeds beat the team from York", "The team from York beat the team from Leeds", DedupAction.NEW),
    ],
)
def test_cross_encoder_decisions(minilm_cosine: Cosine, new: str, old: str, action: DedupAction) -> None:
    rule = DedupRule.for_embedder("local:minilm")
    got, _, reason = rule.judge(new, old, minilm_cosine(new, old))
    assert got is action, reason


async def test_adecide_picks_the_best_scored_duplicate_and_an_update_still_wins() -> None:
    rule = DedupRule(CALIBRATED["local:minilm"])
    nearest = [
        ScoredMemory(memory("mem_walks", "User enjoys long walks"), 0.70),
        ScoredMemory(memory("mem_veg", "User is a vegetarian"), 0.65),
        ScoredMemory(memory("mem_far", "User owns a red bicycle"), 0.20),
    ]
    decision = await rule.adecide("User is vegetarian", nearest)
    assert decision.action is DedupAction.DUPLICATE and decision.existing_id == "mem_veg", decision.reason
    assert "cross-encoder" in decision.reason
    assert rule.decide("User is vegetarian", nearest) == decision  # the blocking path agrees
    update = await rule.adecide(
        "User's exam was moved to 10 May 2025",
        [*nearest, ScoredMemory(memory("mem_exam", "User's exam is on 3 May 2025"), 0.83)],
    )
    assert update.action is DedupAction.UPDATE and update.existing_id == "mem_exam"
    quiz = [ScoredMemory(memory("m", "User studies biology"), 0.6)]
    new = await rule.adecide("User has a biology quiz next week", quiz)
    assert new.action is DedupAction.NEW and new.existing_id is None


def test_far_pairs_are_not_scored() -> None:
    rule = DedupRule(CALIBRATED["local:minilm"])
    cross = rule.params.cross
    assert cross is not None
    assert not rule.needs_score(cross.min_cosine - 0.01) and rule.needs_score(cross.min_cosine)
    action, prob, reason = rule.judge("User likes tea", "User likes tea", cross.min_cosine - 0.01)
    assert action is DedupAction.NEW and prob == 0.0 and "too far apart" in reason


def test_eval_dedup_json_contract_with_the_cross_encoder(tmp_path: Path) -> None:
    rows = [
        ("User is vegetarian", "User is a vegetarian", 5.0),
        ("User has two kids", "User has two children", 4.8),
        ("User studies biology at UCLA", "User studies biology at UCLA.", 5.0),
        ("User has a cat named Tom", "User has a dog named Max", 1.0),
        ("User plays tennis on Sundays", "User watches tennis on TV", 1.4),
        ("Bob's brother is Alice", "Alice's brother is Bob", 1.0),
    ]
    data = tmp_path / "pairs.csv"
    data.write_text("".join(f'"{a}","{b}",{s}\n' for a, b, s in rows), encoding="utf-8")
    args = ["eval", "dedup", "--data", str(data), "--format", "stsb", "--json", "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    *_, detail_line, last_line = result.output.strip().splitlines()
    last, detail = json.loads(last_line), json.loads(detail_line)["detail"]
    assert set(last) == {"pairs", "threshold", "precision", "recall", "f1"}
    assert last["pairs"] == 6 and detail["model"] == MODEL_FILE and detail["positives"] == 3
    cross = CALIBRATED["local:minilm"].cross
    assert cross is not None and last["threshold"] == cross.threshold
    assert last["precision"] == 1.0 and last["recall"] == 1.0  # the hand-written pairs above are all right


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
