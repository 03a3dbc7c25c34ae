"""``store.archive_vectors.search``: every backend ranks a user's archive as the in-memory reference does.

The reference is :class:`~memstack.retrieval.archive.UserArchive` over every message the store holds for the user
(what recall keeps in memory on SQLite). PostgreSQL finds the candidates with its indexes and ranks them with the
same formula: the same messages in the same order, scores equal to float rounding (its dot products are summed in
float32 in another order).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from memstack.errors import InputError
from memstack.retrieval import RetrievalSettings
from memstack.retrieval.archive import ArchiveQuery, UserArchive
from memstack.store.base import Store
from memstack.types import ArchivedTurn, ArchiveMatch, TurnVectors, UserRef

ALICE = UserRef("alice")
BOB = UserRef("bob")
DIM = 16
NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)

#: Three conversations, a week apart: (user message, reply).
SESSIONS = {
    "d1": [
        ("I signed up for the Lisbon marathon in October", "That's exciting! How is the training going?"),
        ("Running every morning, my knees hurt a bit", "Stretching after each run helps."),
        ("My daughter wants to run with me", "A family run sounds lovely."),
        ("We also went to the new bakery", "Which bakery? The one near the river?"),
    ],
    "d2": [
        ("I am studying biology for the exam", "Good luck with the biology exam!"),
        ("The exam is on Friday", "Friday is close; plan your revision."),
        ("Yes", "Great."),
        ("My daughters baked bread at home", "Home-made bread is the best."),
    ],
    "d3": [
        ("Back to the marathon: I ran 30 km on Sunday", "That's a long run, well done."),
        ("The bakeries in Porto are great too", "Porto has excellent pastries."),
        ("What should I eat before a long run?", "Oats and a banana work for many runners."),
        ("Thanks", "Anytime."),
    ],
}
QUERIES = [
    "How is the marathon training going?",
    "running with my daughter",
    "bakeries",
    "What did I say about the biology exam?",
    "what did we talk about last week?",  # a time expression: the week before NOW
    "what is it",  # stop words only: ranked by vector alone
    "Porto pastries and bread",
]


async def _fill(store: Store, user: UserRef, rng: np.random.Generator, *, shuffle: bool = False) -> None:
    """Record every exchange (a week between sessions) and write their vectors, in order or shuffled."""
    vectors: list[TurnVectors] = []
    for week, (sid, exchanges) in enumerate(SESSIONS.items()):
        await store.sessions.open(user, sid)
        for n, (u, a) in enumerate(exchanges, start=1):
            at = NOW - timedelta(days=21 - 7 * week, minutes=-n)
            await store.sessions.record(user, ArchivedTurn(sid, n, u, a, at))
            blank = None if (sid, n) == ("d2", 3) else rng.normal(size=DIM)  # one reply without a vector
            vectors.append(TurnVectors(sid, n, rng.normal(size=DIM), blank, user_speaker="Ann", assistant_speaker="Bo"))
    if shuffle:
        order = rng.permutation(len(vectors))
        for start in range(0, len(vectors), 3):
            await store.archive_vectors.put(user, [vectors[i] for i in order[start : start + 3]])
    else:
        await store.archive_vectors.put(user, vectors)


async def _reference(store: Store, user: UserRef, settings: RetrievalSettings) -> UserArchive:
    archive = UserArchive(settings)
    archive.add(await store.archive_vectors.messages(user, limit=10_000))
    return archive


def _same(got: list[ArchiveMatch], want: list[ArchiveMatch]) -> None:
    assert [m.message.id for m in got] == [m.message.id for m in want]
    assert [m.score for m in got] == pytest.approx([m.score for m in want], rel=1e-5, abs=1e-6)
    assert [m.previous.id if m.previous else None for m in got] == [m.previous.id if m.previous else None for m in want]
    for match in got:
        assert match.score > 0 and match.message.embedding is None and match.message.text


@pytest.mark.parametrize("shuffle", [False, True], ids=["in-order", "out-of-order"])
async def test_search_ranks_as_the_in_memory_reference(store: Store, shuffle: bool) -> None:
    rng = np.random.default_rng(11)
    await _fill(store, ALICE, rng, shuffle=shuffle)
    await _fill(store, BOB, np.random.default_rng(12))  # another user's archive changes nothing of Alice's
    settings = RetrievalSettings()
    reference = await _reference(store, ALICE, settings)
    assert len(reference) == 23
    for text in QUERIES:
        vector = rng.normal(size=DIM)
        query = ArchiveQuery.of(text, vector, settings, now=NOW)
        for k in (3, 50):
            _same(await store.archive_vectors.search(ALICE, query, k), reference.rank(query, k))
        excluded = await store.archive_vectors.search(ALICE, query, 50, exclude_session="d1")
        _same(excluded, reference.rank(query, 50, exclude_session="d1"))
        assert excluded and all(m.message.session_id != "d1" for m in excluded)


@pytest.mark.parametrize(
    "settings",
    [
        RetrievalSettings(context_turns=0),
        RetrievalSettings(thread_weight=0, neighbour_weight=0),
        RetrievalSettings(recency_weight=0.5),
    ],
    ids=["no-context", "plain-bm25", "recency"],
)
async def test_search_follows_the_settings_and_works_without_a_vector(
    store: Store, settings: RetrievalSettings
) -> None:
    rng = np.random.default_rng(5)
    await _fill(store, ALICE, rng)
    reference = await _reference(store, ALICE, settings)
    for text in QUERIES:
        for vector in (rng.normal(size=DIM), None):
            query = ArchiveQuery.of(text, vector, settings, now=NOW)
            _same(await store.archive_vectors.search(ALICE, query, 10), reference.rank(query, 10))


async def test_search_of_an_empty_archive_and_bad_arguments(store: Store) -> None:
    query = ArchiveQuery.of("marathon", np.ones(DIM), RetrievalSettings(), now=NOW)
    assert await store.archive_vectors.search(ALICE, query, 5) == []
    await _fill(store, ALICE, np.random.default_rng(1))
    assert await store.archive_vectors.search(BOB, query, 5) == []
    with pytest.raises(InputError):
        await store.archive_vectors.search(ALICE, query, 0)
    wide = ArchiveQuery.of("marathon", np.ones(DIM), RetrievalSettings(context_turns=2), now=NOW)
    results: list[Any] = []
    try:
        results = await store.archive_vectors.search(ALICE, wide, 5)
    except InputError as exc:  # a database ranks keys of one previous message at most, and says so
        assert "context_turns" in str(exc)
    else:
        reference = await _reference(store, ALICE, wide.settings)
        _same(results, reference.rank(wide, 5))
