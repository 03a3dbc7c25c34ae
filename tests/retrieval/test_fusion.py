import numpy as np
import pytest

from memstack.retrieval import (
    max_normalize,
    neighbour_smooth,
    reciprocal_rank_fusion,
    time_boost,
    top_k,
)


def test_rrf_rewards_agreement() -> None:
    fused = reciprocal_rank_fusion([[0, 1, 2], [2, 1, 0], [1]], 4)
    assert fused.argmax() == 1 and fused[3] == 0
    assert fused[0] == pytest.approx(1 / 61 + 1 / 63)


def test_neighbour_smoothing_and_normalisation() -> None:
    scores = np.array([0.0, 2.0, 0.0, 4.0])
    prev = np.array([-1, 0, 1, -1])
    nxt = np.array([1, 2, -1, -1])  # item 3 is alone in its thread
    smoothed = neighbour_smooth(scores, prev, nxt, 0.5)
    assert smoothed.tolist() == [1.0, 2.0, 1.0, 4.0]
    assert max_normalize(smoothed).max() == 1.0
    assert max_normalize(np.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    assert neighbour_smooth(scores, prev, nxt, 0.0) is scores


def test_time_boost_fades_with_distance() -> None:
    boost = time_boost(np.array([0.0, 7.0, np.inf]), 1.0, 7.0)
    assert boost[0] == 2.0 and 1.3 < boost[1] < 1.4 and boost[2] == 1.0


def test_top_k_orders_best_first_and_keeps_ties_stable() -> None:
    scores = np.array([0.5, 0.9, 0.5, 0.1, 0.9])
    assert top_k(scores, 3) == [1, 4, 0]
    assert top_k(scores, 10) == [1, 4, 0, 2, 3]
    assert top_k(scores, 0) == []
