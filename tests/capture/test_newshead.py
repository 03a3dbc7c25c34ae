"""The update judge's news head (``memstack.capture.judge.newshead``) and how the offline judge reads it beside the
cross-encoder: only with the embedder it was trained on, the cross-encoder alone otherwise."""

from __future__ import annotations

import json

import numpy as np
import pytest

from memstack.capture.judge import JudgeItem
from memstack.capture.judge.cross import load_card
from memstack.capture.judge.newshead import NewsHead, load_news_head
from memstack.capture.judge.offline import LearnedJudge
from memstack.embed import Embedder, get_embedder
from memstack.errors import ConfigError
from memstack.types import Candidate, Category, ScoredMemory

from .test_updates import _memory

# The cross-encoder scores this pair far below its threshold (0.05): nothing but a head that says "news" can make
# the judge supersede it.
QUIET = ("User has switched to decaf for good.", "User drinks strong espresso every morning.")


def _head(
    *, model: str = "local:minilm", news: float, combine: tuple[float, float, float], threshold: float
) -> NewsHead:
    """A head of the shipped shape whose news logit is ``news`` for every statement (zero weights, that bias)."""
    hidden = (np.zeros((4, 384), dtype=np.float32), np.zeros(4, dtype=np.float32))
    return NewsHead(model, hidden, (np.zeros(4, dtype=np.float32), news), combine, threshold)


async def _replaces(judge: LearnedJudge, embedder: Embedder, new: str, old: str) -> bool:
    vectors = await embedder.embed([new, old])
    hit = ScoredMemory(_memory(old), float(vectors[0] @ vectors[1]))
    (verdict,) = await judge.judge([JudgeItem(Candidate(new, Category.FACT, 0.9), (hit,))])
    return verdict.replaces


def test_the_shipped_head_reads_minilm_and_records_that_it_beat_the_cross_encoder_alone() -> None:
    """The file says which vectors it reads and records the figures it was shipped on: on the development cases it
    was never fitted on, at least as many updates applied as the cross-encoder alone, no more compatible memories
    superseded (a retrained file that loses to the cross-encoder alone fails here)."""
    head = load_news_head()
    assert head.model == get_embedder("local:minilm").name
    assert 0.0 < head.threshold < 1.0 and head.hidden[0].shape[1] == 384
    held = head.about["held_out"]
    alone, both = held["cross_encoder_alone"], held["with_news_head"]
    assert both["updates"] == alone["updates"] >= 40
    assert both["updates_applied"] >= alone["updates_applied"]
    assert both["compatible_superseded"] <= alone["compatible_superseded"]
    again = NewsHead.from_json(head.to_json())
    vectors = np.random.default_rng(3).standard_normal((5, 384)).astype(np.float32)
    np.testing.assert_allclose(again.news(vectors), head.news(vectors), atol=1e-4)


def test_a_damaged_or_newer_head_file_is_a_config_error_that_says_what_to_do() -> None:
    body = json.loads(load_news_head().to_json())
    with pytest.raises(ConfigError, match="upgrade memstack"):
        NewsHead.from_json(json.dumps({**body, "format": 99}))
    with pytest.raises(ConfigError, match=r"malformed.*reinstall"):
        NewsHead.from_json(json.dumps({k: v for k, v in body.items() if k != "combine"}))
    with pytest.raises(ConfigError, match="malformed"):
        NewsHead.from_json("{not json")
    short = {**body, "out": {"bias": 0.0, "weights": [1.0, 2.0]}}
    with pytest.raises(ConfigError, match="shapes"):
        NewsHead.from_json(json.dumps(short))


async def test_with_minilm_the_judge_decides_on_the_heads_combined_reading(minilm: Embedder) -> None:
    """A head that reads every statement as news, with the cross-encoder's weight at zero, makes the judge
    supersede a pair the cross-encoder alone leaves; one that reads nothing as news keeps a pair the cross-encoder
    alone supersedes. So the verdict is the combined one, at the head's threshold, not the card's."""
    assert not await _replaces(LearnedJudge(minilm), minilm, *QUIET)  # the shipped pair of readers: 0.07
    alone = LearnedJudge(None)
    assert not await _replaces(alone, minilm, *QUIET)
    eager = LearnedJudge(minilm, head=_head(news=8.0, combine=(0.0, 1.0, 0.0), threshold=0.9))
    assert await _replaces(eager, minilm, *QUIET)
    moved = ("User moved to Berlin in October.", "User lives in Paris.")
    assert await _replaces(alone, minilm, *moved)
    doubting = LearnedJudge(minilm, head=_head(news=-8.0, combine=(0.0, 1.0, 0.0), threshold=0.5))
    assert not await _replaces(doubting, minilm, *moved)
    # the identity head (the cross-encoder's logit alone, the card's threshold) decides as the cross-encoder does
    card = load_card()
    same = LearnedJudge(minilm, head=_head(news=0.0, combine=(1.0, 0.0, 0.0), threshold=card.threshold))
    assert await _replaces(same, minilm, *moved) and not await _replaces(same, minilm, *QUIET)


async def test_news_about_someone_else_still_leaves_the_users_memory_with_the_head(minilm: Embedder) -> None:
    eager = LearnedJudge(minilm, head=_head(news=8.0, combine=(0.0, 1.0, 0.0), threshold=0.9))
    assert not await _replaces(eager, minilm, "User's sister moved to Berlin.", "User lives in Paris.")


async def test_another_embedder_or_none_leaves_the_cross_encoder_alone(minilm: Embedder) -> None:
    """The head reads MiniLM vectors only: with an embedder of another model, or none, the cross-encoder decides at
    its card's threshold, and the head is never asked."""
    eager = _head(news=8.0, combine=(0.0, 1.0, 0.0), threshold=0.9)
    other = get_embedder("hash:64")
    try:
        judge = LearnedJudge(other, head=eager)
        assert judge.head is None
        assert not await _replaces(judge, minilm, *QUIET)
    finally:
        await other.aclose()
    assert LearnedJudge(None, head=eager).head is None
    assert not await _replaces(LearnedJudge(None, head=eager), minilm, *QUIET)
    elsewhere = _head(model="openai:text-embedding-3-small", news=8.0, combine=(0.0, 1.0, 0.0), threshold=0.9)
    assert not await _replaces(LearnedJudge(minilm, head=elsewhere), minilm, *QUIET)
