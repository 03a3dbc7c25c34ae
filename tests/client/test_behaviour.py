"""The same behaviour checks on the embedded library and on the Python client against a real server (issue 14):
each test runs once per backend (``ms``: ``embedded`` or ``remote``, conftest.py), and a caller cannot tell which."""

from __future__ import annotations

from contextlib import aclosing
from datetime import UTC, datetime

import pytest

from memstack.context import SessionMeta
from memstack.errors import ImportRefused, InputError, LimitReached, NotFound
from memstack.recall import IngestMessage
from memstack.types import (
    AgentRecord,
    Category,
    ChatDone,
    ChatResult,
    ChatToken,
    DeletedBy,
    ErasureReport,
    Forgetting,
    FragmentStatus,
    HiddenKind,
    HistoryAction,
    ImportReport,
    IngestResult,
    Manifest,
    Memory,
    MemoryUsage,
    RecallItem,
    RecallKind,
    ScoredMemory,
    SessionState,
    SessionSummary,
    UpdateAction,
)

from .conftest import Backend


async def test_add_get_list_count_usage(ms: Backend, user: str) -> None:
    tea = await ms.add(user, "User prefers green tea", category="preference")
    bike = await ms.add(user, "User cycles to work", category=Category.FACT)
    assert isinstance(tea, Memory) and tea.user_id == user and tea.tenant == "default"
    assert tea.category is Category.PREFERENCE and tea.is_active and tea.deleted_by is None
    assert await ms.get(user, tea.id) == tea
    listed = await ms.list(user)
    assert [m.id for m in listed] == [bike.id, tea.id]  # newest first
    assert [m.id for m in await ms.list(user, category="fact")] == [bike.id]
    assert [m.id for m in await ms.list(user, text="green tea")] == [tea.id]
    assert [m.id for m in await ms.list(user, limit=1, offset=1)] == [tea.id]
    assert await ms.count(user) == 2
    assert await ms.usage(user) == MemoryUsage("free", 2, 50)
    assert await ms.usage(user, tier="premium") == MemoryUsage("premium", 2, None)
    assert await ms.count("someone-else") == 0


async def test_an_add_of_a_memory_already_held_is_a_duplicate(ms: Backend, user: str) -> None:
    tea = await ms.add(user, "User prefers green tea", tier="tiny")
    await ms.add(user, "User cycles to work", tier="tiny")
    again = await ms.add_result(user, "user prefers green tea.", tier="tiny")  # the tier is full: still a duplicate
    assert again.duplicate and again.action is UpdateAction.DUPLICATE and again.memory == tea
    assert await ms.add(user, "User prefers green tea", tier="tiny") == tea
    forced = await ms.add_result(user, "User prefers green tea", force=True)
    assert forced.action is UpdateAction.CREATED and forced.memory.id != tea.id
    assert await ms.count(user) == 3


async def test_search_ranks_the_closest_first(ms: Backend, user: str) -> None:
    await ms.add(user, "User prefers green tea in the morning")
    await ms.add(user, "User studies physics at university", category="fact")
    hits = await ms.search(user, "green tea morning", limit=1)
    assert len(hits) == 1 and isinstance(hits[0], ScoredMemory)
    assert hits[0].memory.content == "User prefers green tea in the morning"
    assert [h.memory.category for h in await ms.search(user, "physics", category=["fact"])] == [Category.FACT]
    with pytest.raises(InputError):
        await ms.search(user, "   ")


async def test_edit_is_recorded_in_history(ms: Backend, user: str) -> None:
    memory = await ms.add(user, "User lives in Lyon")
    edited = await ms.edit(user, memory.id, content="User lives in Paris", category="fact", confidence=0.5)
    assert (edited.id, edited.content, edited.category, edited.confidence) == (
        memory.id, "User lives in Paris", Category.FACT, 0.5,
    )  # fmt: skip
    events = await ms.history(user, memory.id)
    assert [e.action for e in events] == [HistoryAction.CREATE, HistoryAction.UPDATE]
    assert events[1].before is not None and events[1].before["content"] == "User lives in Lyon"
    assert events[1].after is not None and events[1].after["content"] == "User lives in Paris"
    with pytest.raises(InputError, match="nothing to change"):
        await ms.edit(user, memory.id)


