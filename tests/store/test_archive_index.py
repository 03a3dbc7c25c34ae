"""Recall's archive index (``memstack.recall.index``): in memory and bounded where the store is embedded, absent
where the database ranks; the same results either way."""

from __future__ import annotations

import numpy as np

from memstack.recall import ArchiveIndex
from memstack.retrieval import RetrievalSettings
from memstack.retrieval.archive import ArchiveQuery
from memstack.store.base import Store
from memstack.types import ArchivedTurn, TurnVectors, UserRef

from .test_archive_search_contract import ALICE, BOB, DIM, NOW, QUERIES, _fill, _same


async def test_results_equal_the_stores_own_ranking_and_follow_new_writes(store: Store) -> None:
    rng = np.random.default_rng(2)
    await _fill(store, ALICE, rng)
    index = ArchiveIndex(store, RetrievalSettings())
    assert index.cached == store.archive_vectors.embedded
    queries = [ArchiveQuery.of(text, rng.normal(size=DIM), index.settings, now=NOW) for text in QUERIES]
    for query in queries:
        _same(await index.search(ALICE, query, 10), await store.archive_vectors.search(ALICE, query, 10))
    await store.sessions.open(ALICE, "d4")
    await store.sessions.record(ALICE, ArchivedTurn("d4", 1, "A new marathon plan", "Twelve weeks of running.", NOW))
    await store.archive_vectors.put(ALICE, [TurnVectors("d4", 1, rng.normal(size=DIM), rng.normal(size=DIM))])
    for query in queries:  # a message written after the index was built is found on the next query
        found = await index.search(ALICE, query, 30)
        _same(found, await store.archive_vectors.search(ALICE, query, 30))
    assert any(m.message.session_id == "d4" for m in await index.search(ALICE, queries[0], 30))
    if not index.cached:
        assert index.cached_messages == 0  # the database ranks: this process holds no copy


async def test_the_cache_is_bounded_and_a_user_larger_than_it_is_ranked_by_the_store(store: Store) -> None:
    rng = np.random.default_rng(3)
    await _fill(store, ALICE, rng)  # 23 messages with vectors each
    await _fill(store, BOB, rng)
    index = ArchiveIndex(store, RetrievalSettings(), max_messages=30)
    query = ArchiveQuery.of(QUERIES[0], rng.normal(size=DIM), index.settings, now=NOW)
    for user in (ALICE, BOB, ALICE):
        _same(await index.search(user, query, 5), await store.archive_vectors.search(user, query, 5))
        assert index.cached_messages <= 30
    small = ArchiveIndex(store, RetrievalSettings(), max_messages=10)
    _same(await small.search(ALICE, query, 5), await store.archive_vectors.search(ALICE, query, 5))
    assert small.cached_messages == 0 and await small.current(ALICE) is None
    off = ArchiveIndex(store, RetrievalSettings(), max_messages=0)
    assert not off.cached and await off.current(UserRef("nobody")) is None


async def test_an_index_kept_elsewhere_notices_that_its_user_was_erased(store: Store) -> None:
    """Another process's index (here: one this erasure does not tell) starts over once its user is erased, and
    holds only what was written after."""
    rng = np.random.default_rng(4)
    await _fill(store, ALICE, rng)
    await _fill(store, BOB, rng)
    elsewhere = ArchiveIndex(store, RetrievalSettings())
    query = ArchiveQuery.of(QUERIES[0], rng.normal(size=DIM), elsewhere.settings, now=NOW)
    assert await elsewhere.search(ALICE, query, 30) != []
    await store.users.erase(ALICE)
    assert await elsewhere.search(ALICE, query, 30) == []
    _same(await elsewhere.search(BOB, query, 30), await store.archive_vectors.search(BOB, query, 30))
    await store.sessions.open(ALICE, "again")
    await store.sessions.record(ALICE, ArchivedTurn("again", 1, "A new marathon plan", "Twelve weeks.", NOW))
    await store.archive_vectors.put(ALICE, [TurnVectors("again", 1, rng.normal(size=DIM), rng.normal(size=DIM))])
    found = await elsewhere.search(ALICE, query, 30)
    assert {m.message.session_id for m in found} <= {"again"}
    _same(found, await store.archive_vectors.search(ALICE, query, 30))
