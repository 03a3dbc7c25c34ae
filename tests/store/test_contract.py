"""The storage contract: every backend in ``conftest.BACKENDS`` must pass every test here unchanged."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memstack.errors import ConfigError, DimensionMismatch, InputError, LimitReached, NotFound
from memstack.store.base import CaptureDrops, MemoryIndex, MemoryStore, Store
from memstack.types import (
    MAX_CONTENT_CHARS,
    Category,
    DeletedBy,
    HistoryAction,
    Memory,
    MemoryFilter,
    MemoryPatch,
    NewMemory,
    Source,
    UserRef,
)

ALICE = UserRef("alice")
BOB = UserRef("bob")
ALICE_ELSEWHERE = UserRef("alice", tenant="other-tenant")


def _brute_top(vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    return [int(i) for i in np.argsort(-(vectors @ query), kind="stable")[:k]]


async def _add(store: Store, user: UserRef, content: str, vec: np.ndarray, **kw: object) -> Memory:
    return await store.memories.add(user, NewMemory(content, **kw), vec)  # type: ignore[arg-type]


# -- roles and basic round trips -------------------------------------------------------------------------------------


async def test_store_exposes_its_roles_and_dimension(store: Store) -> None:
    assert isinstance(store.memories, MemoryStore)
    assert isinstance(store.index, MemoryIndex)
    assert isinstance(store.drops, CaptureDrops)
    assert store.dim == 16


async def test_add_then_get_returns_every_field(store: Store, vecs) -> None:
    observed = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    expires = observed + timedelta(days=3)
    new = NewMemory(
        "Exam on Friday at 9",
        category=Category.SCHEDULE,
        source=Source.EXPLICIT,
        confidence=0.85,
        agent_id="tutor",
        observed_at=observed,
        expires_at=expires,
        source_turn_ids=("turn-1", "turn-2"),
    )
    added = await store.memories.add(ALICE, new, vecs.one())
    assert added.id and added.user_id == "alice" and added.tenant == "default"
    assert (added.content, added.category, added.source) == ("Exam on Friday at 9", Category.SCHEDULE, Source.EXPLICIT)
    assert added.confidence == pytest.approx(0.85) and added.agent_id == "tutor"
    assert added.is_active and added.deleted_by is None and added.merged_into is None
    assert added.observed_at == observed and added.expires_at == expires
    assert added.source_turn_ids == ("turn-1", "turn-2")
    assert added.created_at.tzinfo is not None and added.created_at == added.updated_at
    got = await store.memories.get(ALICE, added.id)
    assert got == added


async def test_ids_are_unique_and_count_follows_adds(store: Store, vecs) -> None:
    ids = {(await _add(store, ALICE, f"fact {i}", vecs.one())).id for i in range(5)}
    assert len(ids) == 5
    assert await store.index.count_active(ALICE) == 5
    assert await store.index.count_active(BOB) == 0


async def test_add_many_inserts_in_order_with_history(store: Store, vecs) -> None:
    batch = [NewMemory(f"imported fact {i}", category=Category.FACT) for i in range(30)]
    added = await store.memories.add_many(ALICE, batch, vecs.many(30))
    assert [m.content for m in added] == [f"imported fact {i}" for i in range(30)]
    assert len({m.id for m in added}) == 30
    assert await store.index.count_active(ALICE) == 30
    got = await store.memories.get(ALICE, added[7].id)
    assert got.content == "imported fact 7" and got.category == Category.FACT
    (event,) = await store.index.history(ALICE, added[7].id)
    assert event.action == HistoryAction.CREATE and event.actor == "system"
    assert event.before is None and event.after is not None and event.after["content"] == "imported fact 7"
    assert await store.memories.add_many(ALICE, [], vecs.many(0)) == []


# -- bad input --------------------------------------------------------------------------------------------------------


async def test_wrong_dimension_is_refused_and_nothing_is_stored(store: Store, vecs) -> None:
    with pytest.raises(DimensionMismatch) as info:
        await store.memories.add(ALICE, NewMemory("x"), np.ones(15, dtype=np.float32))
    assert info.value.expected == 16 and info.value.got == 15 and "reembed" in str(info.value)
    with pytest.raises(DimensionMismatch):
        await store.memories.add_many(ALICE, [NewMemory("a"), NewMemory("b")], np.ones((2, 8), dtype=np.float32))
    with pytest.raises(DimensionMismatch):
        await store.index.nearest(ALICE, np.ones(32, dtype=np.float32), 3)
    assert await store.index.count_active(ALICE) == 0


async def test_unknown_category_is_an_input_error(store: Store, vecs) -> None:
    with pytest.raises(InputError, match="unknown category"):
        await store.memories.add(ALICE, NewMemory("x", category="food"), vecs.one())  # type: ignore[arg-type]
    memory = await _add(store, ALICE, "x", vecs.one())
    with pytest.raises(InputError, match="unknown category"):
        await store.memories.update(ALICE, memory.id, MemoryPatch(category="food"))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="unknown category"):
        await store.index.list(ALICE, MemoryFilter(categories=("food",)))  # type: ignore[arg-type]
    assert (await store.memories.get(ALICE, memory.id)).category == Category.GENERAL


@pytest.mark.parametrize("content", ["", "   \n", "x" * (MAX_CONTENT_CHARS + 1), "y" * 100_000])
async def test_empty_or_huge_content_is_an_input_error(store: Store, content: str) -> None:
    with pytest.raises(InputError, match="content"):
        NewMemory(content)
    with pytest.raises(InputError, match="content"):
        MemoryPatch(content=content)


async def test_vectors_with_nan_or_no_direction_are_refused(store: Store) -> None:
    bad = np.full(16, np.nan, dtype=np.float32)
    with pytest.raises(InputError):
        await store.memories.add(ALICE, NewMemory("x"), bad)
    with pytest.raises(InputError):
        await store.memories.add(ALICE, NewMemory("x"), np.zeros(16, dtype=np.float32))
    assert await store.index.count_active(ALICE) == 0


async def test_unknown_or_foreign_ids_are_not_found(store: Store, vecs) -> None:
    mine = await _add(store, ALICE, "alice's secret", vecs.one())
    for user, memory_id in ((ALICE, "mem_missing"), (BOB, mine.id), (ALICE_ELSEWHERE, mine.id)):
        with pytest.raises(NotFound):
            await store.memories.get(user, memory_id)
        with pytest.raises(NotFound):
            await store.memories.update(user, memory_id, MemoryPatch(confidence=0.5))
        with pytest.raises(NotFound):
            await store.memories.forget(user, memory_id, by=DeletedBy.USER)
        with pytest.raises(NotFound):
            await store.memories.restore(user, memory_id)
        with pytest.raises(NotFound):
            await store.memories.delete(user, memory_id)
        with pytest.raises(NotFound):
            await store.index.history(user, memory_id)
    assert (await store.memories.get(ALICE, mine.id)) == mine


async def test_bad_k_and_paging_are_input_errors(store: Store, vecs) -> None:
    with pytest.raises(InputError):
        await store.index.nearest(ALICE, vecs.one(), 0)
    with pytest.raises(InputError):
        await store.index.search_text(ALICE, "x", 0)
    with pytest.raises(InputError):
        await store.index.list(ALICE, MemoryFilter(limit=0))
    with pytest.raises(InputError):
        await store.index.list(ALICE, MemoryFilter(offset=-1))


# -- scoping ---------------------------------------------------------------------------------------------------------


async def test_another_user_or_tenant_never_sees_data(store: Store, vecs) -> None:
    v = vecs.one()
    mine = await _add(store, ALICE, "I keep bees on my roof", v)
    await _add(store, BOB, "Bob keeps bees too", v)
    await _add(store, ALICE_ELSEWHERE, "bees in another tenant", v)
    assert [m.id for m in await store.index.list(ALICE)] == [mine.id]
    assert [s.memory.id for s in await store.index.nearest(ALICE, v, 10)] == [mine.id]
    assert [s.memory.id for s in await store.index.search_text(ALICE, "bees", 10)] == [mine.id]
    assert [m.content for m in await store.index.list(ALICE, MemoryFilter(text="bees"))] == [mine.content]
    assert await store.index.count_active(ALICE) == 1
    for other in (BOB, ALICE_ELSEWHERE):
        assert all(m.id != mine.id for m in await store.index.list(other))
        assert all(s.memory.id != mine.id for s in await store.index.nearest(other, v, 10))
        assert await store.index.count_active(other) == 1


# -- listing ---------------------------------------------------------------------------------------------------------


async def test_list_is_newest_first_and_pages(store: Store, vecs) -> None:
    added = [await _add(store, ALICE, f"fact number {i}", vecs.one()) for i in range(7)]
    newest_first = [m.id for m in reversed(added)]
    assert [m.id for m in await store.index.list(ALICE)] == newest_first
    page1 = await store.index.list(ALICE, MemoryFilter(limit=3))
    page2 = await store.index.list(ALICE, MemoryFilter(limit=3, offset=3))
    page3 = await store.index.list(ALICE, MemoryFilter(limit=3, offset=6))
    assert [m.id for m in page1 + page2 + page3] == newest_first


async def test_list_filters_by_category_text_agent_and_deleted(store: Store, vecs) -> None:
    pref = await _add(store, ALICE, "Prefers green tea over coffee", vecs.one(), category=Category.PREFERENCE)
    goal = await _add(store, ALICE, "Wants to run a marathon", vecs.one(), category=Category.GOAL)
    tutor = await _add(store, ALICE, "Struggles with fractions", vecs.one(), agent_id="tutor")
    coach = await _add(store, ALICE, "Runs on Tuesdays", vecs.one(), agent_id="coach", category=Category.SCHEDULE)
    gone = await _add(store, ALICE, "Used to drink coffee daily", vecs.one(), category=Category.PREFERENCE)
    await store.memories.forget(ALICE, gone.id, by=DeletedBy.USER)

    def ids(ms: list[Memory]) -> set[str]:
        return {m.id for m in ms}

    by_cat = await store.index.list(ALICE, MemoryFilter(categories=(Category.PREFERENCE, Category.GOAL)))
    assert ids(by_cat) == {pref.id, goal.id}
    assert ids(await store.index.list(ALICE, MemoryFilter(text="coffee"))) == {pref.id}
    assert ids(await store.index.list(ALICE, MemoryFilter(text="coffee", include_deleted=True))) == {pref.id, gone.id}
    assert ids(await store.index.list(ALICE, MemoryFilter(text="tea coffee"))) == {pref.id}  # every word must match
    assert await store.index.list(ALICE, MemoryFilter(text="submarine")) == []
    # an agent sees its own memories plus the user's shared ones, never another agent's
    assert ids(await store.index.list(ALICE, MemoryFilter(agent_id="tutor"))) == {pref.id, goal.id, tutor.id}
    assert coach.id not in ids(await store.index.list(ALICE, MemoryFilter(agent_id="tutor")))
    everything = await store.index.list(ALICE, MemoryFilter(include_deleted=True))
    assert ids(everything) == {pref.id, goal.id, tutor.id, coach.id, gone.id}
    assert next(m for m in everything if m.id == gone.id).deleted_by == DeletedBy.USER


async def test_text_filters_treat_search_syntax_as_words(store: Store, vecs) -> None:
    memory = await _add(store, ALICE, 'Likes the band "Nearby" and logic-gates', vecs.one())
    for query in ('"nearby"', "band*", "(logic", "gates)", "logic-gates", "band: NEARBY", "'band'"):
        found = await store.index.list(ALICE, MemoryFilter(text=query))
        assert [m.id for m in found] == [memory.id], query
    assert await store.index.list(ALICE, MemoryFilter(text="?!")) == []
    assert await store.index.search_text(ALICE, "***", 5) == []


# -- vector search ---------------------------------------------------------------------------------------------------


async def test_nearest_is_exact_top_k_best_first(store: Store, vecs) -> None:
    matrix = vecs.many(60)
    added = await store.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(60)], matrix)
    await store.memories.add_many(BOB, [NewMemory(f"bob {i}") for i in range(20)], vecs.many(20))
    for _ in range(8):  # repeated: a backend that switches plan after a few runs must still return k
        query = vecs.one()
        hits = await store.index.nearest(ALICE, query, 10)
        assert len(hits) == 10
        assert [h.memory.id for h in hits] == [added[i].id for i in _brute_top(matrix, query, 10)]
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        assert scores[0] == pytest.approx(float(np.max(matrix @ query)), abs=1e-4)
        assert all(h.memory.user_id == "alice" and h.memory.is_active for h in hits)


async def test_nearest_returns_all_when_fewer_than_k(store: Store, vecs) -> None:
    await store.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(3)], vecs.many(3))
    assert len(await store.index.nearest(ALICE, vecs.one(), 10)) == 3
    assert await store.index.nearest(BOB, vecs.one(), 10) == []


async def test_nearest_with_filters_returns_exactly_min_k_matching(store: Store, vecs) -> None:
    matrix = vecs.many(80)
    cats = [Category.PREFERENCE if i % 4 == 0 else Category.FACT for i in range(80)]  # 20 preferences
    agents = ["tutor" if i % 5 == 0 else ("coach" if i % 5 == 1 else None) for i in range(80)]
    batch = [NewMemory(f"m{i}", category=cats[i], agent_id=agents[i]) for i in range(80)]
    added = await store.memories.add_many(ALICE, batch, matrix)
    for _ in range(6):
        query = vecs.one()
        prefs = await store.index.nearest(ALICE, query, 10, MemoryFilter(categories=(Category.PREFERENCE,)))
        want = [i for i in _brute_top(matrix, query, 80) if cats[i] == Category.PREFERENCE][:10]
        assert [h.memory.id for h in prefs] == [added[i].id for i in want]
        few = await store.index.nearest(ALICE, query, 50, MemoryFilter(categories=(Category.PREFERENCE,)))
        assert len(few) == 20
        tutor = await store.index.nearest(ALICE, query, 10, MemoryFilter(agent_id="tutor"))
        want = [i for i in _brute_top(matrix, query, 80) if agents[i] in (None, "tutor")][:10]
        assert [h.memory.id for h in tutor] == [added[i].id for i in want]
    none = await store.index.nearest(ALICE, vecs.one(), 5, MemoryFilter(categories=(Category.LEARNINGSTYLE,)))
    assert none == []


async def test_nearest_skips_forgotten_and_deleted(store: Store, vecs) -> None:
    v = vecs.one()
    closest = await _add(store, ALICE, "closest", v)
    second = await _add(store, ALICE, "second", vecs.near(v, 0.2))
    third = await _add(store, ALICE, "third", vecs.near(v, 0.6))
    assert [h.memory.id for h in await store.index.nearest(ALICE, v, 2)] == [closest.id, second.id]
    await store.memories.forget(ALICE, closest.id, by=DeletedBy.AI)
    assert [h.memory.id for h in await store.index.nearest(ALICE, v, 2)] == [second.id, third.id]
    await store.memories.delete(ALICE, second.id)
    assert [h.memory.id for h in await store.index.nearest(ALICE, v, 2)] == [third.id]
    await store.memories.restore(ALICE, closest.id)
    assert [h.memory.id for h in await store.index.nearest(ALICE, v, 2)] == [closest.id, third.id]


async def test_nearest_sees_new_and_reembedded_memories(store: Store, vecs) -> None:
    await store.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(20)], vecs.many(20))
    q = vecs.one()
    await store.index.nearest(ALICE, q, 5)  # warm whatever the backend caches
    new = await _add(store, ALICE, "brand new", q)
    assert (await store.index.nearest(ALICE, q, 1))[0].memory.id == new.id
    moved = vecs.one()
    await store.memories.update(ALICE, new.id, MemoryPatch(content="moved elsewhere"), moved)
    top = (await store.index.nearest(ALICE, moved, 1))[0]
    assert top.memory.id == new.id and top.memory.content == "moved elsewhere"
    assert top.score == pytest.approx(1.0, abs=1e-4)
    await store.memories.update(ALICE, new.id, MemoryPatch(category=Category.GOAL))
    goals = await store.index.nearest(ALICE, q, 5, MemoryFilter(categories=(Category.GOAL,)))
    assert [h.memory.id for h in goals] == [new.id] and goals[0].memory.category == Category.GOAL


async def test_cosine_ignores_vector_length(store: Store, vecs) -> None:
    v = vecs.one()
    memory = await store.memories.add(ALICE, NewMemory("scaled"), v * 7.5)
    (hit,) = await store.index.nearest(ALICE, v * 0.1, 1)
    assert hit.memory.id == memory.id and hit.score == pytest.approx(1.0, abs=1e-4)


async def test_finite_vectors_too_large_to_square_keep_their_direction(store: Store, vecs) -> None:
    v = vecs.one()
    huge = v / np.abs(v).max() * np.float32(1e30)  # squaring these overflows float32
    (one,) = await store.memories.add_many(ALICE, [NewMemory("huge")], huge[None, :])
    (hit,) = await store.index.nearest(ALICE, huge, 1)
    assert hit.memory.id == one.id and hit.score == pytest.approx(1.0, abs=1e-4)


# -- text search -----------------------------------------------------------------------------------------------------


async def test_search_text_ranks_matches_and_skips_forgotten(store: Store, vecs) -> None:
    both = await _add(store, ALICE, "Allergic to peanuts and to shellfish", vecs.one())
    one = await _add(store, ALICE, "Peanuts are a favourite snack of the dog", vecs.one())
    await _add(store, ALICE, "Lives in Lisbon", vecs.one())
    gone = await _add(store, ALICE, "Shellfish allergy test was negative", vecs.one())
    await store.memories.forget(ALICE, gone.id, by=DeletedBy.AI)
    hits = await store.index.search_text(ALICE, "peanuts shellfish", 10)
    assert [h.memory.id for h in hits] == [both.id, one.id]
    assert hits[0].score > hits[1].score
    assert len(await store.index.search_text(ALICE, "peanuts shellfish", 1)) == 1


# -- changes and their history ----------------------------------------------------------------------------------------


async def test_update_records_before_and_after(store: Store, vecs) -> None:
    memory = await _add(store, ALICE, "Loves spicy food", vecs.one(), category=Category.PREFERENCE)
    changed = await store.memories.update(
        ALICE,
        memory.id,
        MemoryPatch(content="Hates spicy food", confidence=0.9),
        vecs.one(),
        action=HistoryAction.SUPERSEDE,
        actor="ai",
        note="contradicted in turn 4",
    )
    assert changed.content == "Hates spicy food" and changed.confidence == pytest.approx(0.9)
    assert changed.updated_at >= memory.updated_at and changed.created_at == memory.created_at
    assert await store.memories.get(ALICE, memory.id) == changed
    create, supersede = await store.index.history(ALICE, memory.id)
    assert create.action == HistoryAction.CREATE and supersede.action == HistoryAction.SUPERSEDE
    assert supersede.before is not None and supersede.after is not None
    assert supersede.before["content"] == "Loves spicy food" and supersede.after["content"] == "Hates spicy food"
    assert supersede.actor == "ai" and supersede.note == "contradicted in turn 4"
    assert create.at <= supersede.at and create.id < supersede.id
    # the new text is what text search finds now
    assert [h.memory.id for h in await store.index.search_text(ALICE, "hates", 5)] == [memory.id]
    assert await store.index.search_text(ALICE, "loves", 5) == []


async def test_content_change_without_embedding_changes_nothing(store: Store, vecs) -> None:
    memory = await _add(store, ALICE, "Original", vecs.one())
    with pytest.raises(InputError, match="embedding"):
        await store.memories.update(ALICE, memory.id, MemoryPatch(content="Changed"))
    assert await store.memories.get(ALICE, memory.id) == memory
    assert len(await store.index.history(ALICE, memory.id)) == 1
    with pytest.raises(InputError):
        await store.memories.update(ALICE, memory.id, MemoryPatch(confidence=1.5))
    with pytest.raises(InputError):
        await store.memories.update(ALICE, memory.id, MemoryPatch(), action=HistoryAction.DELETE)


async def test_forget_restore_and_their_history(store: Store, vecs) -> None:
    memory = await _add(store, ALICE, "Prefers mornings", vecs.one())
    forgotten = await store.memories.forget(ALICE, memory.id, by=DeletedBy.AI, note="user asked")
    assert not forgotten.is_active and forgotten.deleted_by == DeletedBy.AI
    assert await store.index.count_active(ALICE) == 0
    assert await store.index.list(ALICE) == []
    with pytest.raises(InputError, match="already forgotten"):
        await store.memories.forget(ALICE, memory.id, by=DeletedBy.AI)
    restored = await store.memories.restore(ALICE, memory.id)
    assert restored.is_active and restored.deleted_by is None and restored.content == memory.content
    assert await store.index.count_active(ALICE) == 1
    with pytest.raises(InputError, match="active"):
        await store.memories.restore(ALICE, memory.id)
    events = await store.index.history(ALICE, memory.id)
    assert [e.action for e in events] == [HistoryAction.CREATE, HistoryAction.FORGET, HistoryAction.RESTORE]
    assert events[1].actor == "ai" and events[1].note == "user asked"
    assert events[1].before is not None and events[1].before["is_active"] is True
    assert events[1].after is not None and events[1].after["is_active"] is False
    assert events[1].after["deleted_by"] == "ai"


async def test_forget_and_restore_return_the_memory_as_get_reads_it(store: Store, vecs) -> None:
    """What a forget or a restore returns is the stored memory, its embedding included, as ``get`` reads it."""
    memory = await _add(store, ALICE, "Reads before bed", vecs.one())
    stored = (await store.memories.get(ALICE, memory.id)).embedding
    assert stored is not None
    forgotten = await store.memories.forget(ALICE, memory.id, by=DeletedBy.USER)
    assert forgotten.embedding is not None and np.allclose(forgotten.embedding, stored, atol=1e-6)
    restored = await store.memories.restore(ALICE, memory.id)
    assert restored.embedding is not None and np.allclose(restored.embedding, stored, atol=1e-6)


async def test_restore_refuses_a_negative_limit(store: Store, vecs) -> None:
    memory = await _add(store, ALICE, "Plays chess", vecs.one())
    await store.memories.forget(ALICE, memory.id, by=DeletedBy.USER)
    with pytest.raises(InputError, match="limit must be zero or more"):
        await store.memories.restore(ALICE, memory.id, limit=-1)
    assert not (await store.memories.get(ALICE, memory.id)).is_active


async def test_merge_records_where_a_memory_went(store: Store, vecs) -> None:
    a = await _add(store, ALICE, "Studies for the MCAT", vecs.one())
    b = await _add(store, ALICE, "MCAT is in June", vecs.one())
    merged = await store.memories.add(
        ALICE, NewMemory("Studies for the MCAT, which is in June", source=Source.CONSOLIDATED), vecs.one()
    )
    with pytest.raises(NotFound):
        await store.memories.forget(ALICE, a.id, by=DeletedBy.AI, merged_into="mem_missing")
    with pytest.raises(InputError):
        await store.memories.forget(ALICE, a.id, by=DeletedBy.AI, merged_into=a.id)
    assert (await store.memories.get(ALICE, a.id)).is_active  # the failed merges changed nothing
    for original in (a, b):
        gone = await store.memories.forget(ALICE, original.id, by=DeletedBy.AI, merged_into=merged.id)
        assert gone.merged_into == merged.id and not gone.is_active
        assert (await store.index.history(ALICE, original.id))[-1].action == HistoryAction.MERGE
    assert [m.id for m in await store.index.list(ALICE)] == [merged.id]


async def test_permanent_delete_leaves_only_history(store: Store, vecs) -> None:
    v = vecs.one()
    memory = await _add(store, ALICE, "Has a cat called Miso", v)
    keep = await _add(store, ALICE, "Has a dog called Rex", vecs.one())
    await store.memories.delete(ALICE, memory.id)
    with pytest.raises(NotFound):
        await store.memories.get(ALICE, memory.id)
    with pytest.raises(NotFound):
        await store.memories.delete(ALICE, memory.id)
    assert [m.id for m in await store.index.list(ALICE, MemoryFilter(include_deleted=True))] == [keep.id]
    assert await store.index.search_text(ALICE, "Miso", 5) == []
    assert all(h.memory.id != memory.id for h in await store.index.nearest(ALICE, v, 5))
    create, delete = await store.index.history(ALICE, memory.id)
    assert (create.action, delete.action) == (HistoryAction.CREATE, HistoryAction.DELETE)
    assert delete.before is not None and delete.before["content"] == "Has a cat called Miso" and delete.after is None


async def test_forgotten_memories_can_be_deleted_for_good(store: Store, vecs) -> None:
    memory = await _add(store, ALICE, "temporary", vecs.one())
    await store.memories.forget(ALICE, memory.id, by=DeletedBy.AI)
    await store.memories.delete(ALICE, memory.id)
    assert await store.index.list(ALICE, MemoryFilter(include_deleted=True)) == []
    assert [e.action for e in await store.index.history(ALICE, memory.id)][-1] == HistoryAction.DELETE


# -- tier limit ------------------------------------------------------------------------------------------------------


async def test_limit_refuses_the_add_past_it(store: Store, vecs) -> None:
    for i in range(3):
        await store.memories.add(ALICE, NewMemory(f"fact {i}"), vecs.one(), limit=3)
    with pytest.raises(LimitReached) as info:
        await store.memories.add(ALICE, NewMemory("one too many"), vecs.one(), limit=3)
    assert info.value.limit == 3
    assert await store.index.count_active(ALICE) == 3
    assert await store.memories.add(BOB, NewMemory("bob is not full"), vecs.one(), limit=3)
    with pytest.raises(LimitReached):
        await store.memories.add(ALICE, NewMemory("zero allowed"), vecs.one(), limit=0)
    assert await store.memories.add(ALICE, NewMemory("no limit given"), vecs.one())


async def test_limit_holds_under_concurrent_adds(store: Store, vecs) -> None:
    results = await asyncio.gather(
        *(store.memories.add(ALICE, NewMemory(f"racing {i}"), vecs.one(), limit=5) for i in range(20)),
        return_exceptions=True,
    )
    stored = [r for r in results if isinstance(r, Memory)]
    refused = [r for r in results if isinstance(r, LimitReached)]
    assert len(stored) == 5 and len(refused) == 15
    assert await store.index.count_active(ALICE) == 5
    assert {m.id for m in await store.index.list(ALICE)} == {m.id for m in stored}


async def test_forgotten_memories_free_the_limit_and_restore_respects_it(store: Store, vecs) -> None:
    first = await store.memories.add(ALICE, NewMemory("first"), vecs.one(), limit=2)
    await store.memories.add(ALICE, NewMemory("second"), vecs.one(), limit=2)
    await store.memories.forget(ALICE, first.id, by=DeletedBy.USER)
    await store.memories.add(ALICE, NewMemory("third"), vecs.one(), limit=2)
    with pytest.raises(LimitReached):
        await store.memories.restore(ALICE, first.id, limit=2)
    assert not (await store.memories.get(ALICE, first.id)).is_active
    assert [e.action for e in await store.index.history(ALICE, first.id)][-1] == HistoryAction.FORGET


# -- failed writes and persistence -----------------------------------------------------------------------------------


async def test_failed_bulk_insert_stores_nothing(store: Store, vecs) -> None:
    await _add(store, ALICE, "already here", vecs.one())
    batch = [NewMemory("fine"), NewMemory("bad", category="nonsense"), NewMemory("also fine")]  # type: ignore[arg-type]
    with pytest.raises(InputError):
        await store.memories.add_many(ALICE, batch, vecs.many(3))
    with pytest.raises(InputError):
        await store.memories.add_many(ALICE, [NewMemory("a"), NewMemory("b")], vecs.many(3))
    assert [m.content for m in await store.index.list(ALICE, MemoryFilter(include_deleted=True))] == ["already here"]
    assert await store.index.search_text(ALICE, "fine", 5) == []


async def test_data_survives_reopening(make_store, vecs) -> None:
    store = await make_store()
    v = vecs.one()
    memory = await _add(store, ALICE, "Remember me", v)
    await store.memories.forget(ALICE, memory.id, by=DeletedBy.AI)
    await store.close()
    again = await make_store()
    got = await again.memories.get(ALICE, memory.id)
    assert got.content == "Remember me" and not got.is_active
    assert [e.action for e in await again.index.history(ALICE, memory.id)] == [
        HistoryAction.CREATE,
        HistoryAction.FORGET,
    ]
    await again.memories.restore(ALICE, memory.id)
    assert (await again.index.nearest(ALICE, v, 1))[0].memory.id == memory.id


async def test_opening_with_another_embedding_model_says_to_reembed(make_store, vecs) -> None:
    store = await make_store()
    await _add(store, ALICE, "stored with the first model", vecs.one())
    await store.close()
    with pytest.raises(ConfigError, match="memstack reembed"):
        await make_store(embedder="test:another-model")
    with pytest.raises(ConfigError, match="memstack reembed"):
        await make_store(dim=32)
    again = await make_store()
    assert await again.index.count_active(ALICE) == 1


async def test_a_second_store_on_the_same_data_sees_writes(make_store, vecs) -> None:
    """Two stores on one database (as two processes would have): each sees the other's commits."""
    first = await make_store()
    second = await make_store()
    matrix = vecs.many(30)
    added = await first.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(30)], matrix)
    q = vecs.one()
    assert len(await second.index.nearest(ALICE, q, 5)) == 5  # the second store warms its caches
    newest = await _add(first, ALICE, "written by the first store", q)
    assert (await second.index.nearest(ALICE, q, 1))[0].memory.id == newest.id
    top = _brute_top(matrix, q, 1)[0]
    await first.memories.delete(ALICE, newest.id)
    await first.memories.update(ALICE, added[top].id, MemoryPatch(content="edited by the first store"), matrix[top])
    (hit,) = await second.index.nearest(ALICE, q, 1)
    assert hit.memory.id == added[top].id and hit.memory.content == "edited by the first store"
    await first.memories.forget(ALICE, added[top].id, by=DeletedBy.USER)
    assert all(h.memory.id != added[top].id for h in await second.index.nearest(ALICE, q, 30))
    assert await second.index.count_active(ALICE) == 29