async def test_forget_restore_and_delete(ms: Backend, user: str) -> None:
    memory = await ms.add(user, "User owns a cat")
    forgotten = await ms.forget(user, memory.id)
    assert not forgotten.is_active and forgotten.deleted_by is DeletedBy.USER
    assert await ms.list(user) == [] and await ms.count(user) == 0
    assert [m.id for m in await ms.list(user, include_deleted=True)] == [memory.id]
    restored = await ms.restore(user, memory.id)
    assert restored.is_active and await ms.count(user) == 1
    assert await ms.delete(user, memory.id) is None
    with pytest.raises(NotFound) as missing:
        await ms.get(user, memory.id)
    assert (missing.value.kind, missing.value.key) == ("memory", memory.id)
    assert [e.action for e in await ms.history(user, memory.id)][-1] is HistoryAction.DELETE


async def test_typed_errors(ms: Backend, user: str) -> None:
    with pytest.raises(NotFound) as unknown:
        await ms.get(user, "no-such-memory")
    assert (unknown.value.kind, unknown.value.key) == ("memory", "no-such-memory")
    for call in (ms.edit(user, "nope", content="x"), ms.forget(user, "nope"), ms.restore(user, "nope")):
        with pytest.raises(NotFound):
            await call
    with pytest.raises(InputError):
        await ms.add(user, "")
    with pytest.raises(InputError, match="category"):
        await ms.add(user, "User likes tea", category="hobbies")
    with pytest.raises(InputError, match="tier"):
        await ms.usage(user, tier="platinum")


async def test_a_full_tier_raises_limit_reached(ms: Backend, user: str) -> None:
    first = await ms.add(user, "User likes apples", tier="tiny")
    await ms.add(user, "User likes pears", tier="tiny")
    with pytest.raises(LimitReached) as full:
        await ms.add(user, "User likes plums", tier="tiny")
    assert (full.value.tier, full.value.limit) == ("tiny", 2)
    assert "2-memory limit" in full.value.upgrade_prompt
    await ms.forget(user, first.id)
    await ms.add(user, "User likes plums", tier="tiny")
    with pytest.raises(LimitReached):
        await ms.restore(user, first.id, tier="tiny")


async def test_a_capture_a_full_tier_stops_is_reported_and_counted(ms: Backend, user: str) -> None:
    await ms.add(user, "User likes apples", tier="tiny")
    await ms.add(user, "User likes pears", tier="tiny")
    result = await ms.chat(user, "I'm vegetarian.", metadata={"tier": "tiny"})
    (update,) = result.memory_updates
    assert (update.action, update.tier, update.limit, update.id) == (UpdateAction.DROPPED_LIMIT, "tiny", 2, None)
    usage = await ms.usage(user, tier="tiny")
    assert (usage.active, usage.limit, usage.dropped) == (2, 2, 1)
    assert isinstance(usage.last_dropped_at, datetime)


async def test_chat_continue_and_end_a_session(ms: Backend, user: str) -> None:
    first = await ms.chat(user, "Hello! I am learning Spanish.")
    assert isinstance(first, ChatResult) and first.reply and first.offline
    assert first.turn == 1 and first.context_id and first.memory_enabled and not first.temporary
    second = await ms.chat(user, "What should I practise today?", session_id=first.session_id)
    assert (second.session_id, second.turn) == (first.session_id, 2)
    summary = await ms.end_session(user, first.session_id)
    assert isinstance(summary, SessionSummary)
    assert (summary.session_id, summary.user_id, summary.tenant) == (first.session_id, user, "default")
    assert summary.ended_at is not None and summary.turn_count == 2
    meta = {"timezone": "Europe/Lisbon", "local_time": datetime(2025, 3, 1, 9, 30, tzinfo=UTC), "tier": "premium"}
    with_meta = await ms.chat(user, "Good morning", metadata=meta)
    assert with_meta.turn == 1 and with_meta.session_id != first.session_id
    session = SessionMeta(local_time=datetime(2025, 3, 1, 9, 30, tzinfo=UTC), timezone="Europe/Lisbon")
    assert (await ms.chat(user, "Still there?", session_id=with_meta.session_id, metadata=session)).turn == 2
    temporary = await ms.chat(user, "Just a quick question", temporary=True, memory=False)
    assert temporary.temporary and not temporary.memory_enabled and temporary.context_id is None
    with pytest.raises(InputError):
        await ms.chat(user, "")
    with pytest.raises(NotFound):
        await ms.end_session(user, "no-such-session")


