"""The vector-index contract (:class:`memstack.store.vectors.base.VectorIndex`), run against every implementation.

Each implementation is reached the way the stores compose it, as ``store.vectors``:

- ``cache``: SQLite's in-process LRU of per-user matrices (:class:`~memstack.store.vectors.cache.CachedVectors`);
- ``pgvector``: PostgreSQL's exact statement (every user here is below the HNSW threshold);
- ``pgvector-hnsw``: PostgreSQL with a threshold of :data:`LARGE` memories, so the users these tests fill are
  searched through their own HNSW index (and its exact fallback when a filter leaves the graph short).

Whatever stands behind it, a search must be what exact numpy over the user's current memories gives: the same
memories in the same order with the same scores, after every kind of write, and never fewer than asked for.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from memstack.store.base import Store
from memstack.store.vectors import IndexedRow, VectorIndex, VectorWrite
from memstack.store.vectors.cache import CachedVectors
from memstack.store.vectors.exact import top_k
from memstack.types import (
    Category,
    DeletedBy,
    Memory,
    MemoryFilter,
    MemoryPatch,
    NewMemory,
    Source,
    UserRef,
    utcnow,
)

from .conftest import DIM, EMBEDDER

ALICE = UserRef("acme", "alice")
BOB = UserRef("acme", "bob")

#: The HNSW threshold of ``pgvector-hnsw``, and how many memories the tests give a user (past it).
LARGE = 40
N = 60

IMPLEMENTATIONS = ["cache", "pgvector", "pgvector-hnsw"]
WORDS = ["kite", "violin", "harbour", "lantern", "orchard", "glacier"]
CATEGORIES = [Category.GENERAL, Category.PREFERENCE, Category.FACT]


@pytest.fixture(params=IMPLEMENTATIONS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    opened: Store
    if request.param == "cache":
        from memstack.store.sqlite import SQLiteStore

        opened = await SQLiteStore.open(tmp_path / "memstack.db", dim=DIM, embedder=EMBEDDER)
    else:
        from memstack.store.postgres import AnnSettings, PostgresStore

        url: str = request.getfixturevalue("postgres_url")
        threshold = LARGE if request.param == "pgvector-hnsw" else 10_000
        opened = await PostgresStore.open(url, dim=DIM, embedder=EMBEDDER, ann=AnnSettings(threshold=threshold))
    try:
        yield opened
    finally:
        await opened.close()


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


async def _fill(store: Store, user: UserRef, rng: np.random.Generator, n: int = N) -> dict[str, np.ndarray]:
    """``n`` memories of varied words, categories, agents and metadata; their vectors by id."""
    news = [
        NewMemory(
            f"{WORDS[i % len(WORDS)]} note {i}",
            category=CATEGORIES[i % len(CATEGORIES)],
            agent_id="scout" if i % 4 == 0 else None,
            metadata={"shelf": i % 5},
        )
        for i in range(n)
    ]
    vectors = _unit(rng, n)
    added = await store.memories.add_many(user, news, vectors)
    return {m.id: vectors[i] for i, m in enumerate(added)}


def _passes(memory: Memory, flt: MemoryFilter) -> bool:
    if flt.categories and memory.category not in flt.categories:
        return False
    if flt.agent_id is not None and memory.agent_id not in (None, flt.agent_id):
        return False
    if flt.text is not None and flt.text not in memory.content.split():
        return False
    return not flt.metadata or all(memory.metadata.get(k) == v for k, v in flt.metadata.items())


async def _expected(
    store: Store, user: UserRef, vectors: dict[str, np.ndarray], query: np.ndarray, k: int, flt: MemoryFilter
) -> list[tuple[str, float]]:
    """Exact numpy over the user's current memories that pass ``flt``."""
    current = [m for m in await store.index.list(user, MemoryFilter(limit=1000)) if _passes(m, flt)]
    if not current:
        return []
    matrix = np.stack([vectors[m.id] for m in current])
    scores = matrix @ query
    order = sorted(range(len(current)), key=lambda i: -float(scores[i]))[:k]
    return [(current[i].id, float(scores[i])) for i in order]


async def _same(
    store: Store, user: UserRef, vectors: dict[str, np.ndarray], query: np.ndarray, k: int, flt: MemoryFilter
) -> None:
    found = await store.vectors.search(user, query, k, flt)
    want = await _expected(store, user, vectors, query, k, flt)
    assert [m.memory.id for m in found] == [i for i, _ in want]
    assert np.allclose([m.score for m in found], [s for _, s in want], atol=1e-5)
    assert all(m.memory.user_id == user.user_id for m in found)
    # a vector handed back with a result (the cache holds them) is the memory's stored one, after any write
    assert all(m.vector is None or np.allclose(m.vector, vectors[m.memory.id], atol=1e-6) for m in found)
    if isinstance(store.vectors, CachedVectors) and not (flt.as_of or flt.past):
        assert all(m.vector is not None for m in found)


