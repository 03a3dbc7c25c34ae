"""Contract of the ``ContextStore`` role (context manifests), run against every backend."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstack.errors import InputError, NotFound
from memstack.store.base import ContextStore, Store
from memstack.types import FragmentStatus, Manifest, ManifestEntry, UserRef

ALICE = UserRef("alice", "acme")
BOB = UserRef("bob", "acme")
ALICE_ELSEWHERE = UserRef("alice", "other")
T0 = datetime(2025, 3, 14, 12, 0, tzinfo=UTC)


def manifest(context_id: str, *, at: datetime = T0, temporary: bool = False) -> Manifest:
    return Manifest(
        context_id=context_id,
        created_at=at,
        agent="assistant",
        fingerprint="f" * 64,
        model="openai:gpt-4o-mini",
        encoding="o200k_base",
        budget_tokens=16_000,
        tokens=812,
        memory_enabled=True,
        temporary=temporary,
        entries=(
            ManifestEntry("core", "agent:assistant#core", 186, FragmentStatus.KEPT),
            ManifestEntry("memory", "memory:mem_1", 10, FragmentStatus.KEPT),
            ManifestEntry(
                "memory",
                "memory:mem_2",
                14,
                FragmentStatus.QUARANTINED,
                ("override",),
                "quarantined: tries to take authority (override)",
            ),
            ManifestEntry("thread", "thread:0:user", 9, FragmentStatus.TRIMMED, (), "trimmed to fit the token budget"),
            ManifestEntry("current", "message:current", 8, FragmentStatus.KEPT),
        ),
    )


async def test_store_has_the_contexts_role(store: Store) -> None:
    assert isinstance(store.contexts, ContextStore)


async def test_saved_manifest_comes_back_whole(store: Store) -> None:
    saved = manifest("ctx_1")
    await store.contexts.save(ALICE, saved, session_id="s1")
    assert await store.contexts.get("acme", "ctx_1") == saved
    assert await store.contexts.get("acme", "ctx_1", user_id="alice") == saved


async def test_other_tenants_and_users_cannot_read_it(store: Store) -> None:
    await store.contexts.save(ALICE, manifest("ctx_1"))
    with pytest.raises(NotFound):
        await store.contexts.get("other", "ctx_1")
    with pytest.raises(NotFound):
        await store.contexts.get("acme", "ctx_1", user_id="bob")
    with pytest.raises(NotFound):
        await store.contexts.get("acme", "ctx_missing")
    assert await store.contexts.recent(ALICE_ELSEWHERE) == []
    assert await store.contexts.recent(BOB) == []


async def test_a_manifest_is_written_once(store: Store) -> None:
    await store.contexts.save(ALICE, manifest("ctx_1"))
    with pytest.raises(InputError, match="already stored"):
        await store.contexts.save(ALICE, replace(manifest("ctx_1"), tokens=1))
    assert (await store.contexts.get("acme", "ctx_1")).tokens == 812


async def test_temporary_chats_are_never_stored(store: Store) -> None:
    with pytest.raises(InputError, match="temporary chat"):
        await store.contexts.save(ALICE, manifest("ctx_tmp", temporary=True))
    with pytest.raises(NotFound):
        await store.contexts.get("acme", "ctx_tmp")


async def test_recent_is_newest_first_per_user_and_session(store: Store) -> None:
    for i in range(5):
        session = "s1" if i % 2 == 0 else "s2"
        await store.contexts.save(ALICE, manifest(f"ctx_{i}", at=T0 + timedelta(minutes=i)), session_id=session)
    await store.contexts.save(BOB, manifest("ctx_bob", at=T0 + timedelta(hours=1)))
    assert [m.context_id for m in await store.contexts.recent(ALICE)] == [f"ctx_{i}" for i in (4, 3, 2, 1, 0)]
    assert [m.context_id for m in await store.contexts.recent(ALICE, limit=2)] == ["ctx_4", "ctx_3"]
    assert [m.context_id for m in await store.contexts.recent(ALICE, session_id="s2")] == ["ctx_3", "ctx_1"]
    with pytest.raises(InputError, match="limit"):
        await store.contexts.recent(ALICE, limit=0)


async def test_bad_ids_are_input_errors(store: Store) -> None:
    with pytest.raises(InputError, match="context id"):
        await store.contexts.save(ALICE, manifest("x" * 201))
    with pytest.raises(InputError, match="session_id"):
        await store.contexts.save(ALICE, manifest("ctx_1"), session_id="")


async def test_manifests_survive_reopening(make_store: Any) -> None:
    first = await make_store()
    await first.contexts.save(ALICE, manifest("ctx_1"))
    await first.close()
    second = await make_store()
    assert (await second.contexts.get("acme", "ctx_1")).entries[2].flags == ("override",)


async def test_concurrent_saves_all_land(store: Store) -> None:
    await asyncio.gather(*(store.contexts.save(ALICE, manifest(f"ctx_{i}")) for i in range(20)))
    assert len(await store.contexts.recent(ALICE, limit=50)) == 20
