"""Per-process caches whose entries can be long texts are bounded by characters, not only by entry count: a
chat message may be 32,000 characters, so a count bound alone would let them hold gigabytes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memstack.context.budget import _CHAR_LIMIT, _Counts
from memstack.guard.semantic import SemanticGuard
from memstack.turn.runner import RecentExchanges
from memstack.types import UserRef, Vector


def test_token_counts_keep_at_most_their_character_budget() -> None:
    counts = _Counts()
    text = "x" * (_CHAR_LIMIT // 4)
    for i in range(20):
        counts.put(f"{i} {text}", i)
        assert sum(len(t) for t in counts.counts) <= _CHAR_LIMIT
    assert "19 " + text in counts.counts  # the newest stays


class _ZeroEmbedder:
    """Stands in for MiniLM: the cache bound does not depend on what the head scores."""

    name = "local:minilm"

    def embed_sync(self, texts: Sequence[str]) -> Vector:
        return np.zeros((len(texts), 384), dtype=np.float32)


def test_guard_verdicts_keep_at_most_their_character_budget() -> None:
    guard = SemanticGuard(_ZeroEmbedder(), cache_size=1000, cache_chars=10_000)
    for i in range(50):
        guard.scan(f"note {i}: " + "the weather is fine today " * 40)  # ~1,000 characters each
        assert sum(len(t) for t in guard._cache) <= 10_000
    assert len(guard._cache) == 9
    guard.scan("a short one we saw before")
    assert guard._cached("a short one we saw before") is not None


def test_recent_exchanges_keep_at_most_their_character_budget() -> None:
    recent = RecentExchanges(sessions=1000, keep=4, max_chars=50_000)
    user = UserRef("ana")
    for i in range(100):
        recent.add(user, f"s{i}", "m" * 5_000, "r" * 1_000)
        assert sum(len(t) for pairs in recent._recent.values() for _, t in pairs) <= 50_000
    assert recent.get(user, "s99") == (("user", "m" * 5_000), ("assistant", "r" * 1_000))
    assert recent.get(user, "s0") == ()  # evicted: the turn reads the stored window instead