async def test_chat_stream_ends_with_the_whole_turn(ms: Backend, user: str) -> None:
    events = [event async for event in ms.chat_stream(user, "Tell me something about tea")]
    assert isinstance(events[-1], ChatDone)
    result = events[-1].result
    assert result.reply == "".join(e.text for e in events if isinstance(e, ChatToken))
    assert result.turn == 1 and result.offline


async def test_a_stream_closed_early_releases_the_session(ms: Backend, user: str) -> None:
    stream = ms.chat_stream(user, "Tell me a long story about the sea")
    async with aclosing(stream):
        first = await anext(stream)
    assert isinstance(first, ChatToken)
    sessions = (await ms.export(user))["sessions"]
    assert len(sessions) == 1  # the session was started; closing the stream let go of it
    after = await ms.chat(user, "Shorter, please", session_id=sessions[0]["id"])
    assert after.reply and after.session_id == sessions[0]["id"]


async def test_forget_everything_about_something_with_a_preview(ms: Backend, user: str) -> None:
    said = [
        {"role": "user", "content": "My cat Miso hates the vacuum"},
        {"role": "assistant", "content": "Poor Miso, try a quieter one"},
        {"role": "user", "content": "I also started learning Portuguese"},
        {"role": "assistant", "content": "Boa sorte!"},
    ]
    await ms.ingest(user, "pets", said, capture=False)
    cat = await ms.add(user, "User has a cat named Miso")
    afraid = await ms.add(user, "Miso is afraid of the vacuum")
    other = await ms.add(user, "User is learning Portuguese")
    preview = await ms.forget_about(user, "everything about my cat", dry_run=True)
    assert isinstance(preview, Forgetting) and preview.dry_run
    assert {m.id for m in preview.memories} == {cat.id, afraid.id}  # the cat, and what names it
    assert all(m.is_active for m in preview.memories) and await ms.count(user) == 3  # a preview changes nothing
    hidden = {(i.kind, i.session_id, i.turn): i for i in preview.hidden}
    assert set(hidden) == {(HiddenKind.TURN, "pets", 1), (HiddenKind.LINE, "pets", 0)}  # the exchange, the line
    assert hidden[HiddenKind.TURN, "pets", 1].text == "My cat Miso hates the vacuum"
    assert hidden[HiddenKind.TURN, "pets", 1].memory_id in {cat.id, afraid.id}
    done = await ms.forget_about(user, "everything about my cat")
    assert not done.dry_run and {m.id for m in done.memories} == {cat.id, afraid.id}
    assert all(not m.is_active and m.deleted_by is DeletedBy.USER for m in done.memories)
    assert [m.id for m in await ms.list(user)] == [other.id]
    recalled = await ms.recall(user, "Miso vacuum", limit=10)
    assert not any("Miso" in (i.text + i.context) for i in recalled)
    assert any("Portuguese" in i.text for i in await ms.recall(user, "learning Portuguese", limit=5))
    await ms.restore(user, cat.id)  # each memory comes back on its own; the exchange is still hidden by the other
    assert not any("Miso" in i.text for i in await ms.recall(user, "Miso vacuum", limit=10, kinds=["turn"]))
    await ms.restore(user, afraid.id)
    assert any("Miso" in i.text for i in await ms.recall(user, "Miso vacuum", limit=10, kinds=["turn"]))
    assert (await ms.forget_about(user, "my motorbike", dry_run=True)).memories == ()
    with pytest.raises(InputError, match="say what to forget"):
        await ms.forget_about(user, "everything about it")


