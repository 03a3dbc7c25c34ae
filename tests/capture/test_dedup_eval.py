"""The dedup evaluation and calibration on small generated pairs (cosines given, so no model is needed)."""

import random

import pytest

from memstack.capture.dedup import CALIBRATED, DedupAction, DedupParams, DedupRule
from memstack.errors import InputError
from memstack.evals.dedup import CURVE_THRESHOLDS, Pair, calibrate, evaluate

NAMES = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank"]
THINGS = ["tea", "chess", "jazz", "hiking", "sushi", "poetry", "tennis", "opera"]


def generated(n: int, seed: int) -> tuple[list[Pair], list[float]]:
    """Duplicates are light rewordings with high cosines; the rest differ in one thing with lower cosines; a few
    are role swaps (the same words in another order) with the highest cosine of all."""
    rng = random.Random(seed)
    pairs: list[Pair] = []
    cosines: list[float] = []
    for i in range(n):
        a, b = rng.sample(NAMES, 2)
        x, y = rng.sample(THINGS, 2)
        if i % 4 == 0:
            pairs.append(Pair(f"{a} really likes {x}", f"{a} likes {x} a lot", True, 4.6))
            cosines.append(rng.uniform(0.85, 0.99))
        elif i % 4 == 1:
            pairs.append(Pair(f"{a} likes {x}", f"{a} likes {y}", False, 2.0))
            cosines.append(rng.uniform(0.5, 0.8))
        elif i % 4 == 2:
            pairs.append(Pair(f"{a} taught {b} {x}", f"{b} taught {a} {x}", False, 1.5))
            cosines.append(rng.uniform(0.95, 0.999))
        else:
            pairs.append(Pair(f"{a} plays {x} on weekends", f"{b} reads about {y}", False, 0.2))
            cosines.append(rng.uniform(0.1, 0.5))
    return pairs, cosines


def test_the_curve_contains_the_rule_itself_and_recall_falls_as_the_threshold_rises() -> None:
    pairs, cosines = generated(80, seed=3)
    params = CALIBRATED["local:minilm"]
    on_grid = DedupRule(DedupParams(**{**_fields(params), "threshold": 0.6}))
    result = evaluate(on_grid, pairs, cosines)
    curve = result["detail"]["curve"]
    assert [point["threshold"] for point in curve] == list(CURVE_THRESHOLDS)
    at_rule = next(point for point in curve if point["threshold"] == 0.6)
    assert {k: at_rule[k] for k in ("precision", "recall", "f1")} == {
        k: result[k] for k in ("precision", "recall", "f1")
    }
    recalls = [point["recall"] for point in curve]
    assert recalls == sorted(recalls, reverse=True) and recalls[0] > recalls[-1]
    # role swaps are kept apart by the gate at every threshold, so none is ever a false positive
    swaps = sum(1 for p in pairs if p.score == 1.5)
    assert result["detail"]["word_swaps"] == swaps and result["detail"]["fp"] == 0


def test_calibration_learns_a_rule_that_separates_the_generated_pairs() -> None:
    pairs, cosines = generated(200, seed=5)
    params, lines = calibrate("test:model", pairs, cosines, min_precision=0.9)
    assert params.embedder == "test:model" and params.weights["cosine"] > 0
    assert any(line.startswith("min_order = ") for line in lines)
    assert any(line.startswith("for comparison, cosine alone") for line in lines)
    rule = DedupRule(params)
    held_out, held_cos = generated(80, seed=11)
    actions = [rule.judge(p.s1, p.s2, c)[0] for p, c in zip(held_out, held_cos, strict=True)]
    called = [a is DedupAction.DUPLICATE for a in actions]
    assert sum(c and p.duplicate for c, p in zip(called, held_out, strict=True)) >= 15  # of 20 duplicates
    assert not any(c and not p.duplicate for c, p in zip(called, held_out, strict=True))


def test_calibration_refuses_too_little_data() -> None:
    pairs, cosines = generated(20, seed=1)
    with pytest.raises(InputError, match="at least 50 pairs"):
        calibrate("test:model", pairs, cosines)


def _fields(params: DedupParams) -> dict[str, object]:
    return {name: getattr(params, name) for name in DedupParams.__dataclass_fields__}
