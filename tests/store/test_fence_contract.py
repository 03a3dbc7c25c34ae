"""The erasure fence as every backend holds it (:mod:`memstack.store.fence`): each erasure gives the user a new epoch;
a write under a fence pinned before the erasure is refused (``UserErased``) and writes nothing, in the store that
erased or in another one on the same data; a fence pinned after it, or one that pins nothing, writes; an erasure's
row is forgotten a day later, when the store opens."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

import psycopg
import pytest

from memstack.errors import UserErased
from memstack.store.base import Store
from memstack.store.fence import NEVER_ERASED, Fence, fenced
from memstack.store.sqlite import SQLiteStore
from memstack.types import ArchivedTurn, NewMemory, UserRef

from .conftest import StoreFactory, Vectors
from .test_contexts import manifest

ALICE = UserRef("alice", tenant="acme")
BOB = UserRef("bob", tenant="acme")
NOW = datetime(2025, 6, 1, tzinfo=UTC)


async def _writes(store: Store, user: UserRef, vecs: Vectors, n: int) -> None:
    """One write of each kind a fenced piece of work makes."""
    await store.memories.add(user, NewMemory(f"note {n}"), vecs.one())
    held = await store.sessions.acquire(user, f"s{n}")
    try:
        await store.sessions.open(user, f"s{n}")
        await store.sessions.record(user, ArchivedTurn(f"s{n}", 1, "hi", "hello", NOW), lease=held.lease)
    finally:
        await held.release()
    await store.contexts.save(user, manifest(f"ctx_{user.user_id}_{n}"), session_id=f"s{n}")
    payload = {"tenant": user.tenant, "user_id": user.user_id}
    await store.jobs.enqueue("fenced", f"{user.user_id}/{n}", payload)
    await store.idempotency.claim(user, f"key{n}", "fp", now=NOW, ttl_s=60, stale_s=60)


async def _rows(store: Store, user: UserRef) -> int:
    return len([record async for record in store.users.export(user)])


async def test_a_write_pinned_before_an_erasure_is_refused_in_every_store(
    make_store: StoreFactory, vecs: Vectors
) -> None:
    store, other = await make_store(), await make_store()  # other: another process on the same data
    assert await store.users.epoch(ALICE) == NEVER_ERASED
    before = Fence(ALICE, await store.users.epoch(ALICE))
    await other.users.erase(ALICE)
    epoch = await store.users.epoch(ALICE)
    assert epoch != NEVER_ERASED and await store.users.epoch(BOB) == NEVER_ERASED
    for writer in (store, other):
        with fenced(before):
            with pytest.raises(UserErased):
                await writer.memories.add(ALICE, NewMemory("written back"), vecs.one())
            with pytest.raises(UserErased):
                await writer.sessions.open(ALICE, "back")
            with pytest.raises(UserErased):
                await writer.contexts.save(ALICE, manifest("ctx_back"), session_id="back")
            with pytest.raises(UserErased):
                await writer.jobs.enqueue("fenced", "back", {"tenant": "acme", "user_id": "alice"})
            with pytest.raises(UserErased):  # an acknowledged erasure is final for a kept response too
                await writer.idempotency.claim(ALICE, "back", "fp", now=NOW, ttl_s=60, stale_s=60)
    assert await _rows(store, ALICE) == 0
    with fenced(Fence(ALICE, epoch)):  # pinned after the erasure: a new user of that id
        await _writes(store, ALICE, vecs, 1)
    with fenced(Fence(ALICE, None)):  # one transaction: pins nothing
        await store.memories.add(ALICE, NewMemory("plain"), vecs.one())
    assert await _rows(store, ALICE) > 0
    await store.users.erase(ALICE)
    assert await store.users.epoch(ALICE) not in (NEVER_ERASED, epoch)  # every erasure a new one


async def test_an_erasure_is_forgotten_a_day_later_when_the_store_opens(
    make_store: StoreFactory, request: pytest.FixtureRequest
) -> None:
    store = await make_store()
    await store.users.erase(ALICE)
    assert await store.users.epoch(ALICE) != NEVER_ERASED
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.path) as conn:
            conn.execute("UPDATE user_erasures SET erased_at = erased_at - 2 * 86400")
    else:
        with psycopg.connect(str(request.getfixturevalue("postgres_url")), autocommit=True) as conn:
            conn.execute("UPDATE user_erasures SET erased_at = erased_at - interval '2 days'")
    again = await make_store()
    assert await again.users.epoch(ALICE) == NEVER_ERASED
