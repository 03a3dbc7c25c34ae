"""The failure table of seed 04 §7, row by row, through SummaryRunner."""

from __future__ import annotations

import logging

import pytest

from memstack.errors import ConfigError, MalformedResponse, ProviderError, ProviderTimeout
from memstack.session import (
    OfflineSummarizer,
    Outcome,
    SessionSettings,
    SummaryRunner,
    TurnDraft,
    WarningKind,
    summarize_session,
)
from memstack.types import BaseTruthDiff, Exchange, Fact, Route, TurnSummary

from .fakes import ScriptedSummarizer

LONG_USER = "The API must stay backwards compatible. " + "We also discussed the schema at length today. " * 25
EX = Exchange(7, LONG_USER, "I kept every public endpoint unchanged and added a v2 route for the new schema. " * 3)
BT = (Fact("Framework: FastAPI", since_turn=1),)
GOOD = TurnDraft(
    "Asked to keep the API backwards compatible",
    "Kept public endpoints, added a v2 route",
    BaseTruthDiff(
        add=("Constraint: keep the API backwards compatible",), hard=("Constraint: keep the API backwards compatible",)
    ),
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        self.now += 0.25
        return self.now


def test_default_timeout_is_eight_seconds_and_settings_validate() -> None:
    assert SessionSettings().timeout_s == 8.0
    assert SessionSettings().window == 6 and 15 <= SessionSettings().consolidate_every <= 20
    with pytest.raises(ConfigError, match="timeout_s"):
        SessionSettings(timeout_s=0)
    with pytest.raises(ConfigError, match="short_words"):
        SessionSettings(short_words=300, long_words=200)
    with pytest.raises(ConfigError, match="fraction"):
        SessionSettings(support_flag=1.5)


async def test_success_applies_the_diff_and_measures_with_the_given_clock() -> None:
    fake = ScriptedSummarizer([GOOD])
    result = await SummaryRunner(fake, clock=FakeClock()).run(EX, BT)
    assert result.outcome is Outcome.SUMMARIZED and result.attempts == 1
    assert result.summary.user_summary == GOOD.user_summary and not result.unsummarized
    assert result.base_truth[-1] == Fact("Constraint: keep the API backwards compatible", True, 7)
    assert result.elapsed_s == pytest.approx(0.25)
    assert fake.calls[0].route is Route.LONG and "preserve_raw" in result.flags


async def test_malformed_json_is_retried_once_with_the_same_payload() -> None:
    fake = ScriptedSummarizer([MalformedResponse("not JSON: 'Sure! Here is'"), GOOD])
    result = await SummaryRunner(fake).run(EX, BT)
    assert result.outcome is Outcome.SUMMARIZED and result.attempts == 2
    assert fake.calls[0] == fake.calls[1]


async def test_malformed_twice_falls_back_to_raw_text_and_skips_the_diff(caplog: pytest.LogCaptureFixture) -> None:
    fake = ScriptedSummarizer([MalformedResponse("bad"), MalformedResponse("bad again"), GOOD])
    with caplog.at_level(logging.WARNING, logger="memstack.session"):
        result = await SummaryRunner(fake).run(EX, BT)
    assert result.outcome is Outcome.FALLBACK_MALFORMED and result.attempts == 2 and len(fake.calls) == 2
    assert result.base_truth == BT and result.diff.is_empty
    assert result.summary.user_summary.startswith("The API must stay backwards compatible.")
    assert len(result.summary.user_summary.split()) == 25 and result.summary.user_summary.endswith("…")
    assert len(result.summary.assistant_summary.split()) == 30
    assert not result.unsummarized and "diff_skipped" in result.flags  # the seed retries malformed output only once
    assert "raw-text fallback" in caplog.text


async def test_empty_summaries_count_as_malformed() -> None:
    fake = ScriptedSummarizer([TurnDraft("", "x"), TurnDraft(" ", "y")])
    result = await SummaryRunner(fake).run(EX, BT)
    assert result.outcome is Outcome.FALLBACK_MALFORMED and result.attempts == 2


async def test_timeout_falls_back_and_flags_the_turn_for_a_background_retry() -> None:
    fake = ScriptedSummarizer([5.0, GOOD])
    settings = SessionSettings(timeout_s=0.05)
    result = await SummaryRunner(fake, settings).run(EX, BT)
    assert result.outcome is Outcome.FALLBACK_TIMEOUT and result.unsummarized and result.attempts == 1
    assert result.base_truth == BT and "unsummarized" in result.flags
    assert "timed out after 0.05s" in result.error
    assert result.elapsed_s < 2.0


async def test_provider_timeout_is_a_timeout_too() -> None:
    result = await SummaryRunner(ScriptedSummarizer([ProviderTimeout("read timeout")])).run(EX, BT)
    assert result.outcome is Outcome.FALLBACK_TIMEOUT and result.unsummarized


async def test_endpoint_errors_fall_back_and_are_retried_later() -> None:
    result = await SummaryRunner(ScriptedSummarizer([ProviderError("503", status=503)])).run(EX, BT)
    assert result.outcome is Outcome.FALLBACK_ERROR and result.unsummarized and result.attempts == 1


async def test_background_retry_replaces_the_fallback() -> None:
    fake = ScriptedSummarizer([ProviderTimeout("slow"), GOOD])
    runner = SummaryRunner(fake)
    first = await runner.run(EX, BT)
    moved_on = (*first.base_truth, Fact("Deadline: Friday", since_turn=8))
    retried = await runner.run(EX, moved_on)  # later, against the base truth as it is then
    assert first.unsummarized and not retried.unsummarized
    assert retried.base_truth == (*moved_on, Fact("Constraint: keep the API backwards compatible", True, 7))


async def test_programming_errors_are_not_swallowed() -> None:
    with pytest.raises(ConfigError):
        await SummaryRunner(ScriptedSummarizer([ConfigError("no key")])).run(EX, BT)


async def test_unknown_update_becomes_an_add_with_a_warning() -> None:
    draft = TurnDraft("Asked", "Answered", BaseTruthDiff(update=("Compatibility: keep the API backwards compatible",)))
    result = await SummaryRunner(ScriptedSummarizer([draft])).run(EX, BT)
    assert result.base_truth[-1].text == "Compatibility: keep the API backwards compatible"
    assert [w.kind for w in result.warnings] == [WarningKind.UNKNOWN_UPDATE]


async def test_hallucinated_entries_are_rejected_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    draft = TurnDraft("Asked", "Answered", BaseTruthDiff(add=("Database: MongoDB 7.0", "API version: v2 route")))
    with caplog.at_level(logging.WARNING, logger="memstack.session"):
        result = await SummaryRunner(ScriptedSummarizer([draft])).run(EX, BT)
    assert [f.text for f in result.base_truth] == ["Framework: FastAPI", "API version: v2 route"]
    assert [w.entry for w in result.warnings if w.kind is WarningKind.UNSUPPORTED] == ["Database: MongoDB 7.0"]
    assert "MongoDB" in caplog.text or "mongodb" in caplog.text


async def test_word_caps_are_enforced_not_trusted() -> None:
    draft = TurnDraft("word " * 40, "other " * 50)
    result = await SummaryRunner(ScriptedSummarizer([draft])).run(EX, BT)
    assert len(result.summary.user_summary.split()) == 25 and len(result.summary.assistant_summary.split()) == 30
    assert {"user_summary_cut", "assistant_summary_cut"} <= set(result.flags)


async def test_offline_summarizer_runs_under_the_same_policy() -> None:
    result = await SummaryRunner(OfflineSummarizer()).run(EX, BT)
    assert result.outcome is Outcome.SUMMARIZED and result.summarizer == "offline:extractive"
    assert "offline" in result.flags
    assert any(f.hard_exception and "backwards compatible" in f.text for f in result.base_truth)


LOG = [
    TurnSummary(1, "Asked to plan a trip to Lisbon", "Suggested three days"),
    TurnSummary(2, "Asked for food tips", "Pastéis"),
]


async def test_cross_session_line_is_capped_and_falls_back_offline() -> None:
    long_line = ScriptedSummarizer([], line="The user planned a Lisbon trip " + "and more " * 30)
    line = await summarize_session(long_line, LOG, (), SessionSettings(cross_session_words=12))
    assert len(line.split()) == 12 and line.startswith("The user planned a Lisbon trip")
    for failing in (ProviderError("down", status=500), "   "):
        fake = ScriptedSummarizer([], line=failing) if isinstance(failing, str) else FailingLine(failing)
        assert await summarize_session(fake, LOG, ()) == "Asked to plan a trip to Lisbon; later asked for food tips"
    assert await summarize_session(long_line, [], ()) == ""


class FailingLine(ScriptedSummarizer):
    def __init__(self, error: Exception) -> None:
        super().__init__([])
        self.error = error

    async def summarize_session(self, turn_log, base_truth):  # type: ignore[no-untyped-def]
        raise self.error
