"""Whole chat turns over a real SQLite store, with the chat model, the LLM classifier and the summarizer on a scripted
OpenAI-compatible server (real HTTP): the order of DESIGN §1, the badge race, memory modes, failures."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from datetime import UTC, datetime, timedelta

import pytest

from memstack.config import TierLimits
from memstack.errors import InputError, ProviderError
from memstack.types import Category, ChatDone, ChatToken, NewMemory, TurnStatus, UpdateAction, UserRef
from memstack_testing.openai_server import RecordedRequest, Reply

from .conftest import BACKENDS, SUMMARY, Rig, memories, until

VEGETARIAN = memories(("User is vegetarian", "preference", 0.95))


@pytest.mark.parametrize("rig", BACKENDS, indirect=True)
async def test_detection_runs_beside_the_chat_call_and_phase_2_follows_the_reply(rig: Rig) -> None:
    async def classify(request: RecordedRequest) -> object:
        # Answers only once the chat call is in flight: the chat call did not wait for detection.
        await until(lambda: bool(rig.chat_requests()))
        return VEGETARIAN

    async def answer(request: RecordedRequest) -> object:
        # Answers only once detection is in flight: detection started before (and beside) the chat call.
        await until(lambda: bool(rig.classifier_requests()))
        return "Noted: plenty of vegetarian recipes coming up."

    async def summarize(request: RecordedRequest) -> object:
        await asyncio.sleep(0.3)  # a slow phase 2 that the next turn must wait for
        return SUMMARY

    rig.classify, rig.answer, rig.summarize = classify, answer, summarize
    async with rig.engine() as ms:
        first = await ms.chat("ana", "I'm vegetarian, by the way.", metadata={"timezone": "Europe/Lisbon"})
        replied = time.monotonic()
        assert first.reply == "Noted: plenty of vegetarian recipes coming up." and first.turn == 1
        assert [(u.content, u.category.value, u.action) for u in first.badge] == [
            ("User is vegetarian", "preference", UpdateAction.CREATED)
        ]
        assert not first.memory_pending and first.context_id is not None
        assert rig.times("summarizer", "in") == []  # phase 2 had not started when the reply was handed over

        second = await ms.chat("ana", "What should I cook tonight?", session_id=first.session_id)
        assert second.turn == 2 and second.session_id == first.session_id
        summarized_first, second_chat = rig.times("summarizer", "out")[0], rig.times("chat", "in")[1]
        assert second_chat >= summarized_first  # the next turn waited for the previous turn's phase 2
        assert rig.times("summarizer", "in")[0] >= replied - 0.05
        summary_request = next(r for r in rig.server.chat_requests if r.model == "summarizer")
        assert "Noted: plenty of vegetarian recipes coming up." in summary_request.text  # it summarized the reply

        context = rig.chat_requests()[1]
        assert "- (preference) User is vegetarian" in context.messages[0]["content"]  # layer 6, recalled
        assert [m["content"] for m in context.messages[1:]] == [
            "I'm vegetarian, by the way.",
            "Noted: plenty of vegetarian recipes coming up.",
            "What should I cook tonight?",
        ]  # the raw window of turn 1, then the current message
        memory_id = first.badge[0].id
        assert second.memories_used == (memory_id,)
        manifest = await ms.store.contexts.get("default", second.context_id or "", user_id="ana")
        assert f"memory:{memory_id}" in [e.source for e in manifest.entries]


async def test_the_message_is_embedded_once_per_turn(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTACK_OPENAI_BASE_URL", rig.server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    rig.classify = _reply(VEGETARIAN)
    message = "Honestly I am vegetarian these days."
    async with rig.engine(embedder="openai:text-embedding-3-small@64") as ms:
        await ms.chat("ana", message)
        await ms.wait_idle()
        inputs = [r.body["input"] for r in rig.server.embedding_requests]
        assert [i for i in inputs if message in json.dumps(i)] == [[message]]  # once, for retrieval
        assert ["User is vegetarian"] in inputs  # detection embeds its candidate, not the message

        rig.classify = None  # nothing to remember: the message (reused as its archived vector), then the reply
        ms.embedder.forget_recent()  # type: ignore[attr-defined]  # the reply is the first turn's: embedded already
        before = len(rig.server.embedding_requests)
        await ms.chat("ana", "Thanks, that helps!")
        await ms.wait_idle()
        embedded = [r.body["input"] for r in rig.server.embedding_requests[before:]]
        assert embedded == [["Thanks, that helps!"], ["Sure, happy to help."]]  # the reply: in phase 2, for recall


async def test_badge_absent_when_detection_is_slow_but_the_memory_is_saved(rig: Rig) -> None:
    async def slow(request: RecordedRequest) -> object:
        await until(lambda: bool(rig.times("summarizer", "in")))  # phase 2 began: the reply went without it
        await asyncio.sleep(0.3)
        return VEGETARIAN

    rig.classify = slow
    async with rig.engine(badge_wait_s=0.1) as ms:
        result = await ms.chat("ana", "I'm vegetarian.")
        assert result.memory_updates == () and result.badge == () and result.memory_pending
        assert await ms.count("ana") == 0
        assert await ms.wait_idle()
        assert [m.content for m in await ms.list("ana")] == ["User is vegetarian"]


async def test_nothing_to_remember_means_no_badge(rig: Rig) -> None:
    async with rig.engine() as ms:
        result = await ms.chat("ana", "What's the capital of Peru?")
        assert result.memory_updates == () and not result.memory_pending and result.upgrade_prompt is None


async def test_duplicates_and_the_tier_limit(rig: Rig) -> None:
    rig.classify = _reply(VEGETARIAN)
    async with rig.engine(tiers=TierLimits({"free": 1, "pro": None}, default_tier="free")) as ms:
        await ms.chat("ana", "I'm vegetarian.")
        again = await ms.chat("ana", "I'm vegetarian, did I say?")
        assert [u.action for u in again.memory_updates] == [UpdateAction.DUPLICATE] and again.badge == ()
        rig.classify = _reply(memories(("User has a cat", "fact", 0.9)))
        auto = await ms.chat("ana", "My cat is asleep on my keyboard.")
        assert [(u.action, u.tier, u.limit) for u in auto.memory_updates] == [(UpdateAction.DROPPED_LIMIT, "free", 1)]
        assert auto.badge == () and auto.upgrade_prompt is None  # not stored, and the reply says so
        cat = {"content": "User has a cat", "category": "fact", "confidence": 0.9, "explicit": True}
        rig.classify = _reply({"memories": [cat]})
        explicit = await ms.chat("ana", "Remember that I have a cat.")
        assert explicit.upgrade_prompt is not None and "limit" in explicit.upgrade_prompt
        pro = await ms.chat("ana", "Remember that I have a cat.", metadata={"tier": "pro"})
        assert [u.content for u in pro.badge] == ["User has a cat"] and pro.upgrade_prompt is None


@pytest.mark.parametrize("rig", BACKENDS, indirect=True)
async def test_memory_off_reads_and_writes_nothing_long_term(rig: Rig) -> None:
    rig.classify = _reply(VEGETARIAN)
    async with rig.engine() as ms:
        await ms.add("ana", "User lives in Lisbon", category="fact")
        tokyo = {"timezone": "Asia/Tokyo"}
        result = await ms.chat("ana", "I'm vegetarian. Where do I live?", memory=False, metadata=tokyo)
        await ms.wait_idle()
        assert rig.classifier_requests() == [] and result.memory_updates == () and not result.memory_enabled
        system = rig.chat_requests()[0].messages[0]["content"]
        assert "Lisbon" not in system and "What you remember about the user" not in system
        assert "time zone Asia/Tokyo" in system  # session metadata still grounds dates and times
        assert await ms.count("ana") == 1
        assert result.context_id is not None and rig.rows("session_turns") == 1  # the session itself is kept


@pytest.mark.parametrize("rig", BACKENDS, indirect=True)
async def test_temporary_chat_stores_nothing(rig: Rig) -> None:
    rig.classify = _reply(VEGETARIAN)
    async with rig.engine() as ms:
        await ms.add("ana", "User lives in Lisbon", category="fact")
        tables = ("memories", "memory_history", "sessions", "session_turns", "context_manifests", "jobs")
        before = {t: rig.rows(t) for t in tables}
        first = await ms.chat("ana", "I'm vegetarian.", temporary=True, metadata={"timezone": "America/Lima"})
        second = await ms.chat("ana", "What did I just say?", temporary=True, session_id=first.session_id)
        await ms.wait_idle()
        assert first.context_id is None and first.temporary and not first.memory_enabled
        assert second.turn == 2  # the temporary session lives in memory for its own turns
        assert "I'm vegetarian." in [m["content"] for m in rig.chat_requests()[1].messages]
        assert "time zone America/Lima" in rig.chat_requests()[0].messages[0]["content"]
        assert "Lisbon" not in rig.chat_requests()[0].messages[0]["content"]
        assert rig.classifier_requests() == []
    assert {t: rig.rows(t) for t in tables} == before


async def test_streaming_yields_tokens_then_the_result(rig: Rig) -> None:
    rig.classify = _reply(VEGETARIAN)
    rig.answer = _reply("Here are three vegetarian dinners.")
    async with rig.engine() as ms:
        events = [e async for e in ms.chat_stream("ana", "I'm vegetarian; ideas for dinner?")]
        tokens = [e.text for e in events if isinstance(e, ChatToken)]
        done = events[-1]
        assert isinstance(done, ChatDone) and len(tokens) > 3
        assert "".join(tokens) == done.result.reply == "Here are three vegetarian dinners."
        assert [u.content for u in done.result.badge] == ["User is vegetarian"]
        assert rig.chat_requests()[0].stream


async def test_a_stream_closed_early_releases_the_session(rig: Rig) -> None:
    rig.answer = _reply("one two three four five six")
    async with rig.engine() as ms:
        stream = ms.chat_stream("ana", "count for me")
        async with aclosing(stream):
            async for event in stream:
                assert isinstance(event, ChatToken)
                break
        result = await asyncio.wait_for(ms.chat("ana", "again", session_id=None), 5)
        assert result.reply == "one two three four five six"


async def test_bad_input_fails_before_any_work(rig: Rig) -> None:
    async with rig.engine() as ms:
        for message, options, match in (
            ("  ", {}, "empty"),
            ("x" * 40_000, {}, "at most 32000"),
            ("hi", {"metadata": {"timezone": "Mars/Olympus"}}, "time zone"),
            ("hi", {"agent": "nobody"}, "unknown agent"),
            ("hi", {"delegated": {"instructions": "x", "priority": 1}}, "delegated-task field"),
        ):
            with pytest.raises(InputError, match=match):
                await ms.chat("ana", message, **options)
    async with rig.engine(tiers=TierLimits.seed()) as ms:  # a tier name matters only where tiers are configured
        with pytest.raises(InputError, match="unknown tier 'gold'"):
            await ms.chat("ana", "hi", metadata={"tier": "gold"})
    assert rig.server.requests == [] and rig.rows("sessions") == 0


@pytest.mark.parametrize("rig", BACKENDS, indirect=True)
async def test_a_failed_model_call_releases_the_session_and_keeps_the_memory(rig: Rig) -> None:
    rig.classify = _reply(VEGETARIAN)
    rig.answer = _reply(Reply.error(500, "model down"))
    async with rig.engine() as ms:
        with pytest.raises(ProviderError, match="HTTP 500"):
            await ms.chat("ana", "I'm vegetarian.", session_id="s-1")
        rig.answer = None
        ok = await asyncio.wait_for(ms.chat("ana", "hello again", session_id="s-1"), 5)
        assert ok.turn == 1  # the failed turn left nothing in the session
        await ms.wait_idle()
        assert [m.content for m in await ms.list("ana")] == ["User is vegetarian"]  # the user did say it


async def test_concurrent_turns_of_one_session_run_in_order(rig: Rig) -> None:
    async with rig.engine() as ms:
        first = await ms.chat("ana", "turn one")
        turns = (ms.chat("ana", f"turn {n}", session_id=first.session_id) for n in range(2, 6))
        results = await asyncio.gather(*turns)
        assert sorted(r.turn for r in results) == [2, 3, 4, 5]
        await ms.wait_idle()
    assert rig.rows("session_turns") == 5


def _reply(value: object) -> Callable[[RecordedRequest], Awaitable[object]]:
    async def fn(request: RecordedRequest) -> object:
        return value

    return fn


@pytest.mark.parametrize("rig", BACKENDS, indirect=True)
async def test_fifty_concurrent_turns_of_one_session_are_processed_in_order(rig: Rig) -> None:
    async with rig.engine(chat=False) as ms:  # the offline responder: no model time, only the turn's own work
        first = await ms.chat("ana", "message 1")
        turns = [ms.chat("ana", f"message {n}", session_id=first.session_id) for n in range(2, 51)]
        results = await asyncio.gather(*turns)
        assert [r.turn for r in results] == list(range(2, 51))  # served in arrival order
        await ms.wait_idle()
        archived = await ms.store.archive.turns(UserRef("ana"), session_id=first.session_id, limit=100)
        state = await ms.store.sessions.open(UserRef("ana"), first.session_id, create=False)
    assert [(t.turn, t.user) for t in archived] == [(n, f"message {n}") for n in range(1, 51)]
    assert all(t.status is TurnStatus.SUMMARIZED for t in archived)
    assert [t.turn for t in state.turn_log] == list(range(1, 51)) and state.turn_count == 50


async def test_layer_6_is_the_scored_recall_expired_schedules_left_out(rig: Rig) -> None:
    async with rig.engine() as ms:
        user = UserRef("ana")
        past, soon = datetime.now(UTC) - timedelta(days=1), datetime.now(UTC) + timedelta(days=3)
        for text, expires in (
            ("User's chemistry quiz was on Monday", past),
            ("User's biology quiz is on Friday", soon),
        ):
            memory = NewMemory(text, Category.SCHEDULE, expires_at=expires)
            await ms.store.memories.add(user, memory, (await ms.embedder.embed([text]))[0])
        await ms.add(user, "User owns a dog named Zygmunt", category="fact")
        result = await ms.chat(user, "When is my quiz, and how is Zygmunt?")
    system = rig.chat_requests()[0].messages[0]["content"]
    assert "biology quiz is on Friday" in system and "Zygmunt" in system
    assert "chemistry quiz was on Monday" not in system  # expired: never injected
    assert len(result.memories_used) == 2


async def test_detection_reads_the_last_exchange_of_the_session(rig: Rig) -> None:
    rig.answer = _reply("How long have you been running?")
    async with rig.engine() as ms:
        first = await ms.chat("ana", "I went for a run this morning.")
        rig.answer = None
        await ms.chat("ana", "Five years already!", session_id=first.session_id)
    second = rig.classifier_requests()[1].text
    assert "assistant: How long have you been running?" in second and "Five years already!" in second
    assert "How long have you been running?" not in rig.classifier_requests()[0].text


@pytest.mark.postgres
@pytest.mark.parametrize("rig", ["postgres"], indirect=True)
async def test_two_engines_on_one_database_serialize_a_sessions_turns(rig: Rig) -> None:
    """Two server processes sharing PostgreSQL: the session's advisory lock orders their turns."""
    async with rig.engine(chat=False) as one, rig.engine(chat=False) as two:
        first = await one.chat("ana", "turn from one")
        turns = [(one if n % 2 else two).chat("ana", f"message {n}", session_id=first.session_id) for n in range(2, 21)]
        results = await asyncio.gather(*turns)
        assert sorted(r.turn for r in results) == list(range(2, 21))
        await one.wait_idle()
        await two.wait_idle()
        state = await one.store.sessions.open(UserRef("ana"), first.session_id, create=False)
    assert [t.turn for t in state.turn_log] == list(range(1, 21)) and state.turn_count == 20
    assert rig.rows("session_turns", "status = 'summarized'") == 20