async def test_ingest_then_recall(ms: Backend, user: str) -> None:
    messages = [
        {"role": "user", "content": "We are flying to Lisbon next spring", "at": "2025-01-10T09:00:00"},
        {"role": "assistant", "content": "Lovely, Lisbon is great in spring", "at": "2025-01-10T09:00:05"},
        {"role": "user", "content": "My sister Ana is coming too"},
        {"role": "assistant", "content": "Then book three seats"},
    ]
    imported = await ms.ingest(user, "trip", messages, capture=False)
    assert isinstance(imported, IngestResult)
    assert imported.session_id == "trip" and imported.turns == ("trip:1", "trip:2")
    assert imported.message_ids == ("trip:1:user", "trip:1:assistant", "trip:2:user", "trip:2:assistant")
    assert imported.summary is not None and imported.summary.ended_at is not None
    assert imported.summary.tenant == "default"
    items = await ms.recall(user, "flying to Lisbon", limit=3, kinds=["turn"])
    assert items and all(isinstance(i, RecallItem) and i.kind is RecallKind.TURN for i in items)
    assert items[0].id == "trip:1:user" and items[0].session_id == "trip" and items[0].at is not None
    assert await ms.recall(user, "Lisbon", kinds=["turn"], exclude_session="trip") == []
    more = [IngestMessage("user", "Ana prefers window seats", datetime(2025, 1, 11, 8, 0, tzinfo=UTC))]
    assert (await ms.ingest(user, "trip", more, capture=False)).turns == ("trip:3",)
    with pytest.raises(InputError):
        await ms.ingest(user, "bad", [{"role": "narrator", "content": "Once upon a time"}])


async def test_export_then_erase(ms: Backend, user: str) -> None:
    memory = await ms.add(user, "User plays the cello")
    await ms.chat(user, "I practised for an hour")
    document = await ms.export(user)
    assert (document["format"], document["tenant"], document["user_id"]) == ("memstack.user-export", "default", user)
    assert memory.id in [m["id"] for m in document["memories"]] and len(document["sessions"]) == 1
    report = await ms.erase(user)
    assert isinstance(report, ErasureReport) and (report.tenant, report.user_id) == ("default", user)
    assert report.removed["memories"] >= 1 and report.total >= 3
    assert await ms.count(user) == 0
    empty = await ms.export(user)
    assert empty["memories"] == [] and empty["sessions"] == []
    with pytest.raises(NotFound):
        await ms.get(user, memory.id)


async def test_export_erase_import(ms: Backend, user: str) -> None:
    memory = await ms.add(user, "User plays the cello")
    await ms.chat(user, "I practised for an hour")
    await ms.end_session(user, (await ms.sessions.list(user))[0].session_id)
    document = await ms.export(user)
    await ms.erase(user)
    report = await ms.import_user(document)
    assert isinstance(report, ImportReport) and (report.tenant, report.user_id) == ("default", user)
    assert report.added["memories"] == 1 and report.added["sessions"] == 1 and not report.unchanged
    assert {**await ms.export(user), "exported_at": document["exported_at"]} == document
    assert (await ms.get(user, memory.id)).content == "User plays the cello"
    again = await ms.import_user(document)
    assert again.unchanged and again.total == 0
    with pytest.raises(ImportRefused, match="version 9"):
        await ms.import_user({**document, "version": 9})
    with pytest.raises(InputError, match="globex"):  # the client refuses another tenant itself, the library too
        await ms.import_user(document, tenant="globex")


async def test_sessions_are_listed_and_read_back(ms: Backend, user: str) -> None:
    first = await ms.chat(user, "I am learning the cello.")
    await ms.chat(user, "Scales every morning.", session_id=first.session_id)
    await ms.end_session(user, first.session_id)  # waits for the turns' summaries
    later = await ms.chat(user, "A new conversation.")
    await ms.end_session(user, later.session_id)
    listed = await ms.sessions.list(user)
    assert [s.session_id for s in listed] == [later.session_id, first.session_id]
    assert all(isinstance(s, SessionSummary) and s.tenant == "default" for s in listed)
    assert (listed[1].turn_count, listed[1].ended_at is not None) == (2, True)
    assert [s.session_id for s in await ms.sessions.list(user, limit=1, offset=1)] == [first.session_id]
    state = await ms.sessions.get(user, first.session_id)
    assert isinstance(state, SessionState) and (state.session_id, state.user_id, state.tenant) == (
        first.session_id, user, "default",
    )  # fmt: skip
    assert state.turn_count == 2 and [t.turn for t in state.turn_log] == [1, 2] and state.ended_at is not None
    assert [(m.role, m.content) for m in state.raw_window] == [
        ("user", "I am learning the cello."),
        ("user", "Scales every morning."),
    ]  # fmt: skip  (the offline responder's replies are not kept)
    assert await ms.sessions.list("nobody-" + user) == []
    with pytest.raises(NotFound):
        await ms.sessions.get(user, "no-such-session")
    with pytest.raises(NotFound):
        await ms.sessions.get("someone-else", first.session_id)


