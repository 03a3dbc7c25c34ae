"""The ``store.archive_vectors`` contract (vectors of archived messages): every backend in ``conftest.BACKENDS``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from memstack.errors import DimensionMismatch, InputError
from memstack.store.base import ArchiveVectors, Store
from memstack.types import ArchivedTurn, TurnCommit, TurnStatus, TurnSummary, TurnVectors, UserRef

ALICE = UserRef("alice")
BOB = UserRef("bob")
ALICE_ELSEWHERE = UserRef("alice", tenant="other-tenant")
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
DIM = 16  # the contract suite's stores (tests/store/conftest.py)
Vectors = Any
StoreFactory = Any


async def _archive(store: Store, user: UserRef, sid: str, n: int, *, blank_reply: int | None = None) -> None:
    """Archive turns 1..n of session ``sid`` (recorded and committed)."""
    for i in range(1, n + 1):
        state = await store.sessions.open(user, sid)
        reply = "" if i == blank_reply else f"{sid} reply {i}"
        await store.sessions.record(user, ArchivedTurn(sid, i, f"{sid} message {i}", reply, T0 + timedelta(hours=i)))
        summary = TurnSummary(i, "asked", "answered")
        await store.sessions.commit(user, sid, TurnCommit(i, TurnStatus.SUMMARIZED, summary, (), state.version))


def _vectors(vecs: Vectors, sid: str, turns: range, **speakers: str) -> list[TurnVectors]:
    return [TurnVectors(sid, t, vecs.one(), vecs.one(), **speakers) for t in turns]  # type: ignore[arg-type]


async def test_store_exposes_the_role(store: Store) -> None:
    assert isinstance(store.archive_vectors, ArchiveVectors)


async def test_vectors_are_read_back_in_write_order_with_text_time_and_speaker(store: Store, vecs: Vectors) -> None:
    await _archive(store, ALICE, "s1", 3)
    first = _vectors(vecs, "s1", range(1, 3), user_speaker="Ann", assistant_speaker="Bob")
    assert await store.archive_vectors.put(ALICE, first) == 4
    assert await store.archive_vectors.put(ALICE, _vectors(vecs, "s1", range(3, 4))) == 2
    got = await store.archive_vectors.messages(ALICE)
    assert [m.id for m in got] == ["s1:1:user", "s1:1:assistant", "s1:2:user", "s1:2:assistant", "s1:3:user",
                                   "s1:3:assistant"]  # fmt: skip
    assert [m.seq for m in got] == sorted(m.seq for m in got) and len({m.seq for m in got}) == 6
    assert got[1].text == "s1 reply 1" and got[1].turn_id == "s1:1" and got[1].speaker == "Bob"
    assert got[4].speaker is None and got[4].at == T0 + timedelta(hours=3)
    assert got[0].embedding is not None
    np.testing.assert_allclose(got[0].embedding, first[0].user, atol=1e-6)  # type: ignore[arg-type]
    later = await store.archive_vectors.messages(ALICE, after=got[3].seq)
    assert [m.id for m in later] == ["s1:3:user", "s1:3:assistant"]
    paged = await store.archive_vectors.messages(ALICE, after=got[0].seq, limit=2)
    assert [m.id for m in paged] == ["s1:1:assistant", "s1:2:user"]


async def test_each_user_reads_only_their_own(store: Store, vecs: Vectors) -> None:
    for user in (ALICE, BOB, ALICE_ELSEWHERE):
        await _archive(store, user, "s1", 1)
        await store.archive_vectors.put(user, _vectors(vecs, "s1", range(1, 2)))
    await _archive(store, BOB, "only-bob", 1)
    for user in (ALICE, BOB, ALICE_ELSEWHERE):
        got = await store.archive_vectors.messages(user)
        assert [m.id for m in got] == ["s1:1:user", "s1:1:assistant"]
    with pytest.raises(InputError, match="not in this user's archive"):  # Bob's session is not Alice's
        await store.archive_vectors.put(ALICE, _vectors(vecs, "only-bob", range(1, 2)))
    assert len(await store.archive_vectors.messages(ALICE)) == 2  # nothing half-written


async def test_writing_twice_keeps_the_first_and_blank_messages_are_recorded_not_read(
    store: Store, vecs: Vectors
) -> None:
    await _archive(store, ALICE, "s1", 2, blank_reply=2)
    first = _vectors(vecs, "s1", range(1, 2))
    await store.archive_vectors.put(ALICE, first)
    assert await store.archive_vectors.put(ALICE, _vectors(vecs, "s1", range(1, 2))) == 0
    got = await store.archive_vectors.messages(ALICE)
    np.testing.assert_allclose(got[0].embedding, first[0].user, atol=1e-6)  # type: ignore[arg-type]
    assert await store.archive_vectors.put(ALICE, [TurnVectors("s1", 2, vecs.one(), None)]) == 2
    assert [m.id for m in await store.archive_vectors.messages(ALICE)] == ["s1:1:user", "s1:1:assistant", "s1:2:user"]
    assert await store.archive_vectors.missing() == []


async def test_missing_lists_archived_exchanges_without_vectors_oldest_first(store: Store, vecs: Vectors) -> None:
    await _archive(store, ALICE, "s1", 3)
    await _archive(store, BOB, "s2", 1)
    await store.archive_vectors.put(ALICE, _vectors(vecs, "s1", range(2, 3)))
    missing = await store.archive_vectors.missing()
    assert [(t.user_id, t.turn_id) for t in missing] == [("alice", "s1:1"), ("alice", "s1:3"), ("bob", "s2:1")]
    assert missing[0].user == "s1 message 1" and missing[0].assistant == "s1 reply 1"
    assert [t.turn_id for t in await store.archive_vectors.missing(limit=1)] == ["s1:1"]


async def test_bad_vectors_and_arguments_are_refused(store: Store, vecs: Vectors) -> None:
    await _archive(store, ALICE, "s1", 1)
    with pytest.raises(DimensionMismatch):
        await store.archive_vectors.put(ALICE, [TurnVectors("s1", 1, np.ones(DIM + 1, dtype=np.float32), None)])
    with pytest.raises(InputError):
        await store.archive_vectors.put(ALICE, [TurnVectors("s1", 1, np.zeros(DIM, dtype=np.float32), None)])
    with pytest.raises(InputError, match="speaker"):
        await store.archive_vectors.put(ALICE, [TurnVectors("s1", 1, vecs.one(), None, user_speaker=" ")])
    with pytest.raises(InputError, match="turn numbers"):
        await store.archive_vectors.put(ALICE, [TurnVectors("s1", 0, vecs.one(), None)])
    with pytest.raises(InputError):
        await store.archive_vectors.messages(ALICE, limit=0)
    assert await store.archive_vectors.put(ALICE, []) == 0
    assert await store.archive_vectors.messages(ALICE) == []


async def test_vectors_persist_across_reopening(make_store: StoreFactory, vecs: Vectors) -> None:
    store = await make_store()
    await _archive(store, ALICE, "s1", 1)
    await store.archive_vectors.put(ALICE, _vectors(vecs, "s1", range(1, 2), user_speaker="Ann"))
    await store.close()
    again = await make_store()
    got = await again.archive_vectors.messages(ALICE)
    assert [(m.id, m.speaker) for m in got] == [("s1:1:user", "Ann"), ("s1:1:assistant", None)]
