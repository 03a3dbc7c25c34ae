"""Validity intervals (``valid_from``/``valid_to``: migration ``022_memory_validity`` / ``0023_memory_validity``) and
``as_of`` reads, held to one contract on every backend: an interval is stored and returned, one that ends before it
starts is refused, a memory whose interval is over is a past fact (not current, found by ``as_of`` reads of its
time), ``list``/``nearest``/``search_text`` given ``as_of`` see what held then and nothing not yet valid, and the
default reads are what they were (the current memories only)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from memstack.capture.supersede import supersede
from memstack.errors import InputError
from memstack.store.base import Store
from memstack.store.postgres import PostgresStore
from memstack.store.sqlite import SQLiteStore
from memstack.types import DeletedBy, MemoryFilter, MemoryPatch, NewMemory, UserRef

from .conftest import DIM, EMBEDDER, Vectors

ALICE = UserRef("alice")
BOB = UserRef("bob")


def day(year: int, month: int = 1, d: int = 1) -> datetime:
    return datetime(year, month, d, tzinfo=UTC)


async def _life(store: Store, vecs: Vectors) -> dict[str, str]:
    """Alice lived in Paris until 2022, lives in Berlin since; plans Lisbon from 2030; has a cat (since unknown)."""
    out = {}
    for name, start, end in (
        ("User lived in Paris", day(2015), day(2022, 3)),
        ("User lives in Berlin", day(2022, 3), None),
        ("User will live in Lisbon", day(2030), None),
        ("User has a cat named Miso", None, None),
    ):
        new = NewMemory(name, valid_from=start, valid_to=end)
        out[name] = (await store.memories.add(ALICE, new, vecs.one())).id
    await store.memories.add(BOB, NewMemory("User lived in Rome", valid_to=day(2020)), vecs.one())
    return out


async def _listed(store: Store, as_of: datetime | None = None, **kw: bool) -> set[str]:
    return {m.content for m in await store.index.list(ALICE, MemoryFilter(as_of=as_of, **kw))}


async def _nearest(store: Store, vecs: Vectors, as_of: datetime | None = None) -> set[str]:
    return {h.memory.content for h in await store.index.nearest(ALICE, vecs.one(), 20, MemoryFilter(as_of=as_of))}


async def test_an_interval_is_stored_and_returned(store: Store, vecs: Vectors) -> None:
    ids = await _life(store, vecs)
    berlin = await store.memories.get(ALICE, ids["User lives in Berlin"])
    assert berlin.valid_from == day(2022, 3) and berlin.valid_to is None and berlin.is_active
    paris = await store.memories.get(ALICE, ids["User lived in Paris"])
    assert (paris.valid_from, paris.valid_to, paris.is_active, paris.deleted_by) == (
        day(2015),
        day(2022, 3),
        False,
        None,
    )
    cat = await store.memories.get(ALICE, ids["User has a cat named Miso"])
    assert cat.valid_from is None and cat.valid_to is None
    [batch] = await store.memories.add_many(ALICE, [NewMemory("bulk", valid_from=day(2020))], vecs.many(1))
    assert (await store.memories.get(ALICE, batch.id)).valid_from == day(2020)


async def test_an_interval_that_ends_before_it_starts_is_refused(store: Store, vecs: Vectors) -> None:
    with pytest.raises(InputError, match="valid_to"):
        NewMemory("backwards", valid_from=day(2024), valid_to=day(2023))
    added = await store.memories.add(ALICE, NewMemory("kept", valid_from=day(2024)), vecs.one())
    with pytest.raises(InputError, match="valid_to"):
        await store.memories.update(ALICE, added.id, MemoryPatch(valid_to=day(2023)))
    assert (await store.memories.get(ALICE, added.id)).valid_to is None  # nothing changed


async def test_default_reads_see_the_current_memories_only(store: Store, vecs: Vectors) -> None:
    await _life(store, vecs)
    current = {"User lives in Berlin", "User will live in Lisbon", "User has a cat named Miso"}
    assert await _listed(store) == current
    assert await _nearest(store, vecs) == current
    assert {h.memory.content for h in await store.index.search_text(ALICE, "Paris", 10)} == set()
    assert await store.index.count_active(ALICE) == 3


async def test_as_of_reads_see_what_held_then(store: Store, vecs: Vectors) -> None:
    await _life(store, vecs)
    then = {"User lived in Paris", "User has a cat named Miso"}
    assert await _listed(store, day(2018)) == then
    assert await _nearest(store, vecs, day(2018)) == then
    assert {h.memory.content for h in await store.index.search_text(ALICE, "Paris", 10, as_of=day(2018))} == {
        "User lived in Paris"
    }
    now = {"User lives in Berlin", "User has a cat named Miso"}  # Lisbon is not valid yet
    assert await _listed(store, day(2024)) == now
    assert await _nearest(store, vecs, day(2024)) == now
    assert await _listed(store, day(2022, 3)) == now  # the end is exclusive, the start inclusive
    assert "User will live in Lisbon" in await _listed(store, day(2031))
    assert await _listed(store, day(2014)) == {"User has a cat named Miso"}  # an unknown start is open


async def test_as_of_never_finds_a_forgotten_memory(store: Store, vecs: Vectors) -> None:
    ids = await _life(store, vecs)
    await store.memories.forget(ALICE, ids["User lived in Paris"], by=DeletedBy.USER)
    await store.memories.forget(ALICE, ids["User has a cat named Miso"], by=DeletedBy.USER)
    assert await _listed(store, day(2018)) == set()
    assert await _nearest(store, vecs, day(2018)) == set()
    restored = await store.memories.restore(ALICE, ids["User lived in Paris"])  # back to a past fact, not current
    assert (restored.is_active, restored.deleted_by) == (False, None)
    assert await _listed(store, day(2018)) == {"User lived in Paris"}
    assert "User lived in Paris" not in await _listed(store)
    with pytest.raises(InputError, match="past version"):
        await store.memories.restore(ALICE, ids["User lived in Paris"])


async def test_far_times_are_read_or_refused_clearly(store: Store, vecs: Vectors) -> None:
    await _life(store, vecs)
    assert await _listed(store, datetime(9000, 1, 1, tzinfo=UTC)) == {
        "User lives in Berlin",
        "User will live in Lisbon",
        "User has a cat named Miso",
    }
    assert await _listed(store, datetime(150, 1, 1, tzinfo=UTC)) == {"User has a cat named Miso"}
    with pytest.raises(InputError, match="as_of must be a time between"):
        MemoryFilter(as_of=datetime(9999, 12, 31))
    naive = MemoryFilter(as_of=datetime(2018, 1, 1))  # a time without a zone is UTC
    assert naive.as_of == day(2018)


async def test_superseding_keeps_the_old_fact_as_a_past_version(store: Store, vecs: Vectors) -> None:
    paris = await store.memories.add(ALICE, NewMemory("User lives in Paris", valid_from=day(2015)), vecs.one())
    moved = MemoryPatch(content="User lives in Berlin")
    after = await supersede(store, ALICE, paris, moved, vecs.one(), at=day(2022, 3), actor="system", note="moved")
    assert (after.id, after.content, after.valid_from, after.is_active) == (
        paris.id,
        "User lives in Berlin",
        day(2022, 3),
        True,
    )
    assert await _listed(store) == {"User lives in Berlin"}
    assert await _listed(store, day(2018)) == {"User lives in Paris"}
    assert await _nearest(store, vecs, day(2018)) == {"User lives in Paris"}
    [past] = [m for m in await store.index.list(ALICE, MemoryFilter(include_deleted=True)) if m.id != paris.id]
    assert (past.valid_from, past.valid_to, past.is_active, past.deleted_by) == (day(2015), day(2022, 3), False, None)
    history = await store.index.history(ALICE, paris.id)
    assert history[-1].action.value == "supersede" and past.id in history[-1].note
    assert history[-1].before is not None and history[-1].before["content"] == "User lives in Paris"


# -- a store from before validity intervals ---------------------------------------------------------------------------


async def test_sqlite_file_from_before_intervals_is_migrated(tmp_path: Path, vecs: Vectors) -> None:
    path = tmp_path / "memstack.db"
    async with await SQLiteStore.open(path, dim=DIM, embedder=EMBEDDER) as store:
        old = await store.memories.add(ALICE, NewMemory("from before"), vecs.one())
    conn = sqlite3.connect(path, isolation_level=None)  # as the release before left it
    conn.execute("ALTER TABLE memories DROP COLUMN valid_from")
    conn.execute("ALTER TABLE memories DROP COLUMN valid_to")
    conn.execute("DELETE FROM _migrations WHERE name = '022_memory_validity'")
    conn.close()
    async with await SQLiteStore.open(path, dim=DIM, embedder=EMBEDDER) as store:
        kept = await store.memories.get(ALICE, old.id)
        assert (kept.valid_from, kept.valid_to, kept.content) == (None, None, "from before")
        assert [e.action.value for e in await store.index.history(ALICE, old.id)] == ["create"]
        assert [m.id for m in await store.index.list(ALICE, MemoryFilter(as_of=day(2000)))] == [old.id]


@pytest.mark.postgres
async def test_postgres_database_from_before_intervals_is_migrated(postgres_url: str, vecs: Vectors) -> None:
    store = await PostgresStore.open(postgres_url, dim=DIM, embedder=EMBEDDER)
    try:
        old = await store.memories.add(ALICE, NewMemory("from before"), vecs.one())
    finally:
        await store.close()
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        await conn.execute("ALTER TABLE memories DROP COLUMN valid_from, DROP COLUMN valid_to")
        await conn.execute("DELETE FROM memstack_migrations WHERE name = '0023_memory_validity'")
    store = await PostgresStore.open(postgres_url, dim=DIM, embedder=EMBEDDER)
    try:
        kept = await store.memories.get(ALICE, old.id)
        assert (kept.valid_from, kept.valid_to, kept.content) == (None, None, "from before")
        assert [e.action.value for e in await store.index.history(ALICE, old.id)] == ["create"]
        assert [m.id for m in await store.index.list(ALICE, MemoryFilter(as_of=day(2000)))] == [old.id]
    finally:
        await store.close()
