"""Layer-6 memory scoring over a real SQLite store: hybrid lexical + dense, category weights, schedule decay, expiry.

Vectors are written by hand (4-d) so every cosine in these tests is exact and the ranking rules are what is tested."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from memstack.capture.scoring import MemoryScorer, ScoringSettings
from memstack.errors import InputError
from memstack.store.sqlite import SQLiteStore
from memstack.types import Category, NewMemory, UserRef, Vector

pytestmark = pytest.mark.asyncio(loop_scope="session")

NOW = datetime(2024, 5, 9, 12, 0, tzinfo=UTC)
ALICE = UserRef("alice")
QUERY = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)


def at_cosine(c: float, side: int = 1) -> Vector:
    """A unit vector whose cosine with QUERY is exactly ``c``."""
    v = np.zeros(4, dtype=np.float32)
    v[0], v[side] = c, float(np.sqrt(1 - c * c))
    return v


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    opened = await SQLiteStore.open(tmp_path / "memstack.db", dim=4, embedder="test:4")
    yield opened
    await opened.close()


async def add(
    store: SQLiteStore, content: str, cosine: float, category: Category = Category.FACT, side: int = 1, **kw: object
) -> str:
    memory = await store.memories.add(ALICE, NewMemory(content, category, **kw), at_cosine(cosine, side))  # type: ignore[arg-type]
    return memory.id


def scorer(store: SQLiteStore, **settings: object) -> MemoryScorer:
    return MemoryScorer(store, replace(ScoringSettings(), **settings), clock=lambda: NOW)  # type: ignore[arg-type]


async def ranked(s: MemoryScorer, query: str = "tell me something", **kw: object) -> list[str]:
    return [h.memory.content for h in await s.recall(ALICE, query, QUERY, **kw)]  # type: ignore[arg-type]


async def test_category_weights_reorder_close_hits(store: SQLiteStore) -> None:
    await add(store, "User mentioned the weather", 0.80, Category.GENERAL)
    await add(store, "User prefers bullet points", 0.78, Category.PREFERENCE)
    assert await ranked(scorer(store, lexical_weight=0.0)) == [
        "User prefers bullet points",
        "User mentioned the weather",
    ]
    flat = scorer(store, lexical_weight=0.0, category_weights={})
    assert await ranked(flat) == ["User mentioned the weather", "User prefers bullet points"]
    overridden = await ranked(scorer(store, lexical_weight=0.0), weights={"general": 2.0})
    assert overridden[0] == "User mentioned the weather"


async def test_expired_memories_are_never_returned(store: SQLiteStore) -> None:
    await add(store, "User's quiz is on 8 May 2024", 0.95, Category.SCHEDULE, expires_at=NOW - timedelta(hours=1))
    await add(
        store,
        "User has a dentist appointment on 20 May 2024",
        0.5,
        Category.SCHEDULE,
        expires_at=NOW + timedelta(days=12),
    )
    await add(store, "User's old passport expired", 0.4, Category.FACT, expires_at=NOW - timedelta(days=1))
    assert await ranked(scorer(store)) == ["User has a dentist appointment on 20 May 2024"]


async def test_schedule_memories_fade_with_age_and_rise_when_near(store: SQLiteStore) -> None:
    far = NOW + timedelta(days=60)
    await add(
        store,
        "User said in March: exam on 1 July",
        0.7,
        Category.SCHEDULE,
        observed_at=NOW - timedelta(days=60),
        expires_at=far,
    )
    await add(store, "User said today: exam on 1 July", 0.7, Category.SCHEDULE, observed_at=NOW, expires_at=far)
    await add(
        store,
        "User's recital is on Saturday",
        0.7,
        Category.SCHEDULE,
        observed_at=NOW,
        expires_at=NOW + timedelta(days=3),
    )
    s = scorer(store, lexical_weight=0.0)
    hits = await s.recall(ALICE, "x", QUERY, k=3)
    assert [h.memory.content for h in hits] == [
        "User's recital is on Saturday",  # near: boosted
        "User said today: exam on 1 July",
        "User said in March: exam on 1 July",  # 60 days old: faded (never below the floor)
    ]
    assert hits[0].score == pytest.approx(0.7 * 1.2) and hits[1].score == pytest.approx(0.7)
    assert hits[2].score == pytest.approx(0.7 * max(0.3, 0.5 ** (60 / 14)))


async def test_hybrid_finds_a_rare_word_that_dense_ranks_low(store: SQLiteStore) -> None:
    await add(store, "User's thesis advisor is Dr. Okonkwo", 0.05, side=2)
    await add(store, "User is writing a thesis", 0.30)
    dense = await ranked(scorer(store, lexical_weight=0.0), "what did Okonkwo say", k=1)
    hybrid = await ranked(scorer(store), "what did Okonkwo say", k=1)
    assert dense == ["User is writing a thesis"] and hybrid == ["User's thesis advisor is Dr. Okonkwo"]


async def test_a_lexical_only_hit_gets_the_lowest_cosine_of_the_dense_pool(store: SQLiteStore) -> None:
    await add(store, "User likes apples", 0.9)
    await add(store, "User likes pears", 0.6)
    await add(store, "User owns a kayak named Zephyr", -0.5, side=3)  # far outside a dense pool of 2
    hits = await scorer(store, pool=2).recall(ALICE, "Zephyr", QUERY, k=2)
    by_content = {h.memory.content: h.score for h in hits}
    assert by_content["User owns a kayak named Zephyr"] == pytest.approx(0.6 + 0.3)


async def test_other_agents_memories_stay_out(store: SQLiteStore) -> None:
    await add(store, "User's tutor nickname is Ace", 0.5, agent_id="tutor")
    await add(store, "User's coach nickname is Ace", 0.5, agent_id="coach")
    await add(store, "User is called Sam", 0.4)
    found = await ranked(scorer(store), "Ace", agent_id="tutor")
    assert "User's coach nickname is Ace" not in found and set(found) == {
        "User's tutor nickname is Ace",
        "User is called Sam",
    }


async def test_bad_settings_are_input_errors(store: SQLiteStore) -> None:
    with pytest.raises(InputError):
        ScoringSettings(pool=0)
    with pytest.raises(InputError):
        ScoringSettings(lexical_weight=-1)
    with pytest.raises(InputError):
        await scorer(store).recall(ALICE, "x", QUERY, k=0)
