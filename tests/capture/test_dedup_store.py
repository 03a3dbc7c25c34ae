"""The production rule against a real SQLite store and the real local embedder: one nearest call per candidate."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memstack.capture.dedup import DedupAction, DedupRule
from memstack.embed import Embedder, get_embedder
from memstack.store.base import Store
from memstack.store.sqlite import SQLiteStore
from memstack.types import Category, NewMemory, Source, UserRef

ALICE, BOB = UserRef("alice"), UserRef("bob")


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return get_embedder("local:minilm")


@pytest.fixture
async def store(tmp_path: Path, embedder: Embedder) -> AsyncIterator[Store]:
    opened = await SQLiteStore.open(tmp_path / "memstack.db", dim=embedder.dim, embedder=embedder.name)
    try:
        yield opened
    finally:
        await opened.close()


async def remember(store: Store, embedder: Embedder, user: UserRef, content: str) -> str:
    vector = (await embedder.embed([content]))[0]
    memory = await store.memories.add(user, NewMemory(content, Category.FACT, Source.AUTO), vector)
    return memory.id


async def test_duplicate_update_and_new_against_stored_memories(store: Store, embedder: Embedder) -> None:
    ucla = await remember(store, embedder, ALICE, "User studies biology at UCLA")
    spicy = await remember(store, embedder, ALICE, "User loves spicy food")
    await remember(store, embedder, ALICE, "User has two children")
    max_the_dog = await remember(store, embedder, BOB, "User has a dog named Max")
    rule = DedupRule.for_embedder(embedder.name)

    async def check(user: UserRef, text: str) -> tuple[DedupAction, str | None]:
        decision = await rule.check(store.index, user, text, (await embedder.embed([text]))[0])
        return decision.action, decision.existing_id

    assert await check(ALICE, "User studies biology at UCLA.") == (DedupAction.DUPLICATE, ucla)
    assert await check(ALICE, "User hates spicy food") == (DedupAction.UPDATE, spicy)
    assert await check(ALICE, "User has a cat named Tom") == (DedupAction.NEW, None)
    # Bob's memory is not Alice's: the same sentence is new for her
    assert await check(ALICE, "User has a dog named Max") == (DedupAction.NEW, None)
    assert await check(BOB, "User has a dog named Max") == (DedupAction.DUPLICATE, max_the_dog)


async def test_an_empty_store_means_new(store: Store, embedder: Embedder) -> None:
    rule = DedupRule.for_embedder(embedder.name)
    decision = await rule.check(store.index, ALICE, "User likes tea", (await embedder.embed(["User likes tea"]))[0])
    assert decision.action is DedupAction.NEW and decision.existing_id is None