async def test_contexts_are_read_back(ms: Backend, user: str) -> None:
    one = await ms.chat(user, "I keep bees on my roof.")
    two = await ms.chat(user, "How are the bees?", session_id=one.session_id)
    other = await ms.chat(user, "Another conversation.", new_session=True)
    assert one.context_id and two.context_id and other.context_id
    manifest = await ms.contexts.get(one.context_id)
    assert isinstance(manifest, Manifest) and manifest.context_id == one.context_id
    assert manifest.count(FragmentStatus.KEPT) > 0 and manifest.tokens > 0
    assert await ms.contexts.get(one.context_id, user_id=user) == manifest
    with pytest.raises(NotFound):
        await ms.contexts.get(one.context_id, user_id="someone-else")
    with pytest.raises(NotFound):
        await ms.contexts.get("ctx_missing")
    recent = await ms.contexts.recent(user)
    assert [m.context_id for m in recent] == [other.context_id, two.context_id, one.context_id]
    assert recent[-1] == manifest
    in_session = await ms.contexts.recent(user, session_id=one.session_id, limit=1)
    assert [m.context_id for m in in_session] == [two.context_id]


async def test_agents_are_stored_read_and_deleted(ms: Backend, user: str) -> None:
    name = f"tutor-{abs(hash(user)) % 10**8}-{type(ms).__name__}"
    tutor = {"core": {"identity": "You are a patient maths tutor."}, "characteristics": {"tone": "encouraging"}}
    stored = await ms.agents.put(name, tutor)
    assert isinstance(stored, AgentRecord) and (stored.tenant, stored.name) == ("default", name)
    assert stored.definition == {**tutor, "name": name}
    assert await ms.agents.get(name) == stored
    assert stored in await ms.agents.list()
    changed = await ms.agents.put(name, {**tutor, "characteristics": {"tone": "dry"}})
    assert changed.created_at == stored.created_at and changed.definition["characteristics"] == {"tone": "dry"}
    builtin = await ms.agents.get("default")
    assert builtin.name == "default" and builtin.definition["core"]["identity"]
    for bad in ({"characteristics": {"tone": "dry"}}, {**tutor, "name": "another"}, {**tutor, "colour": "blue"}):
        with pytest.raises(InputError):
            await ms.agents.put(name, bad)
    await ms.agents.delete(name)
    with pytest.raises(NotFound):
        await ms.agents.get(name)
    with pytest.raises(NotFound):
        await ms.agents.delete(name)
    assert name not in [a.name for a in await ms.agents.list()]


# -- one vocabulary: user_id, limit, metadata, min_score, the current session ------------------------------------------


async def test_every_memory_method_names_the_user_user_id(ms: Backend, user: str) -> None:
    added = await ms.add(user_id=user, content="User prefers green tea", category="preference")
    assert (await ms.add_result(user_id=user, content="User prefers green tea")).duplicate
    assert await ms.get(user_id=user, memory_id=added.id) == added
    assert [m.id for m in await ms.list(user_id=user, limit=1)] == [added.id]
    assert [h.memory.id for h in await ms.search(user_id=user, query="green tea", limit=1)] == [added.id]
    edited = await ms.edit(user_id=user, memory_id=added.id, confidence=0.5)
    assert edited.confidence == 0.5
    assert len(await ms.history(user_id=user, memory_id=added.id)) == 2
    assert await ms.count(user_id=user) == 1 and (await ms.usage(user_id=user)).active == 1
    assert (await ms.forget(user_id=user, memory_id=added.id)).is_active is False
    assert (await ms.restore(user_id=user, memory_id=added.id)).is_active
    assert (await ms.forget_about(user_id=user, query="green tea", dry_run=True)).dry_run
    assert (await ms.export(user_id=user))["user_id"] == user
    await ms.delete(user_id=user, memory_id=added.id)
    assert isinstance(await ms.erase(user_id=user), ErasureReport)
    assert await ms.recall(user_id=user, query="tea", limit=3) == []