FILTERS = [
    MemoryFilter(),
    MemoryFilter(categories=(Category.PREFERENCE,)),
    MemoryFilter(agent_id="scout"),
    MemoryFilter(agent_id="someone-else"),
    MemoryFilter(text="violin"),
    MemoryFilter(metadata={"shelf": 3}),
    MemoryFilter(categories=(Category.FACT,), text="kite", metadata={"shelf": 1}),
]


async def test_each_store_composes_a_vector_index(store: Store) -> None:
    assert isinstance(store.vectors, VectorIndex)


@pytest.mark.parametrize("flt", FILTERS, ids=lambda f: repr(f)[:60])
async def test_search_is_exact_numpy_over_the_users_current_memories(store: Store, flt: MemoryFilter) -> None:
    rng = np.random.default_rng(7)
    vectors = await _fill(store, ALICE, rng)
    vectors |= await _fill(store, BOB, rng, n=10)  # another user's memories are never searched
    for query in _unit(rng, 4):
        for k in (1, 5, N + 5):  # more than there are: every matching memory
            await _same(store, ALICE, vectors, query, k, flt)


async def test_a_user_past_the_threshold_is_searchable_at_full_speed_when_add_many_returns(store: Store) -> None:
    # add_many settles the index: for pgvector-hnsw the user's own HNSW index exists as soon as it returns.
    await _fill(store, ALICE, np.random.default_rng(1))
    indexes = getattr(store.vectors, "indexes", None)
    if indexes is not None:
        name = await indexes.lookup(ALICE)
        assert (name is not None) == (indexes.settings.threshold <= N)


async def test_every_write_keeps_the_search_exact(store: Store) -> None:
    rng = np.random.default_rng(3)
    vectors = await _fill(store, ALICE, rng)
    query = _unit(rng, 1)[0]
    await _same(store, ALICE, vectors, query, 10, MemoryFilter())  # warm: held where the index holds users
    ids = list(vectors)
    new_vector = _unit(rng, 1)[0]
    added = await store.memories.add(ALICE, NewMemory("lantern added later"), new_vector)
    vectors[added.id] = new_vector
    moved = _unit(rng, 1)[0]
    await store.memories.update(ALICE, ids[0], MemoryPatch(content="glacier moved"), moved)
    vectors[ids[0]] = moved
    await store.memories.update(ALICE, ids[1], MemoryPatch(category=Category.FACT))  # fields only, same vector
    await store.memories.forget(ALICE, ids[2], by=DeletedBy.USER)
    await store.memories.delete(ALICE, ids[3])
    await store.memories.forget(ALICE, ids[4], by=DeletedBy.USER)
    await store.memories.restore(ALICE, ids[4])
    for q in (query, moved, new_vector):
        for flt in (MemoryFilter(), MemoryFilter(categories=(Category.FACT,)), MemoryFilter(text="glacier")):
            await _same(store, ALICE, vectors, q, 10, flt)
    found = await store.vectors.search(ALICE, moved, 1, MemoryFilter())
    assert found[0].memory.id == ids[0] and found[0].memory.content == "glacier moved"


async def test_an_erased_user_is_gone_from_the_index(store: Store) -> None:
    rng = np.random.default_rng(5)
    await _fill(store, ALICE, rng)
    vectors = await _fill(store, BOB, rng, n=10)
    query = _unit(rng, 1)[0]
    assert await store.vectors.search(ALICE, query, 3, MemoryFilter())
    await store.users.erase(ALICE)
    assert await store.vectors.search(ALICE, query, 3, MemoryFilter()) == []
    await _same(store, BOB, vectors, query, 5, MemoryFilter())


async def test_what_is_held_may_be_dropped_at_any_time_without_changing_an_answer(store: Store) -> None:
    # invalidate (another process wrote) and a stale write (rows changed that the write does not list): whatever
    # the index held is read again, never served stale and never lost.
    rng = np.random.default_rng(9)
    vectors = await _fill(store, ALICE, rng)
    query = _unit(rng, 1)[0]
    await _same(store, ALICE, vectors, query, 7, MemoryFilter())
    store.vectors.invalidate(ALICE)
    await _same(store, ALICE, vectors, query, 7, MemoryFilter())
    store.vectors.invalidate()
    await _same(store, ALICE, vectors, query, 7, MemoryFilter())
    store.vectors.committed(ALICE, VectorWrite(stale=True))
    await store.vectors.settle(ALICE)
    await _same(store, ALICE, vectors, query, 7, MemoryFilter(agent_id="scout"))


