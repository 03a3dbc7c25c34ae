from datetime import datetime, timedelta

import numpy as np
import pytest

from memstack.retrieval import (
    find_time_range,
    max_normalize,
    neighbour_smooth,
    reciprocal_rank_fusion,
    time_boost,
    top_k,
)

NOW = datetime(2023, 11, 20, 15, 0)  # a Monday


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("What did Tim say on 16 November, 2023?", datetime(2023, 11, 16), datetime(2023, 11, 17)),
        ("as mentioned on November 11, 2023?", datetime(2023, 11, 11), datetime(2023, 11, 12)),
        ("What book did he read on 8th December, 2023?", datetime(2023, 12, 8), datetime(2023, 12, 9)),
        ("What did Audrey do in November 2023?", datetime(2023, 11, 1), datetime(2023, 12, 1)),
        ("the trip in December 2023", datetime(2023, 12, 1), datetime(2024, 1, 1)),
        ("an injury in 2022?", datetime(2022, 1, 1), datetime(2023, 1, 1)),
        ("what did I do last June", datetime(2023, 6, 1), datetime(2023, 7, 1)),
        ("the deal in December", datetime(2022, 12, 1), datetime(2023, 1, 1)),
        ("plans for next March", datetime(2024, 3, 1), datetime(2024, 4, 1)),
        ("what happened yesterday", datetime(2023, 11, 19), datetime(2023, 11, 20)),
        ("anything last week?", datetime(2023, 11, 13), datetime(2023, 11, 20)),
        ("last weekend", datetime(2023, 11, 18), datetime(2023, 11, 20)),
        ("this month", datetime(2023, 11, 1), datetime(2023, 12, 1)),
        ("last month", datetime(2023, 10, 1), datetime(2023, 11, 1)),
        ("last year", datetime(2022, 1, 1), datetime(2023, 1, 1)),
    ],
)
def test_time_expressions_resolve_against_now(query: str, start: datetime, end: datetime) -> None:
    found = find_time_range(query, NOW)
    assert found is not None
    assert (found.start, found.end) == (start, end)
    assert found.text in query
    assert found.text not in found.strip(query)


def test_ago_is_fuzzy_and_may_the_verb_is_not_a_month() -> None:
    found = find_time_range("I mentioned it two weeks ago", NOW)
    assert found is not None and found.start == datetime(2023, 11, 6)
    assert found.slack >= timedelta(days=3)
    assert found.distance_days(datetime(2023, 11, 4)) == 0.0
    assert found.distance_days(datetime(2023, 10, 1)) > 30
    assert find_time_range("a few days ago", NOW) is not None
    assert find_time_range("what we may do in may", NOW) is None
    assert find_time_range("what did she paint?", NOW) is None
    impossible_day = find_time_range("on 31 February, 2023 or later", NOW)
    assert impossible_day is not None and impossible_day.start == datetime(2023, 2, 1)  # the month still stands


def test_timezone_aware_now_is_accepted() -> None:
    from datetime import UTC

    found = find_time_range("yesterday", NOW.replace(tzinfo=UTC))
    assert found is not None and found.start == datetime(2023, 11, 19)


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
