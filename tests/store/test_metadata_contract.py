"""Metadata on memories (``memories.metadata``: migration ``020_memory_metadata`` / ``0021_memory_metadata``), held to
one contract on every backend: stored and returned as given, replaced by an update and recorded in the history,
exported with the user, and filtered in ``list`` and ``nearest`` by exact match on top-level keys with the same JSON
types everywhere (numbers by value, ``true`` no number, ``null`` a key stored as null)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from memstack.errors import InputError
from memstack.store.base import Store
from memstack.store.postgres import PostgresStore
from memstack.store.sqlite import SQLiteStore
from memstack.types import Memory, MemoryFilter, MemoryPatch, NewMemory, UserRef

from .conftest import DIM, EMBEDDER, StoreFactory, Vectors

ALICE = UserRef("alice")
BOB = UserRef("bob")

#: One memory per metadata, each named by its content.
KINDS = {
    "apollo": {"project": "apollo", "n": 1, "team": {"lead": "ana"}},
    "apollo-float": {"project": "apollo", "n": 1.0},
    "gemini": {"project": "gemini", "n": "1", "flag": True},
    "flag-false": {"project": "gemini", "flag": False},
    "null": {"project": None},
    "one-as-bool": {"n": True},
    "plain": {},
}


async def _fill(store: Store, vecs: Vectors) -> dict[str, Memory]:
    out = {}
    for name, metadata in KINDS.items():
        out[name] = await store.memories.add(ALICE, NewMemory(name, metadata=metadata), vecs.one())
    await store.memories.add(BOB, NewMemory("bob's apollo", metadata={"project": "apollo"}), vecs.one())
    return out


async def _listed(store: Store, metadata: dict[str, object], **kw: object) -> set[str]:
    found = await store.index.list(ALICE, MemoryFilter(metadata=metadata, **kw))  # type: ignore[arg-type]
    return {m.content for m in found}


async def _nearest(store: Store, vecs: Vectors, metadata: dict[str, object], **kw: object) -> set[str]:
    flt = MemoryFilter(metadata=metadata, **kw)  # type: ignore[arg-type]
    return {h.memory.content for h in await store.index.nearest(ALICE, vecs.one(), 20, flt)}


async def test_metadata_is_stored_and_returned_everywhere(store: Store, vecs: Vectors) -> None:
    added = await _fill(store, vecs)
    assert added["apollo"].metadata == KINDS["apollo"] and added["plain"].metadata == {}
    got = await store.memories.get(ALICE, added["apollo"].id)
    assert got == added["apollo"] and got.metadata == {"project": "apollo", "n": 1, "team": {"lead": "ana"}}
    assert {m.content: m.metadata for m in await store.index.list(ALICE)} == KINDS
    hits = await store.index.nearest(ALICE, vecs.one(), 20)
    assert {h.memory.content: h.memory.metadata for h in hits} == KINDS
    [batch] = await store.memories.add_many(ALICE, [NewMemory("bulk", metadata={"src": "import"})], vecs.many(1))
    assert (await store.memories.get(ALICE, batch.id)).metadata == {"src": "import"}


async def test_metadata_survives_a_reopen(make_store: StoreFactory, vecs: Vectors) -> None:
    store = await make_store()
    new = NewMemory("kept", metadata={"project": "apollo", "ids": [1, 2]})
    added = await store.memories.add(ALICE, new, vecs.one())
    await store.close()
    again = await make_store()
    assert (await again.memories.get(ALICE, added.id)).metadata == {"project": "apollo", "ids": [1, 2]}


async def test_list_filters_by_exact_match_on_top_level_keys(store: Store, vecs: Vectors) -> None:
    await _fill(store, vecs)
    assert await _listed(store, {"project": "apollo"}) == {"apollo", "apollo-float"}
    assert await _listed(store, {"project": "apollo", "n": 1}) == {"apollo", "apollo-float"}  # 1 == 1.0
    assert await _listed(store, {"n": 1.0}) == {"apollo", "apollo-float"}
    assert await _listed(store, {"n": "1"}) == {"gemini"}  # a string is no number
    assert await _listed(store, {"n": True}) == {"one-as-bool"}  # true is no number
    assert await _listed(store, {"flag": False}) == {"flag-false"}
    assert await _listed(store, {"project": None}) == {"null"}  # stored as null, not missing
    assert await _listed(store, {"project": "Apollo"}) == set()  # case counts
    assert await _listed(store, {"lead": "ana"}) == set()  # nested keys are not top-level keys
    assert await _listed(store, {}) == set(KINDS)  # no filter
    assert await _listed(store, {"project": "apollo"}, limit=1) in ({"apollo"}, {"apollo-float"})
    assert await _listed(store, {"project": "gemini"}, text="gemini") == {"gemini"}


async def test_nearest_filters_by_the_same_rule(store: Store, vecs: Vectors) -> None:
    await _fill(store, vecs)
    for _ in range(2):  # the second time from a warm cache where a backend keeps one
        assert await _nearest(store, vecs, {"project": "apollo"}) == {"apollo", "apollo-float"}
        assert await _nearest(store, vecs, {"n": 1}) == {"apollo", "apollo-float"}
        assert await _nearest(store, vecs, {"n": True}) == {"one-as-bool"}
        assert await _nearest(store, vecs, {"project": None}) == {"null"}
        assert await _nearest(store, vecs, {"project": "gemini", "flag": True}) == {"gemini"}
        assert await _nearest(store, vecs, {"project": "gemini"}, text="false") == {"flag-false"}
        assert await _nearest(store, vecs, {"project": "nowhere"}) == set()
    found = await store.index.nearest(ALICE, vecs.one(), 1, MemoryFilter(metadata={"project": "apollo"}))
    assert len(found) == 1 and found[0].memory.metadata["project"] == "apollo"


async def test_an_update_replaces_metadata_and_the_history_records_it(store: Store, vecs: Vectors) -> None:
    added = await store.memories.add(ALICE, NewMemory("note", metadata={"project": "apollo"}), vecs.one())
    kept = await store.memories.update(ALICE, added.id, MemoryPatch(confidence=0.5))
    assert kept.metadata == {"project": "apollo"}
    changed = await store.memories.update(ALICE, added.id, MemoryPatch(metadata={"project": "gemini"}))
    assert changed.metadata == {"project": "gemini"}
    assert (await store.memories.get(ALICE, added.id)).metadata == {"project": "gemini"}
    assert await _listed(store, {"project": "apollo"}) == set()
    assert await _nearest(store, vecs, {"project": "gemini"}) == {"note"}
    cleared = await store.memories.update(ALICE, added.id, MemoryPatch(metadata={}))
    assert cleared.metadata == {} and (await store.memories.get(ALICE, added.id)).metadata == {}
    events = await store.index.history(ALICE, added.id)
    assert [e.after["metadata"] for e in events if e.after] == [
        {"project": "apollo"}, {"project": "apollo"}, {"project": "gemini"}, {},
    ]  # fmt: skip


async def test_metadata_is_exported_with_the_user(store: Store, vecs: Vectors) -> None:
    added = await store.memories.add(ALICE, NewMemory("note", metadata={"project": "apollo", "n": 2}), vecs.one())
    plain = await store.memories.add(ALICE, NewMemory("plain"), vecs.one())
    records = [r async for r in store.users.export(ALICE) if r.kind == "memory"]
    exported = {r.data["id"]: r.data["metadata"] for r in records}
    assert exported == {added.id: {"project": "apollo", "n": 2}, plain.id: {}}


async def test_metadata_is_read_only_and_checked(store: Store, vecs: Vectors) -> None:
    added = await store.memories.add(ALICE, NewMemory("note", metadata={"project": "apollo"}), vecs.one())
    with pytest.raises(TypeError, match="read-only"):
        added.metadata["project"] = "gemini"  # type: ignore[index]
    assert (await store.memories.get(ALICE, added.id)).metadata == {"project": "apollo"}
    for bad in ({"team": {"lead": "ana"}}, {"ids": [1]}):
        with pytest.raises(InputError, match="string, number, boolean or null"):
            MemoryFilter(metadata=bad)
    with pytest.raises(InputError, match="limit is 4000"):
        NewMemory("note", metadata={"text": "x" * 5000})
    with pytest.raises(InputError, match="JSON object"):
        NewMemory("note", metadata=["project"])  # type: ignore[arg-type]


# -- a store from before metadata ------------------------------------------------------------------------------------


async def test_sqlite_file_from_before_metadata_is_migrated(tmp_path: Path, vecs: Vectors) -> None:
    path = tmp_path / "memstack.db"
    async with await SQLiteStore.open(path, dim=DIM, embedder=EMBEDDER) as store:
        old = await store.memories.add(ALICE, NewMemory("from before"), vecs.one())
    conn = sqlite3.connect(path, isolation_level=None)  # as the release before left it
    conn.execute("ALTER TABLE memories DROP COLUMN metadata")
    conn.execute("DELETE FROM _migrations WHERE name = '020_memory_metadata'")
    conn.close()
    async with await SQLiteStore.open(path, dim=DIM, embedder=EMBEDDER) as store:
        assert (await store.memories.get(ALICE, old.id)).metadata == {}
        new = await store.memories.add(ALICE, NewMemory("after", metadata={"project": "apollo"}), vecs.one())
        assert [m.id for m in await store.index.list(ALICE, MemoryFilter(metadata={"project": "apollo"}))] == [new.id]


@pytest.mark.postgres
async def test_postgres_database_from_before_metadata_is_migrated(postgres_url: str, vecs: Vectors) -> None:
    store = await PostgresStore.open(postgres_url, dim=DIM, embedder=EMBEDDER)
    try:
        old = await store.memories.add(ALICE, NewMemory("from before"), vecs.one())
    finally:
        await store.close()
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        await conn.execute("ALTER TABLE memories DROP COLUMN metadata")
        await conn.execute("DELETE FROM memstack_migrations WHERE name = '0021_memory_metadata'")
    store = await PostgresStore.open(postgres_url, dim=DIM, embedder=EMBEDDER)
    try:
        assert (await store.memories.get(ALICE, old.id)).metadata == {}
        new = await store.memories.add(ALICE, NewMemory("after", metadata={"project": "apollo"}), vecs.one())
        assert [m.id for m in await store.index.list(ALICE, MemoryFilter(metadata={"project": "apollo"}))] == [new.id]
    finally:
        await store.close()
