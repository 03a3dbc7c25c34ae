"""``store.idempotency``: the responses kept under an HTTP write's ``Idempotency-Key``, the same on every backend
(SQLite, PostgreSQL, PostgreSQL behind a transaction pooler), shared by every process on the store."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from memstack.store.base import IdempotencyStore, Store
from memstack.types import UserRef

from .conftest import StoreFactory

ALICE = UserRef("alice", tenant="acme")
BOB = UserRef("bob", tenant="acme")
ELSEWHERE = UserRef("alice", tenant="globex")
NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
DAY = 86_400.0


async def test_a_key_is_claimed_once_and_its_response_replayed(store: Store) -> None:
    keys = store.idempotency
    assert isinstance(keys, IdempotencyStore)
    assert await keys.claim(ALICE, "k1", "fp-a", now=NOW, ttl_s=DAY, stale_s=600) is None  # ours to run
    pending = await keys.claim(ALICE, "k1", "fp-a", now=NOW + timedelta(seconds=1), ttl_s=DAY, stale_s=600)
    assert pending is not None and pending.pending and pending.fingerprint == "fp-a" and pending.user_id == "alice"
    await keys.complete(ALICE, "k1", "fp-a", 201, b'{"id": "mem_1"}', "application/json")
    done = await keys.claim(ALICE, "k1", "fp-a", now=NOW + timedelta(hours=1), ttl_s=DAY, stale_s=600)
    assert done is not None and not done.pending
    assert (done.status, done.body, done.content_type) == (201, b'{"id": "mem_1"}', "application/json")
    assert done.expires_at == NOW + timedelta(days=1) and done.created_at == NOW
    other = await keys.claim(BOB, "k1", "fp-b", now=NOW + timedelta(hours=1), ttl_s=DAY, stale_s=600)
    assert other is not None and other.fingerprint == "fp-a"  # another request under that key: the caller refuses
    assert await keys.claim(ELSEWHERE, "k1", "fp-a", now=NOW, ttl_s=DAY, stale_s=600) is None  # tenants apart


async def test_a_released_or_abandoned_claim_can_be_taken_again(store: Store) -> None:
    keys = store.idempotency
    assert await keys.claim(ALICE, "k2", "fp-a", now=NOW, ttl_s=DAY, stale_s=600) is None
    await keys.release(ALICE, "k2", "fp-a")
    assert await keys.claim(ALICE, "k2", "fp-a", now=NOW, ttl_s=DAY, stale_s=600) is None
    later = NOW + timedelta(seconds=601)  # still unanswered: the process that claimed it died
    stranger = await keys.claim(ALICE, "k2", "fp-other", now=later, ttl_s=DAY, stale_s=600)
    assert stranger is not None and stranger.pending  # only the same request takes an abandoned claim over
    assert await keys.claim(ALICE, "k2", "fp-a", now=later, ttl_s=DAY, stale_s=600) is None
    await keys.complete(ALICE, "k2", "fp-a", 200, b"{}", "application/json")
    await keys.release(ALICE, "k2", "fp-a")  # an answered claim is not released
    assert (await keys.claim(ALICE, "k2", "fp-a", now=later, ttl_s=DAY, stale_s=600)) is not None


async def test_an_answered_record_is_taken_only_when_asked(store: Store) -> None:
    """``take_answered``: the key is a turn (one request at a time, :mod:`memstack.server.single_flight`), so a done
    request's record is free for the next, whichever it is; one in flight is not."""
    keys = store.idempotency
    assert await keys.claim(ALICE, "turn", "fp-a", now=NOW, ttl_s=600, stale_s=600, take_answered=True) is None
    busy = await keys.claim(ALICE, "turn", "fp-b", now=NOW, ttl_s=600, stale_s=600, take_answered=True)
    assert busy is not None and busy.pending and busy.fingerprint == "fp-a"  # in flight: not taken
    await keys.complete(ALICE, "turn", "fp-a", 200, b"{}", "application/json")
    answered = await keys.claim(ALICE, "turn", "fp-a", now=NOW, ttl_s=600, stale_s=600)
    assert answered is not None and answered.status == 200  # without take_answered: the answer, to replay
    assert await keys.claim(ALICE, "turn", "fp-b", now=NOW, ttl_s=600, stale_s=600, take_answered=True) is None
    taken = await keys.claim(ALICE, "turn", "fp-a", now=NOW, ttl_s=600, stale_s=600)
    assert taken is not None and taken.pending and taken.fingerprint == "fp-b"


async def test_expired_records_are_taken_over_and_swept(store: Store) -> None:
    keys = store.idempotency
    for key in ("old", "new"):
        assert await keys.claim(ALICE, key, "fp", now=NOW, ttl_s=60 if key == "old" else DAY, stale_s=600) is None
        await keys.complete(ALICE, key, "fp", 200, b"{}", "application/json")
    after = NOW + timedelta(minutes=5)
    assert await keys.claim(BOB, "old", "fp-b", now=after, ttl_s=DAY, stale_s=600) is None  # expired: free
    assert await keys.sweep(now=after) == 0  # "old" is bob's fresh claim now
    assert await keys.sweep(now=NOW + timedelta(days=2)) == 2
    assert await keys.claim(ALICE, "new", "fp-c", now=NOW + timedelta(days=2), ttl_s=DAY, stale_s=600) is None


async def test_concurrent_claims_from_two_processes_give_the_key_to_one(make_store: StoreFactory) -> None:
    one, two = await make_store(), await make_store()  # two stores on the same data: two processes
    for attempt in range(5):
        key = f"race-{attempt}"
        results = await asyncio.gather(
            *(s.idempotency.claim(ALICE, key, "fp", now=NOW, ttl_s=DAY, stale_s=600) for s in (one, two, one, two))
        )
        assert sum(r is None for r in results) == 1, results