async def test_the_old_names_user_and_k_still_work_with_a_deprecation_warning(ms: Backend, user: str) -> None:
    with pytest.warns(DeprecationWarning, match=r"add\(user=\.\.\.\) is deprecated: use user_id=") as caught:
        added = await ms.add(user=user, content="User cycles to work")  # type: ignore[call-arg]
    assert caught[0].filename == __file__  # shown where the call is, so Python shows it outside tests too
    with pytest.warns(DeprecationWarning, match=r"search\(k=\.\.\.\) is deprecated: use limit="):
        hits = await ms.search(user, "cycling", k=1)  # type: ignore[call-arg]
    assert [h.memory.id for h in hits] == [added.id]
    with pytest.warns(DeprecationWarning, match="use user_id="), pytest.warns(DeprecationWarning, match="use limit="):
        assert len(await ms.search(user=user, query="cycling", k=5)) == 1  # type: ignore[call-arg]
    with pytest.warns(DeprecationWarning, match=r"recall\(k=\.\.\.\)"):
        await ms.recall(user, "cycling", k=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="got both user= and user_id="):
        await ms.get(user_id=user, memory_id=added.id, user=user)  # type: ignore[call-arg]


async def test_metadata_is_kept_returned_filtered_and_exported(ms: Backend, user: str) -> None:
    apollo = await ms.add(user, "User writes the release notes", metadata={"project": "apollo", "sprint": 3})
    gemini = await ms.add(user, "User reviews the design docs", metadata={"project": "gemini"})
    plain = await ms.add(user, "User drinks green tea")
    assert apollo.metadata == {"project": "apollo", "sprint": 3} and plain.metadata == {}
    assert (await ms.get(user, apollo.id)).metadata == {"project": "apollo", "sprint": 3}
    assert [m.id for m in await ms.list(user, metadata={"project": "apollo"})] == [apollo.id]
    assert [m.id for m in await ms.list(user, metadata={"project": "apollo", "sprint": 3.0})] == [apollo.id]
    assert await ms.list(user, metadata={"project": "apollo", "sprint": "3"}) == []
    assert {m.id for m in await ms.list(user)} == {apollo.id, gemini.id, plain.id}
    found = await ms.search(user, "release notes", metadata={"project": "gemini"})
    assert [h.memory.id for h in found] == [gemini.id] and found[0].memory.metadata == {"project": "gemini"}
    # the same text with other metadata is another memory; with the same metadata, a duplicate
    again = await ms.add_result(user, "User writes the release notes", metadata={"project": "gemini"})
    assert again.action is UpdateAction.CREATED
    same = await ms.add_result(user, "User writes the release notes", metadata={"project": "apollo", "sprint": 3})
    assert same.duplicate and same.memory.id == apollo.id
    moved = await ms.edit(user, apollo.id, metadata={"project": "gemini"})
    assert moved.metadata == {"project": "gemini"}
    in_gemini = {m.id for m in await ms.list(user, metadata={"project": "gemini"})}
    assert in_gemini == {apollo.id, gemini.id, again.memory.id}
    exported = {m["id"]: m["metadata"] for m in (await ms.export(user))["memories"]}
    assert exported[apollo.id] == {"project": "gemini"} and exported[plain.id] == {}
    with pytest.raises(InputError, match="limit is 4000"):
        await ms.add(user, "User keeps a diary", metadata={"diary": "x" * 5000})
    with pytest.raises(InputError, match="string, number, boolean or null"):
        await ms.list(user, metadata={"project": ["apollo"]})
    with pytest.raises(InputError, match="JSON object"):
        await ms.add(user, "User keeps a diary", metadata="apollo")  # type: ignore[arg-type]


