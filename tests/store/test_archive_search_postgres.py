"""PostgreSQL's archive ranking on each of its paths: a small archive read whole, candidates found with exact
nearest neighbours, candidates found through the HNSW index; and the statistics ``put`` keeps."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from memstack.retrieval import RetrievalSettings
from memstack.retrieval.archive import ArchiveQuery
from memstack.store.postgres import AnnSettings, PostgresStore
from memstack.types import DeletedBy, HiddenItem, HiddenKind, NewMemory, UserRef

from .conftest import DIM, EMBEDDER
from .test_archive_search_contract import ALICE, BOB, NOW, QUERIES, _fill, _reference, _same

pytestmark = pytest.mark.postgres


async def _open(url: str, **settings: int) -> PostgresStore:
    return await PostgresStore.open(url, dim=DIM, embedder=EMBEDDER, ann=AnnSettings(**settings))


@pytest.mark.parametrize(
    "settings",
    [{"archive_scan_max": 0}, {"archive_scan_max": 0, "archive_exact_max": 0}],
    ids=["candidates-exact", "candidates-hnsw"],
)
async def test_candidates_rank_as_the_reference(postgres_url: str, settings: dict[str, int]) -> None:
    store = await _open(postgres_url, **settings)
    try:
        rng = np.random.default_rng(21)
        await _fill(store, ALICE, rng, shuffle=True)
        for seed in range(30):  # other users' messages fill the shared HNSW graph
            await _fill(store, UserRef(f"other-{seed}"), np.random.default_rng(100 + seed))
        for config in (RetrievalSettings(), RetrievalSettings(context_turns=0)):
            reference = await _reference(store, ALICE, config)
            for text in QUERIES:
                query = ArchiveQuery.of(text, rng.normal(size=DIM), config, now=NOW)
                for k in (3, 50):
                    _same(await store.archive_vectors.search(ALICE, query, k), reference.rank(query, k))
                _same(
                    await store.archive_vectors.search(ALICE, query, 50, exclude_session="d3"),
                    reference.rank(query, 50, exclude_session="d3"),
                )
        # exchanges a forgotten memory hides are left out on these paths too (issue 23)
        [memory] = await store.memories.add_many(ALICE, [NewMemory("Runs marathons")], rng.normal(size=(1, DIM)))
        hide = [HiddenItem(HiddenKind.TURN, "d1", 1), HiddenItem(HiddenKind.TURN, "d3", 1)]
        await store.memories.forget(ALICE, memory.id, by=DeletedBy.USER, hide=hide)
        reference = await _reference(store, ALICE, RetrievalSettings())
        reference.hide([("d1", 1), ("d3", 1)])
        for text in QUERIES:
            query = ArchiveQuery.of(text, rng.normal(size=DIM), RetrievalSettings(), now=NOW)
            found = await store.archive_vectors.search(ALICE, query, 50)
            _same(found, reference.rank(query, 50))
            assert not {(m.message.session_id, m.message.turn) for m in found} & {("d1", 1), ("d3", 1)}
    finally:
        await store.close()


async def test_few_nearest_still_score_every_candidate_exactly(postgres_url: str) -> None:
    """With 2 nearest by vector, messages no query term reaches may be left out, never mis-scored."""
    store = await _open(postgres_url, archive_scan_max=0, archive_nearest=2, archive_exact_max=0)
    try:
        rng = np.random.default_rng(4)
        await _fill(store, ALICE, rng)
        await _fill(store, BOB, np.random.default_rng(5))
        settings = RetrievalSettings()
        reference = await _reference(store, ALICE, settings)
        for text in QUERIES:
            query = ArchiveQuery.of(text, rng.normal(size=DIM), settings, now=NOW)
            want = {m.message.id: m.score for m in reference.rank(query, 50)}
            got = await store.archive_vectors.search(ALICE, query, 50)
            assert len(got) >= min(2, len(want))
            for match in got:
                assert match.score == pytest.approx(want[match.message.id], rel=1e-5, abs=1e-6)
    finally:
        await store.close()


async def test_put_keeps_links_and_statistics_equal_to_a_recount(postgres_url: str) -> None:
    store = await _open(postgres_url)
    try:
        await _fill(store, ALICE, np.random.default_rng(8), shuffle=True)
        await _fill(store, BOB, np.random.default_rng(9))
    finally:
        await store.close()
    with psycopg.connect(postgres_url) as conn:
        stored = conn.execute("SELECT * FROM archive_stats ORDER BY user_id").fetchall()
        counted = conn.execute(
            "SELECT tenant, user_id, count(*), sum(n_terms), sum(key_len), count(DISTINCT session_seq) "
            "FROM archive_vectors WHERE embedding IS NOT NULL GROUP BY tenant, user_id ORDER BY user_id"
        ).fetchall()
        assert stored == counted and len(stored) == 2
        wrong = conn.execute(
            "SELECT count(*) FROM archive_vectors v LEFT JOIN LATERAL (SELECT p.seq, p.n_terms FROM archive_vectors p "
            "WHERE p.session_seq = v.session_seq AND p.embedding IS NOT NULL AND (p.turn, p.side) < (v.turn, v.side) "
            "ORDER BY p.turn DESC, p.side DESC LIMIT 1) AS p ON true WHERE v.embedding IS NOT NULL "
            "AND (v.prev_seq IS DISTINCT FROM p.seq OR v.key_len <> v.n_terms + coalesce(p.n_terms, 0))"
        ).fetchone()
        assert wrong == (0,)
