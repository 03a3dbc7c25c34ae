"""``store.drops`` (issue 23): automatic captures a full tier kept from being stored, counted per user, on every
backend: per user and tenant, kept across a reopen, the first time kept and the last one moved."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from memstack.types import DroppedCaptures, UserRef

from .conftest import StoreFactory

ANA = UserRef("ana", tenant="acme")
ANA_ELSEWHERE = UserRef("ana", tenant="globex")
BEN = UserRef("ben", tenant="acme")
AT = datetime(2026, 11, 25, 9, 30, tzinfo=UTC)


async def test_drops_are_counted_per_user_and_kept(make_store: StoreFactory) -> None:
    store = await make_store()
    assert await store.drops.get(ANA) == DroppedCaptures()  # a user no limit ever stopped
    await store.drops.record(ANA, at=AT)
    await store.drops.record(ANA, at=AT + timedelta(hours=2))
    await store.drops.record(BEN, at=AT)
    assert await store.drops.get(ANA) == DroppedCaptures(2, AT, AT + timedelta(hours=2))
    assert await store.drops.get(BEN) == DroppedCaptures(1, AT, AT)
    assert await store.drops.get(ANA_ELSEWHERE) == DroppedCaptures()
    await store.close()
    reopened = await make_store()
    assert (await reopened.drops.get(ANA)).count == 2


async def test_concurrent_drops_are_all_counted(make_store: StoreFactory) -> None:
    store = await make_store()
    await asyncio.gather(*(store.drops.record(ANA, at=AT + timedelta(seconds=i)) for i in range(20)))
    dropped = await store.drops.get(ANA)
    assert dropped.count == 20 and dropped.first_at is not None and dropped.last_at is not None
