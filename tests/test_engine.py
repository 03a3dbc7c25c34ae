"""AsyncMemstack's memory management and the blocking Memstack wrapper, on a real SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstack import AsyncMemstack, Config, Memstack, TierLimits
from memstack.errors import ConfigError, InputError, LimitReached, NotFound
from memstack.types import Category, DeletedBy, HistoryAction, Source, UserRef


@pytest.fixture
async def ms(tmp_path: Path) -> AsyncMemstack:
    async with AsyncMemstack(home=tmp_path, embedder="hash:64") as engine:
        yield engine  # type: ignore[misc]


async def test_add_get_list_and_count(ms: AsyncMemstack) -> None:
    tea = await ms.add("alice", "Prefers green tea", category="preference")
    run = await ms.add("alice", "Training for a marathon in May", category=Category.GOAL, agent_id="coach")
    assert tea.source == Source.MANUAL and tea.category == Category.PREFERENCE and tea.tenant == "default"
    assert (await ms.get("alice", tea.id)).content == "Prefers green tea"
    assert [m.id for m in await ms.list("alice")] == [run.id, tea.id]
    assert [m.id for m in await ms.list("alice", category="goal")] == [run.id]
    assert [m.id for m in await ms.list("alice", text="tea")] == [tea.id]
    assert await ms.count("alice") == 2 and await ms.count("bob") == 0


async def test_search_ranks_by_meaning_of_the_embedder(ms: AsyncMemstack) -> None:
    await ms.add("alice", "Allergic to peanuts")
    garden = await ms.add("alice", "Grows tomatoes in the garden")
    await ms.add("bob", "Grows tomatoes too")
    hits = await ms.search("alice", "tomatoes garden", limit=5)
    assert hits[0].memory.id == garden.id and len(hits) == 2
    assert hits[0].score > hits[1].score
    with pytest.raises(InputError, match="empty"):
        await ms.search("alice", "  ")


async def test_edit_reembeds_and_records_history(ms: AsyncMemstack) -> None:
    memory = await ms.add("alice", "Lives in Porto")
    edited = await ms.edit("alice", memory.id, content="Lives in Lisbon now", category="fact")
    assert edited.content == "Lives in Lisbon now" and edited.category == Category.FACT
    assert (await ms.search("alice", "lisbon", limit=1))[0].memory.id == memory.id
    events = await ms.history("alice", memory.id)
    assert [e.action for e in events] == [HistoryAction.CREATE, HistoryAction.UPDATE]
    assert events[1].before and events[1].before["content"] == "Lives in Porto"
    with pytest.raises(InputError, match="nothing to change"):
        await ms.edit("alice", memory.id)


async def test_forget_restore_delete(ms: AsyncMemstack) -> None:
    memory = await ms.add("alice", "Has a cat named Miso")
    forgotten = await ms.forget("alice", memory.id, by="ai")
    assert forgotten.deleted_by == DeletedBy.AI and await ms.count("alice") == 0
    assert [m.id for m in await ms.list("alice", include_deleted=True)] == [memory.id]
    assert (await ms.restore("alice", memory.id)).is_active
    await ms.delete("alice", memory.id)
    with pytest.raises(NotFound):
        await ms.get("alice", memory.id)
    assert [e.action for e in await ms.history("alice", memory.id)][-1] == HistoryAction.DELETE
    with pytest.raises(InputError, match="'ai' or 'user'"):
        await ms.forget("alice", memory.id, by="robot")


async def test_tiers_limit_adds_and_restores(tmp_path: Path) -> None:
    tiers = TierLimits({"free": 2, "pro": 3, "premium": None}, default_tier="free")
    async with AsyncMemstack(home=tmp_path, embedder="hash:64", tiers=tiers) as ms:
        first = await ms.add("alice", "one")
        await ms.add("alice", "two")
        with pytest.raises(LimitReached) as full:
            await ms.add("alice", "three")
        assert full.value.tier == "free" and full.value.limit == 2 and "Upgrade" in full.value.upgrade_prompt
        await ms.add("alice", "three", tier="pro")
        await ms.forget("alice", first.id)
        await ms.add("alice", "four", tier="PRO")
        with pytest.raises(LimitReached, match="pro tier keeps at most 3"):
            await ms.restore("alice", first.id, tier="pro")
        assert (await ms.restore("alice", first.id, tier="premium")).is_active
        usage = await ms.usage("alice", tier="pro")
        assert (usage.tier, usage.active, usage.limit, usage.remaining) == ("pro", 4, 3, 0)
        assert (await ms.usage("alice", tier="premium")).remaining is None
        with pytest.raises(InputError, match="unknown tier"):
            await ms.add("alice", "five", tier="gold")


async def test_users_and_tenants_are_kept_apart(ms: AsyncMemstack) -> None:
    mine = await ms.add("alice", "secret", tenant="acme")
    with pytest.raises(NotFound):
        await ms.get("alice", mine.id)
    assert (await ms.get(UserRef("alice", "acme"), mine.id)).id == mine.id
    with pytest.raises(InputError, match="belongs to tenant"):
        await ms.get(UserRef("alice", "acme"), mine.id, tenant="other")


async def test_bad_input_is_refused_before_anything_is_stored(ms: AsyncMemstack) -> None:
    with pytest.raises(InputError, match="unknown category"):
        await ms.add("alice", "x", category="food")
    with pytest.raises(InputError, match="empty"):
        await ms.add("alice", " ")
    with pytest.raises(InputError, match="limit is 2000"):
        await ms.add("alice", "x" * 100_000)
    with pytest.raises(InputError, match="unknown source"):
        await ms.add("alice", "x", source="rumour")
    with pytest.raises(InputError):
        await ms.add("", "x")
    assert await ms.count("alice") == 0


async def test_an_engine_must_be_opened_and_models_must_match(tmp_path: Path) -> None:
    engine = AsyncMemstack(home=tmp_path, embedder="hash:64")
    with pytest.raises(ConfigError, match="not open"):
        await engine.add("alice", "x")
    async with engine:
        await engine.add("alice", "stored with hash:64")
    with pytest.raises(ConfigError, match="memstack reembed"):
        async with AsyncMemstack(home=tmp_path, embedder="hash:32"):
            pass
    with pytest.raises(ConfigError, match="either a Config or settings"):
        AsyncMemstack(Config(), home=tmp_path)


async def test_settings_fall_back_to_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTACK_HOME", str(tmp_path / "from-env"))
    monkeypatch.setenv("MEMSTACK_EMBEDDER", "hash:64")
    async with AsyncMemstack() as ms:
        await ms.add("alice", "x")
        assert ms.config.sqlite_path == tmp_path / "from-env" / "memstack.db"
    assert (tmp_path / "from-env" / "memstack.db").exists()


def test_the_blocking_wrapper_runs_the_same_methods(tmp_path: Path) -> None:
    with Memstack(home=tmp_path, embedder="hash:64") as ms:
        memory = ms.add("alice", "Prefers window seats", category="preference")
        assert ms.get("alice", memory.id) == memory
        assert [h.memory.id for h in ms.search("alice", "window seats", limit=3)] == [memory.id]
        assert ms.edit("alice", memory.id, content="Prefers aisle seats").content == "Prefers aisle seats"
        ms.forget("alice", memory.id)
        assert ms.count("alice") == 0 and ms.list("alice") == []
        ms.restore("alice", memory.id)
        assert ms.usage("alice").active == 1
        assert len(ms.history("alice", memory.id)) == 4
        with pytest.raises(NotFound):
            ms.delete("alice", "mem_missing")
        assert Memstack.add.__doc__ == AsyncMemstack.add.__doc__
    ms.close()  # closing twice is harmless


async def test_the_blocking_wrapper_works_inside_a_running_event_loop(tmp_path: Path) -> None:
    with Memstack(home=tmp_path, embedder="hash:64") as ms:
        assert ms.add("alice", "called from async code").content == "called from async code"
