"""The summarizer prompts render with every placeholder filled and carry the seed's contract."""

from __future__ import annotations

import pytest

from memstack.prompts import get_prompt

VALUES = {
    "session_turn_system": {"user_words": "25", "assistant_words": "30"},
    "session_turn_user": {
        "turn": "3",
        "depth": "summaries and diff",
        "base_truth": "- Python version: 3.12",
        "user_message": "Costs $5 each",
        "assistant_reply": "Okay",
    },
    "session_consolidate": {"facts": "- [hard] turn 1: Constraint: never use numpy"},
    "session_cross_session": {"words": "30", "turns": "Turn 1: …", "facts": "- …"},
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_session_prompts_render(name: str) -> None:
    prompt = get_prompt(name)
    text = prompt.render(**VALUES[name])
    assert prompt.version >= 1 and "$" not in text.replace("$5", "")
    with pytest.raises(KeyError):
        prompt.render()


def test_turn_prompt_states_the_seed_contract() -> None:
    text = get_prompt("session_turn_system").render(user_words="25", assistant_words="30")
    for phrase in (
        "user_summary: at most 25 words",
        "assistant_summary: at most 30 words",
        "first 25% of each message",
        "(cannot, must, always, never)",
        "library names, versions, types, function signatures",
        "complete replacement string",
        "Return ONLY valid JSON",
    ):
        assert phrase in text
