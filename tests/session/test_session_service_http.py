"""The session service with the model summarizer over real HTTP (the scripted OpenAI-compatible server) and a real
store: every failure row of seed 04 §7 as a user of the service sees it in the store afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from memstack.session import ModelSummarizer, SessionService, SessionSettings
from memstack.store.base import Store
from memstack.types import TurnStatus, UserRef
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

from .fakes import sqlite_only

MODEL = "gpt-4o"
ALICE = UserRef("alice")
USER = "We must keep supporting Python 3.9, so no match statements. Also the deadline is now Monday."
REPLY = "Understood: I rewrote the parser with if/elif chains, compatible with Python 3.9."
ANSWER = {
    "user_summary": "Must support Python 3.9, no match statements; deadline moved to Monday",
    "assistant_summary": "Rewrote the parser with if/elif chains for Python 3.9",
    "base_truth_diff": {
        "add": ["Constraint: must support Python 3.9, no match statements", "Invented: the user lives in Oslo"],
        "update": ["Deadline: Monday"],
        "remove": ["Parser: uses match statements"],
    },
    "hard_exceptions": ["Constraint: must support Python 3.9, no match statements"],
}
EXPECTED = [  # updates apply before adds
    ("Deadline: Monday", False),
    ("Constraint: must support Python 3.9, no match statements", True),
]


@pytest.fixture
async def server() -> AsyncIterator[ScriptedOpenAIServer]:
    async with ScriptedOpenAIServer(models=(MODEL,)) as srv:
        yield srv


async def _settled(store: Store, sid: str) -> None:
    async with asyncio.timeout(10):
        while (await store.sessions.open(ALICE, sid, create=False)).flagged_turns:
            await asyncio.sleep(0.02)


@sqlite_only
@pytest.mark.parametrize(
    ("faults", "outcome"),
    [
        ([], "summarized"),
        ([Reply.malformed_json(), Reply.json({"summary": "wrong shape"})], "fallback_malformed"),
        ([Reply.json(ANSWER).after(6.0)], "fallback_timeout"),
        ([Reply.error(503, "upstream down")], "fallback_error"),
        ([Reply.dropped()], "fallback_error"),
    ],
)
async def test_each_failure_ends_with_the_turn_summarized(
    store: Store, server: ScriptedOpenAIServer, faults: list[Reply], outcome: str
) -> None:
    settings = SessionSettings(timeout_s=2.0, retry_after_s=0.05)
    server.script(MODEL, *faults, Reply.json(ANSWER))
    async with ModelSummarizer(server.chat_model(MODEL), settings) as summarizer:
        svc = SessionService(store, summarizer, settings)
        handle = await svc.begin_turn(ALICE, "s1")
        first = await svc.finish_turn(handle, USER, REPLY)
        assert first.outcome.value == outcome
        [row] = await store.archive.turns(ALICE, session_id="s1")
        if faults:  # a raw-text fallback now, flagged; the background retry summarizes it
            assert row.status is TurnStatus.UNSUMMARIZED and first.summary.user_summary.startswith("We must keep")
            assert (await store.sessions.open(ALICE, "s1")).base_truth == ()
            await _settled(store, "s1")
        await svc.drain(5)
    state = await store.sessions.open(ALICE, "s1")
    assert [(f.text, f.hard_exception) for f in state.base_truth] == EXPECTED  # the invented fact never got in
    assert state.turn_log[0].user_summary == ANSWER["user_summary"] and not state.turn_log[0].unsummarized
    [row] = await store.archive.turns(ALICE, session_id="s1")
    assert row.status is TurnStatus.SUMMARIZED and row.attempts == (2 if faults else 1)
    assert any(f.startswith("warning: unsupported (add 'Invented") for f in row.flags)
    assert any(f.startswith("warning: unknown_remove") for f in row.flags)
    assert server.pending(MODEL) == 0
