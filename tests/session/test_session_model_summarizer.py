"""ModelSummarizer under the failure policy, with a scripted stand-in for the chat model's JSON call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memstack.errors import MalformedResponse
from memstack.session import ModelSummarizer, Outcome, SummaryRunner, consolidate_base_truth, summarize_session
from memstack.types import Exchange, Fact, TurnSummary


class ScriptedJsonModel:
    """Answers ``complete_json`` from a queue of dicts or exceptions and records every request."""

    name = "scripted:summarizer"

    def __init__(self, *answers: dict[str, Any] | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[tuple[list[dict[str, Any]], float | None]] = []

    async def complete_json(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        self.requests.append(([dict(m) for m in messages], timeout))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def aclose(self) -> None:
        return None


EX = Exchange(3, "We must support Python 3.9. Can you drop the walrus operator?", "Done: replaced := with two lines.")
ANSWER = {
    "user_summary": "Asked to drop the walrus operator; must support Python 3.9",
    "assistant_summary": "Replaced := with two lines",
    "base_truth_diff": {"add": ["Minimum Python version: 3.9"], "update": [], "remove": []},
    "hard_exceptions": ["Minimum Python version: 3.9"],
}


async def test_turn_summary_through_the_policy() -> None:
    model = ScriptedJsonModel(MalformedResponse("not JSON", body="Sure!"), ANSWER)
    result = await SummaryRunner(ModelSummarizer(model)).run(EX, ())
    assert result.outcome is Outcome.SUMMARIZED and result.attempts == 2 and result.summarizer == "scripted:summarizer"
    assert result.base_truth == (Fact("Minimum Python version: 3.9", True, 3),)
    (first, timeout), (second, _) = model.requests
    assert first == second and timeout == 8.0  # the retry sends the same payload, under the 8 s deadline
    assert first[0]["role"] == "system" and "first 25% of each message" in first[0]["content"]
    assert "We must support Python 3.9." in first[1]["content"]


async def test_consolidation_and_session_line_use_the_model() -> None:
    facts = (Fact("Constraint: never use numpy", True, 1), Fact("Deadline: Friday", since_turn=2))
    model = ScriptedJsonModel({"facts": [{"text": "Deadline: Friday", "hard": False}]}, {"line": "Planned a release"})
    merged = await consolidate_base_truth(ModelSummarizer(model), facts)
    assert merged.facts == facts and merged.restored == (facts[0],)  # the dropped rule came back
    assert "[hard] turn 1: Constraint: never use numpy" in model.requests[0][0][0]["content"]
    line = await summarize_session(ModelSummarizer(model), [TurnSummary(1, "u", "a")], facts)
    assert line == "Planned a release"