async def test_a_search_of_a_time_scores_what_held_then(store: Store) -> None:
    # Past versions are not where current memories are held: such a search reads them, scored by the same rule.
    rng = np.random.default_rng(11)
    vectors = await _fill(store, ALICE, rng, n=12)
    first = next(iter(vectors))
    await store.memories.forget(ALICE, first, by=DeletedBy.USER)  # forgetting is a correction: never what held
    for query in _unit(rng, 3):
        await _same(store, ALICE, vectors, query, 5, MemoryFilter(as_of=utcnow()))
        await _same(store, ALICE, vectors, query, 5, MemoryFilter(as_of=utcnow(), categories=(Category.FACT,)))


# -- the shared pieces, once ---------------------------------------------------------------------------------------


def _memory(active: bool) -> Memory:
    at = utcnow()
    return Memory(
        id="mem_1", tenant="acme", user_id="alice", agent_id=None, content="x", category=Category.GENERAL,
        source=Source.MANUAL, confidence=1.0, is_active=active, deleted_by=None, created_at=at, updated_at=at,
    )  # fmt: skip


def test_a_row_change_is_added_changed_or_removed_by_whether_it_was_and_is_current() -> None:
    vector = np.ones(DIM, dtype=np.float32)
    live, gone = _memory(True), _memory(False)
    added = VectorWrite.of_change(1, False, live, vector)
    assert added.added == (IndexedRow(1, live, vector),) and not added.changed and not added.removed
    assert not added.stale and added.added[0].vector is vector
    changed = VectorWrite.of_change(1, True, live, None)
    assert changed.changed == (IndexedRow(1, live, None),) and not changed.added and not changed.removed
    assert VectorWrite.of_change(1, True, gone, None) == VectorWrite(removed=(1,))
    assert VectorWrite.of_change(1, True, None, None) == VectorWrite(removed=(1,))
    assert VectorWrite.of_change(1, False, gone, None) == VectorWrite()
    assert VectorWrite.of_change(1, False, live, None).stale  # back without its vector: read the user again


def test_top_k_is_best_first_and_the_earlier_row_first_among_equals() -> None:
    scores = np.asarray([0.1, 0.9, 0.5, 0.9, -1.0], dtype=np.float32)
    assert top_k(scores, 3).tolist() == [1, 3, 2]
    assert top_k(scores, 10).tolist() == [1, 3, 2, 0, 4]
    assert top_k(scores[:0], 3).tolist() == []


async def test_vectors_at_hand_are_the_stored_ones_and_never_a_read(store: Store) -> None:
    """``at_hand``: what the index holds in the process for memories found some other way (by their words), so a
    reader need not embed their texts again; an index that keeps no vectors here answers nothing."""
    rng = np.random.default_rng(11)
    vectors = await _fill(store, ALICE, rng)
    ids = list(vectors)
    await store.vectors.search(ALICE, _unit(rng, 1)[0], 3, MemoryFilter())  # the user's rows are now held, if ever
    found = store.vectors.at_hand(ALICE, [*ids[:10], "mem_unknown"])
    assert set(found) <= set(ids[:10])
    assert all(np.allclose(found[i], vectors[i], atol=1e-6) for i in found)
    if isinstance(store.vectors, CachedVectors):
        assert set(found) == set(ids[:10])
        assert store.vectors.at_hand(BOB, ids[:10]) == {}  # another user's ids: not theirs
    else:
        assert found == {}


async def test_stored_vectors_are_the_current_memories_own(store: Store) -> None:
    """``stored``: the vectors of a user's current memories by id, held or read, for a reader about to embed their
    texts; a forgotten memory, another user's, or an unknown id gives none."""
    rng = np.random.default_rng(12)
    vectors = await _fill(store, ALICE, rng)
    await _fill(store, BOB, rng, n=5)
    ids = list(vectors)
    await store.memories.forget(ALICE, ids[0], by=DeletedBy.USER)
    await store.vectors.search(ALICE, _unit(rng, 1)[0], 3, MemoryFilter())
    found = await store.vectors.stored(ALICE, [*ids[:8], "mem_unknown"])
    assert set(found) == set(ids[1:8])
    assert all(np.allclose(found[i], vectors[i], atol=1e-3) for i in found)
    assert await store.vectors.stored(BOB, ids[:8]) == {}
    assert await store.vectors.stored(ALICE, []) == {}
