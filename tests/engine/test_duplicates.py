"""Explicit adds are idempotent (issue 13): a memory the user already has, as the same text or as a duplicate by the
capture pipeline's calibrated rule, is returned with action ``duplicate`` and not stored again, not counted against
the tier limit (a full tier still answers ``duplicate``), unless ``force``. On both backends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memstack import AsyncMemstack, Memstack, TierLimits
from memstack.capture.dedup import normalise
from memstack.errors import LimitReached
from memstack.types import HistoryAction, Memory, UpdateAction, UserRef

BACKENDS = [pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.postgres)]
ANA = UserRef("ana")
TIERS = TierLimits({"free": 2, "pro": None}, default_tier="free")


@pytest.fixture(params=BACKENDS)
async def ms(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncMemstack]:
    settings: dict[str, Any] = {"home": tmp_path, "embedder": "hash:64", "tiers": TIERS}
    if request.param == "postgres":
        settings["database_url"] = request.getfixturevalue("postgres_url")
    async with AsyncMemstack(**settings) as engine:
        yield engine


async def test_the_same_text_is_returned_not_stored_again(ms: AsyncMemstack) -> None:
    first = await ms.add_result(ANA, "Prefers green tea over coffee.", category="preference")
    assert first.action is UpdateAction.CREATED and not first.duplicate
    for again in (
        "Prefers green tea over coffee.",
        "prefers  green tea over COFFEE",
        " Prefers green tea over coffee!",
    ):
        added = await ms.add_result(ANA, again, category="preference")
        assert added.duplicate and added.memory == first.memory and added.reason == "the same text"
        assert await ms.add(ANA, again) == first.memory  # add returns the memory already held
    assert await ms.count(ANA) == 1
    assert [e.action for e in await ms.history(ANA, first.memory.id)] == [HistoryAction.CREATE]  # nothing written


async def test_a_duplicate_does_not_count_and_a_full_tier_still_answers_duplicate(ms: AsyncMemstack) -> None:
    tea = await ms.add(ANA, "Prefers green tea")
    await ms.add(ANA, "Lives in Lyon")
    assert (await ms.usage(ANA)).active == 2  # the free tier is full
    with pytest.raises(LimitReached):
        await ms.add(ANA, "Has a cat named Miso")
    added = await ms.add_result(ANA, "prefers green tea.")
    assert added.duplicate and added.memory.id == tea.id  # held already: not a LimitReached
    with pytest.raises(LimitReached):
        await ms.add(ANA, "Prefers green tea", force=True)  # forced: a second copy, which the tier refuses
    assert (await ms.usage(ANA)).active == 2


async def test_force_stores_another_copy(ms: AsyncMemstack) -> None:
    first = await ms.add(ANA, "Prefers green tea", tier="pro")
    second = await ms.add_result(ANA, "Prefers green tea", tier="pro", force=True)
    assert second.action is UpdateAction.CREATED and second.memory.id != first.id
    assert await ms.count(ANA) == 2


async def test_scope_and_forgotten_memories(ms: AsyncMemstack) -> None:
    """A shared memory is compared with shared ones, an agent's with the shared ones and its own; a forgotten
    memory is not compared (the user put it aside): the same text stores a new memory, the old one stays forgotten."""
    private = await ms.add(ANA, "Training for a marathon", agent_id="coach", tier="pro")
    shared = await ms.add_result(ANA, "Training for a marathon", tier="pro")
    assert shared.action is UpdateAction.CREATED and shared.memory.agent_id is None  # another agent's is not shared
    again = await ms.add_result(ANA, "Training for a marathon", agent_id="tutor", tier="pro")
    assert again.duplicate and again.memory.id == shared.memory.id  # the shared one serves every agent
    own = await ms.add_result(ANA, "training for a marathon.", agent_id="coach", tier="pro")
    assert own.duplicate and own.memory.id in (private.id, shared.memory.id)
    await ms.forget(ANA, shared.memory.id)
    await ms.forget(ANA, private.id)
    fresh = await ms.add_result(ANA, "Training for a marathon", tier="pro")
    assert fresh.action is UpdateAction.CREATED and fresh.memory.id not in (private.id, shared.memory.id)
    assert not (await ms.get(ANA, shared.memory.id)).is_active


async def test_concurrent_identical_adds_store_one(ms: AsyncMemstack) -> None:
    import asyncio

    results = await asyncio.gather(*(ms.add_result(ANA, "Speaks Portuguese at home", tier="pro") for _ in range(5)))
    assert sum(not r.duplicate for r in results) == 1 and len({r.memory.id for r in results}) == 1
    assert await ms.count(ANA) == 1


@pytest.mark.slow  # loads the local MiniLM model
async def test_a_calibrated_duplicate_is_recognised(tmp_path: Path) -> None:
    """Not the same words, but what the capture pipeline's rule calls a duplicate for the local embedder (its
    calibrated threshold, not a second one); a related but different memory is stored."""
    async with AsyncMemstack(home=tmp_path, embedder="local:minilm") as ms:
        rex = await ms.add(ANA, "My dog is called Rex")
        added = await ms.add_result(ANA, "My dog is Rex")
        assert added.duplicate and added.memory.id == rex.id and "≥" in added.reason
        hike = await ms.add_result(ANA, "I love hiking")
        alps = await ms.add_result(ANA, "I love hiking in the Alps")
        assert not hike.duplicate and not alps.duplicate
        assert await ms.count(ANA) == 3


def test_the_blocking_wrapper_says_duplicate(tmp_path: Path) -> None:
    with Memstack(home=tmp_path, embedder="hash:64") as ms:
        first = ms.add("ana", "Prefers green tea")
        assert isinstance(first, Memory)
        again = ms.add_result("ana", "Prefers green tea.")
        assert again.duplicate and again.memory == first and ms.count("ana") == 1


def test_normalising_sets_aside_case_whitespace_and_trailing_punctuation() -> None:
    assert normalise("  User likes TEA.  ") == normalise("user   likes tea") == "user likes tea"
    assert normalise("Is it tea?!") == "is it tea"
    assert normalise("Likes tea, not coffee") != normalise("Likes tea")