async def test_min_score_drops_weaker_results(ms: Backend, user: str) -> None:
    await ms.add(user, "User prefers green tea in the morning")
    await ms.add(user, "User studies physics at university")
    everything = await ms.search(user, "green tea in the morning", limit=5)
    assert len(everything) == 2 and all(-1.0 <= h.score <= 1.0 for h in everything)
    best = everything[0].score
    kept = await ms.search(user, "green tea in the morning", limit=5, min_score=best - 1e-6)
    assert [h.memory.id for h in kept] == [everything[0].memory.id]
    assert await ms.search(user, "green tea in the morning", min_score=min(best + 0.01, 1.0)) == []
    recalled = await ms.recall(user, "green tea", limit=5)
    assert recalled and all(item.score >= 0 for item in recalled)
    top = recalled[0].score
    assert [i.id for i in await ms.recall(user, "green tea", min_score=top)] == [recalled[0].id]
    for bad in (1.5, float("nan")):
        with pytest.raises(InputError, match="min_score"):
            await ms.search(user, "tea", min_score=bad)
    with pytest.raises(InputError, match="min_score"):
        await ms.recall(user, "tea", min_score=-0.5)


async def test_chat_without_a_session_id_continues_the_current_session(ms: Backend, user: str) -> None:
    first = await ms.chat(user, "Hello! I am learning Spanish.")
    second = await ms.chat(user, "What should I practise today?")
    assert (second.session_id, second.turn) == (first.session_id, 2)
    streamed = [e async for e in ms.chat_stream(user, "And tomorrow?")]
    assert isinstance(streamed[-1], ChatDone)
    assert (streamed[-1].result.session_id, streamed[-1].result.turn) == (first.session_id, 3)
    fresh = await ms.chat(user, "A new topic: cooking.", new_session=True)
    assert fresh.session_id != first.session_id and fresh.turn == 1
    assert (await ms.chat(user, "What should I cook?")).session_id == fresh.session_id  # the latest one
    temporary = await ms.chat(user, "Just between us", temporary=True)
    assert temporary.session_id != fresh.session_id
    await ms.end_session(user, fresh.session_id)
    after_end = await ms.chat(user, "Hello again")
    assert after_end.session_id not in (first.session_id, fresh.session_id) and after_end.turn == 1
    with pytest.raises(InputError, match="not both"):
        await ms.chat(user, "Hi", session_id=first.session_id, new_session=True)


async def test_validity_intervals_and_as_of_reads(ms: Backend, user: str) -> None:
    """A past fact (its interval over) is not current; search, list and recall ``as_of`` a time inside it find it,
    and not what is not valid yet; a time without a zone is UTC; bad intervals and far times are InputError."""
    moved = datetime(2022, 3, 1, tzinfo=UTC)
    paris = await ms.add(user, "User lives in Paris", category="fact", valid_from=datetime(2015, 1, 1), valid_to=moved)
    berlin = await ms.add(user, "User lives in Berlin", category="fact", valid_from=moved)
    assert (paris.valid_from, paris.valid_to, paris.is_active) == (datetime(2015, 1, 1, tzinfo=UTC), moved, False)
    assert (berlin.valid_from, berlin.valid_to, berlin.is_active) == (moved, None, True)
    assert [m.id for m in await ms.list(user)] == [berlin.id]
    assert [h.memory.id for h in await ms.search(user, "where does the user live")] == [berlin.id]
    then = datetime(2018, 6, 1)  # no zone: UTC
    assert [m.id for m in await ms.list(user, as_of=then)] == [paris.id]
    assert [h.memory.id for h in await ms.search(user, "where does the user live", as_of=then)] == [paris.id]
    recalled = await ms.recall(user, "where does the user live", kinds=["memory"], as_of=then)
    assert [i.id for i in recalled] == [paris.id] and recalled[0].valid_to == moved
    assert [m.id for m in await ms.list(user, as_of=datetime(2014, 1, 1, tzinfo=UTC))] == []  # neither valid yet
    with pytest.raises(InputError, match="valid_to"):
        await ms.add(user, "User lives in Rome", valid_from=moved, valid_to=datetime(2020, 1, 1, tzinfo=UTC))
    with pytest.raises(InputError, match="as_of"):
        await ms.search(user, "where does the user live", as_of=datetime(9999, 1, 1, tzinfo=UTC))
    assert [m.id for m in await ms.list(user, as_of=datetime(9000, 1, 1, tzinfo=UTC))] == [berlin.id]
    exported = await ms.export(user)
    rows = {m["id"]: m for m in exported["memories"]}
    assert rows[paris.id]["valid_to"] is not None and rows[berlin.id]["valid_to"] is None
    assert datetime.fromisoformat(rows[berlin.id]["valid_from"]) == moved
