"""Full-text search is one search on every backend: the same stems, the same matches, the same BM25 ranking.

The stemmed and plural cases failed on PostgreSQL before migration ``0012_fulltext_terms`` (its ``simple``
configuration did not stem); the cross-backend test holds the two stores to the same order and scores.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from memstack.store.base import Store
from memstack.types import ArchivedTurn, MemoryFilter, NewMemory, UserRef

from .conftest import DIM, EMBEDDER, OPENERS, Vectors

ALICE = UserRef("alice")
BOB = UserRef("bob")
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

#: Each query finds its memory only through a stem: no word of the query appears as written.
STEMMED = {
    "run": "I went running by the river every morning",
    "studying": "Alice studies biology at night",
    "daughters": "My daughter Emma turns six in June",
    "marathon": "Training for the Lisbon marathons in May",
    "bakeries": "The bakery on Rua Augusta sells pastel de nata",
}
OTHER = ["Allergic to peanuts", "Prefers tea to coffee", "Works as a nurse in Porto"]


async def _memories(store: Store, vecs: Vectors) -> dict[str, str]:
    """Alice's memories (content → id)."""
    texts = [*STEMMED.values(), *OTHER]
    added = await store.memories.add_many(ALICE, [NewMemory(t) for t in texts], vecs.many(len(texts)))
    return {m.content: m.id for m in added}


async def _archive(store: Store, user: UserRef, exchanges: list[tuple[str, str]], sid: str = "s1") -> None:
    await store.sessions.open(user, sid)
    for n, (u, a) in enumerate(exchanges, start=1):
        await store.sessions.record(user, ArchivedTurn(sid, n, u, a, T0 + timedelta(minutes=n)))


@pytest.mark.parametrize("query", sorted(STEMMED))
async def test_search_text_finds_stemmed_and_plural_forms(store: Store, vecs: Vectors, query: str) -> None:
    ids = await _memories(store, vecs)
    hits = await store.index.search_text(ALICE, query, 5)
    assert [h.memory.id for h in hits] == [ids[STEMMED[query]]]
    assert hits[0].score > 0


@pytest.mark.parametrize("query", sorted(STEMMED))
async def test_list_text_filter_finds_stemmed_and_plural_forms(store: Store, vecs: Vectors, query: str) -> None:
    ids = await _memories(store, vecs)
    assert [m.id for m in await store.index.list(ALICE, MemoryFilter(text=query))] == [ids[STEMMED[query]]]
    found = await store.index.nearest(ALICE, vecs.one(), 3, MemoryFilter(text=query))
    assert [h.memory.id for h in found] == [ids[STEMMED[query]]]


async def test_list_text_filter_needs_every_term_and_ignores_stop_words(store: Store, vecs: Vectors) -> None:
    ids = await _memories(store, vecs)
    runner = ids[STEMMED["run"]]
    assert [m.id for m in await store.index.list(ALICE, MemoryFilter(text="runs rivers"))] == [runner]
    assert await store.index.list(ALICE, MemoryFilter(text="runs marathons")) == []
    assert [m.id for m in await store.index.list(ALICE, MemoryFilter(text="the runs by the rivers"))] == [runner]
    # A query of stop words only still searches for them.
    assert [m.id for m in await store.index.list(ALICE, MemoryFilter(text="by"))] == [runner]


@pytest.mark.parametrize("query", sorted(STEMMED))
async def test_archive_search_finds_stemmed_and_plural_forms(store: Store, query: str) -> None:
    exchanges = [("Anything new?", text) for text in STEMMED.values()]
    await _archive(store, ALICE, [*exchanges, ("What about lunch?", "Soup, then tea.")])
    turn = list(STEMMED).index(query) + 1
    assert [h.turn_id for h in await store.archive.search(ALICE, query, 5)] == [f"s1:{turn}"]
    assert [h.turn_id for h in await store.archive.search(ALICE, query, 5, session_id="s1")] == [f"s1:{turn}"]


async def test_ranking_uses_the_users_own_statistics(store: Store, vecs: Vectors) -> None:
    """BM25's N, average length and document frequencies are the user's: another user's data moves nothing."""
    await _memories(store, vecs)
    before = [(h.memory.id, h.score) for h in await store.index.search_text(ALICE, "running tea coffee", 10)]
    noise = [NewMemory(f"coffee and tea again and again, note {i}") for i in range(40)]
    await store.memories.add_many(BOB, noise, vecs.many(len(noise)))
    after = [(h.memory.id, h.score) for h in await store.index.search_text(ALICE, "running tea coffee", 10)]
    assert [i for i, _ in after] == [i for i, _ in before]
    assert [s for _, s in after] == pytest.approx([s for _, s in before], rel=1e-12)


# -- one ranking on both backends ------------------------------------------------------------------------------------

CORPUS = [
    "Caroline went to a LGBTQ support group yesterday; the support was powerful",
    "Melanie painted a lake sunrise last year and paints every weekend",
    "Caroline is researching adoption agencies, reading about adoption all week",
    "The kids went swimming, then camping by the lake",
    "Melanie ran a charity race for mental health and runs on Sundays",
    "Caroline's daughter loves the bakery near the lake; bakeries are her favourite",
    "Support group, support group, support group",
    "Running shoes, painting supplies and camping gear: a busy weekend",
]
QUERIES = ["support group", "lake painting", "adoption agencies", "running", "camping lake weekend", "bakery"]


@pytest.mark.postgres
async def test_both_backends_rank_the_same_rows_the_same_way(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(len(CORPUS), DIM)).astype(np.float32)
    results: dict[str, list[list[tuple[str, float]]]] = {}
    for backend in ("sqlite", "postgres"):  # (through PgBouncer it is the same PostgreSQL database)
        store = await OPENERS[backend](request, tmp_path / backend, DIM, EMBEDDER)
        try:
            await store.memories.add_many(ALICE, [NewMemory(t) for t in CORPUS], vectors)
            await store.memories.add_many(BOB, [NewMemory("support support lake")], vectors[:1])
            await _archive(store, ALICE, [(CORPUS[i], CORPUS[i + 1]) for i in range(0, len(CORPUS), 2)])
            runs = []
            for query in QUERIES:
                memories = await store.index.search_text(ALICE, query, 10)
                runs.append([(h.memory.content, h.score) for h in memories])
                turns = await store.archive.search(ALICE, query, 10)
                runs.append([(h.turn_id, h.score) for h in turns])
            results[backend] = runs
        finally:
            await store.close()
    for sqlite_run, postgres_run in zip(results["sqlite"], results["postgres"], strict=True):
        assert [key for key, _ in postgres_run] == [key for key, _ in sqlite_run]
        assert [score for _, score in postgres_run] == pytest.approx([score for _, score in sqlite_run], rel=1e-9)
    assert any(len(run) > 2 for run in results["sqlite"])  # the queries do rank several rows
