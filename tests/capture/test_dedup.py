import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memstack.capture.dedup import (
    CALIBRATED,
    CONSERVATIVE,
    DedupAction,
    DedupParams,
    DedupRule,
    pair_features,
    params_for,
)
from memstack.embed import get_embedder
from memstack.types import Category, Memory, ScoredMemory, Source

T0 = datetime(2024, 5, 1, tzinfo=UTC)
FEATURE_RULE = CALIBRATED["local:minilm"]


def memory(id_: str, content: str) -> Memory:
    return Memory(id_, "u1", "default", None, content, Category.FACT, Source.AUTO, 0.9, True, None, T0, T0)


Cosine = Callable[[str, str], float]


@pytest.fixture(scope="module")
def minilm_cosine() -> Cosine:
    emb = get_embedder("local:minilm")

    def cosine(a: str, b: str) -> float:
        va, vb = asyncio.run(emb.embed([a, b]))
        return float(va @ vb)

    return cosine


@pytest.mark.parametrize(
    ("new", "old", "action"),
    [
        ("User studies biology at UCLA", "User studies biology at UCLA.", DedupAction.DUPLICATE),
        ("User is vegetarian", "User is a vegetarian", DedupAction.DUPLICATE),
        ("User has two kids", "User has two children", DedupAction.DUPLICATE),
        ("User loves spicy food", "User hates spicy food", DedupAction.UPDATE),
        ("User is not vegetarian", "User is vegetarian", DedupAction.UPDATE),
        ("User no longer works at Google", "User works at Google", DedupAction.UPDATE),
        ("User's exam was moved to 10 May 2025", "User's exam is on 3 May 2025", DedupAction.UPDATE),
        ("User lives in Berlin", "User lives in Paris", DedupAction.UPDATE),
        ("Bob's brother is Alice", "Alice's brother is Bob", DedupAction.NEW),  # word swap: not a paraphrase
        ("User has a cat named Tom", "User has a dog named Max", DedupAction.NEW),
        ("User's sister lives in Berlin", "User lives in Paris", DedupAction.NEW),
    ],
)
def test_minilm_decisions(minilm_cosine: Cosine, new: str, old: str, action: DedupAction) -> None:
    rule = DedupRule.for_embedder("local:minilm")
    got, _, reason = rule.judge(new, old, minilm_cosine(new, old))
    assert got is action, reason


def test_the_subject_must_match_for_a_single_valued_update() -> None:
    rule = DedupRule(FEATURE_RULE)
    action, _, _ = rule.judge("User's sister lives in Berlin", "User lives in Paris", 0.9)
    assert action is not DedupAction.UPDATE


def test_decide_prefers_an_update_over_a_closer_duplicate_and_names_the_memory() -> None:
    rule = DedupRule(FEATURE_RULE)
    nearest = [
        ScoredMemory(memory("mem_a", "User enjoys long walks"), 0.62),
        ScoredMemory(memory("mem_b", "User's exam is on 3 May 2025"), 0.83),
    ]
    decision = rule.decide("User's exam was moved to 10 May 2025", nearest)
    assert decision.action is DedupAction.UPDATE and decision.existing_id == "mem_b"
    assert "date or number" in decision.reason
    assert rule.decide("anything", []).action is DedupAction.NEW
    dup = rule.decide("User enjoys long walks", [ScoredMemory(memory("mem_a", "User enjoys long walks."), 0.99)])
    assert dup.action is DedupAction.DUPLICATE and dup.existing_id == "mem_a" and dup.score >= 0.6


def test_unknown_embedders_get_the_conservative_cosine_rule() -> None:
    assert params_for("openai:text-embedding-3-small") is CONSERVATIVE
    assert params_for("local:minilm").embedder == "local:minilm"
    rule = DedupRule(CONSERVATIVE)
    assert rule.judge("User likes tea", "User likes tea a lot", 0.94)[0] is DedupAction.NEW
    assert rule.judge("User likes tea", "User likes tea!", 0.97)[0] is DedupAction.DUPLICATE


def test_features_explain_the_pair() -> None:
    f = pair_features("A man is playing a flute.", "A man is playing a large flute.", 0.9)
    assert f.overlap == 1.0 and f.missing == 1.0 and f.order == 1.0 and f.value_conflict == 0.0
    swap = pair_features("Alice's brother is Bob", "Bob's brother is Alice", 0.99)
    assert swap.order < 0.5
    dates = pair_features("paid 30 dollars on June 5", "paid 25 dollars on June 5", 0.95)
    assert dates.value_conflict == 1.0


def test_cosine_only_params_are_a_plain_threshold() -> None:
    p = DedupParams.cosine_only("x", 0.9)
    f = pair_features("a b c", "a b c", 0.91)
    assert p.probability(f) > 0.5 > p.probability(pair_features("a b c", "a b c", 0.89))


def test_the_word_order_gate_only_applies_to_pairs_that_share_their_words() -> None:
    rule = DedupRule(FEATURE_RULE)
    # reordered *and* reworded: ordinary rephrasing, scored like any other pair
    rephrased = pair_features("The man without a shirt is jumping.", "The man jumping is not wearing a shirt.", 0.93)
    assert rephrased.order < rule.params.min_order and not rephrased.same_words
    assert rule.judge("The man without a shirt is jumping.", "The man jumping is not wearing a shirt.", 0.93)[0] is (
        DedupAction.DUPLICATE
    )
    # the same words in another order: a role swap, never a duplicate however close the embeddings
    leeds, york = "The team from Leeds beat the team from York", "The team from York beat the team from Leeds"
    swap = pair_features(leeds, york, 0.99)
    assert swap.same_words and swap.swapped(rule.params.min_order)
    action, _, reason = rule.judge(leeds, york, 0.99)
    assert action is DedupAction.NEW and "another order" in reason
    # the same words in the same order are not a swap
    assert not pair_features("User likes green tea", "User likes green tea a lot", 0.97).swapped(1.0)
