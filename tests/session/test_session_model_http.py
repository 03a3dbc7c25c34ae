"""The model summarizer over real HTTP against the scripted OpenAI-compatible server: every failure row of §7."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from memstack.session import (
    ModelSummarizer,
    OfflineSummarizer,
    Outcome,
    SessionSettings,
    SummaryRunner,
    WarningKind,
    consolidate_base_truth,
    get_summarizer,
    summarize_session,
)
from memstack.types import Exchange, Fact, TurnSummary
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

MODEL = "gpt-4o"
EX = Exchange(
    4,
    "We must keep supporting Python 3.9, so no match statements. Also the deadline is now Monday.",
    "Understood: I rewrote the parser with if/elif chains, compatible with Python 3.9.",
)
BT = (Fact("Deadline: Friday", since_turn=1), Fact("Parser: uses match statements", since_turn=2))
ANSWER = {
    "user_summary": "Must support Python 3.9, no match statements; deadline moved to Monday",
    "assistant_summary": "Rewrote the parser with if/elif chains for Python 3.9",
    "base_truth_diff": {
        "add": ["Constraint: must support Python 3.9, no match statements"],
        "update": ["Deadline: Monday", "Parser: if/elif chains"],
        "remove": [],
    },
    "hard_exceptions": ["Constraint: must support Python 3.9, no match statements"],
    "flags": [],
}


@pytest.fixture
async def server() -> AsyncIterator[ScriptedOpenAIServer]:
    async with ScriptedOpenAIServer(models=(MODEL,)) as srv:
        yield srv


def summarizer(server: ScriptedOpenAIServer, settings: SessionSettings | None = None) -> ModelSummarizer:
    return ModelSummarizer(server.chat_model(MODEL), settings)


async def test_summarizes_over_http_with_the_seed_prompt(server: ScriptedOpenAIServer) -> None:
    server.script(MODEL, Reply.json(ANSWER))
    async with summarizer(server) as s:
        result = await SummaryRunner(s).run(EX, BT)
    assert result.outcome is Outcome.SUMMARIZED and result.summarizer == f"openai:{MODEL}"
    assert [(f.text, f.hard_exception) for f in result.base_truth] == [
        ("Deadline: Monday", False),
        ("Parser: if/elif chains", False),
        ("Constraint: must support Python 3.9, no match statements", True),
    ]
    request = server.requests[0]
    assert request.model == MODEL and request.response_format == {"type": "json_object"}
    system, user = request.messages[0]["content"], request.messages[1]["content"]
    assert "first 25% of each message" in system and "user_summary: at most 25 words" in system
    assert "- Deadline: Friday" in user and "We must keep supporting Python 3.9" in user


async def test_malformed_json_is_retried_once_with_the_same_payload(server: ScriptedOpenAIServer) -> None:
    server.script(MODEL, Reply.malformed_json(), Reply.json(ANSWER))
    async with summarizer(server) as s:
        result = await SummaryRunner(s).run(EX, BT)
    assert result.outcome is Outcome.SUMMARIZED and result.attempts == 2
    assert server.requests[0].messages == server.requests[1].messages


async def test_malformed_twice_stores_raw_text_and_skips_the_diff(server: ScriptedOpenAIServer) -> None:
    server.script(MODEL, Reply.malformed_json(), Reply.json({"summary": "wrong shape"}))
    async with summarizer(server) as s:
        result = await SummaryRunner(s).run(EX, BT)
    assert result.outcome is Outcome.FALLBACK_MALFORMED and result.attempts == 2 and len(server.requests) == 2
    assert result.base_truth == BT and result.summary.user_summary.startswith("We must keep supporting Python 3.9")


async def test_timeout_falls_back_and_flags_for_a_background_retry(server: ScriptedOpenAIServer) -> None:
    settings = SessionSettings(timeout_s=0.3)
    server.script(MODEL, Reply.json(ANSWER).after(3.0), Reply.json(ANSWER))
    async with summarizer(server, settings) as s:
        runner = SummaryRunner(s, settings)
        first = await runner.run(EX, BT)
        assert first.outcome is Outcome.FALLBACK_TIMEOUT and first.unsummarized and first.base_truth == BT
        assert first.elapsed_s < 2.0
    # the background retry, with room for a slow machine (its client too): only the first call is meant to time out
    patient = SessionSettings(timeout_s=5.0)
    async with summarizer(server, patient) as s:
        retried = await SummaryRunner(s, patient).run(EX, first.base_truth)
    assert retried.outcome is Outcome.SUMMARIZED and not retried.unsummarized


@pytest.mark.parametrize("fault", [Reply.error(500, "upstream exploded"), Reply.error(429), Reply.dropped()])
async def test_endpoint_errors_fall_back_and_flag(server: ScriptedOpenAIServer, fault: Reply) -> None:
    server.script(MODEL, fault)
    async with summarizer(server) as s:
        result = await SummaryRunner(s).run(EX, BT)
    assert result.outcome is Outcome.FALLBACK_ERROR and result.unsummarized and result.attempts == 1


async def test_hallucinated_diff_entries_from_the_model_are_rejected(server: ScriptedOpenAIServer) -> None:
    bad = dict(ANSWER, base_truth_diff={"add": ["Database: Oracle 19c", "User lives in Oslo"], "update": ["X: 1"]})
    server.script(MODEL, Reply.json(bad))
    async with summarizer(server) as s:
        result = await SummaryRunner(s).run(EX, BT)
    assert result.base_truth == BT
    assert {w.entry for w in result.warnings if w.kind is WarningKind.UNSUPPORTED} == {
        "Database: Oracle 19c",
        "User lives in Oslo",
        "X: 1",
    }


async def test_consolidation_and_cross_session_line_over_http(server: ScriptedOpenAIServer) -> None:
    rule = Fact("Constraint: must support Python 3.9", True, 4)
    facts = (rule, Fact("Deadline: Friday", since_turn=1), Fact("Deadline: Monday", since_turn=4))
    server.script(
        MODEL,
        Reply.json({"facts": [{"text": "Deadline: Monday", "hard": False}]}),
        Reply.json({"line": "Kept a parser Python 3.9-compatible; deadline Monday"}),
    )
    async with summarizer(server) as s:
        merged = await consolidate_base_truth(s, facts)
        line = await summarize_session(s, [TurnSummary(4, "u", "a")], merged.facts)
    assert merged.facts == (rule, Fact("Deadline: Monday", False, 4)) and merged.restored == (rule,)
    assert "[hard] turn 4: Constraint: must support Python 3.9" in server.requests[0].messages[0]["content"]
    assert line == "Kept a parser Python 3.9-compatible; deadline Monday"


async def test_get_summarizer_picks_offline_or_a_model(server: ScriptedOpenAIServer) -> None:
    assert isinstance(get_summarizer(None), OfflineSummarizer)
    s = get_summarizer(f"openai:{MODEL}", base_url=server.base_url, api_key="sk-test")
    assert isinstance(s, ModelSummarizer) and s.name == f"openai:{MODEL}" and not s.offline
    await s.aclose()
