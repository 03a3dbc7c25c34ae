"""The offline extractive summarizer: summaries under the caps, facts by rules, corrections and lifts."""

from __future__ import annotations

import pytest

from memstack.session import OfflineSummarizer, SummaryRunner, WarningKind
from memstack.session.diff import is_hard_rule
from memstack.session.extractive import session_line, summarize_message
from memstack.types import Exchange, Fact, Route, TurnSummary

FILLER = " ".join(f"Section {i} of the report covers quarterly numbers and team updates in detail." for i in range(20))


async def run(ex: Exchange, bt: tuple[Fact, ...] = ()):  # type: ignore[no-untyped-def]
    return await SummaryRunner(OfflineSummarizer()).run(ex, bt)


def test_it_is_labelled_offline() -> None:
    s = OfflineSummarizer()
    assert s.offline is True and s.name == "offline:extractive"


async def test_summaries_respect_the_word_caps_on_long_messages() -> None:
    result = await run(Exchange(1, FILLER, FILLER))
    assert 0 < len(result.summary.user_summary.split()) <= 25
    assert 0 < len(result.summary.assistant_summary.split()) <= 30
    assert "offline" in result.flags and result.route.route is Route.LONG


async def test_early_constraint_in_a_long_message_is_kept() -> None:
    """Seed 04 §8: summaries under-weight the start of long messages; this one must not."""
    msg = "The service must never log personal data. " + FILLER + " Can you write the logging middleware?"
    result = await run(Exchange(1, msg, "Sure. " + FILLER))
    assert "must never log personal data" in result.summary.user_summary
    assert "Asked to write the logging middleware" in result.summary.user_summary
    rules = [f for f in result.base_truth if f.hard_exception]
    assert [f.text for f in rules] == ["Constraint: the service must never log personal data"]


async def test_request_is_rephrased_and_greeting_dropped() -> None:
    assert (
        summarize_message("Hi! Could you please refactor the parser?", 25, user=True) == "Asked to refactor the parser"
    )
    assert summarize_message("Explain the GIL.", 25, user=True) == "Asked to explain the GIL"


async def test_correction_updates_a_keyed_fact() -> None:
    result = await run(Exchange(2, "Actually the deadline is Monday.", "Okay, Monday."), (Fact("Deadline: Friday"),))
    assert result.diff.update == ("Deadline: Monday",)
    assert [f.text for f in result.base_truth] == ["Deadline: Monday"] and result.warnings == ()


async def test_version_switch_replaces_the_old_version() -> None:
    bt = (Fact("Python version: 3.11", since_turn=1),)
    ex = Exchange(3, "We no longer need Python 3.11, we switched to Python 3.12.", "Okay, noted: Python 3.12.")
    result = await run(ex, bt)
    assert [f.text for f in result.base_truth] == ["Python version: 3.12"]


async def test_withdrawn_fact_is_removed() -> None:
    result = await run(Exchange(3, "We no longer use MySQL.", "Noted."), (Fact("Database: MySQL"), Fact("Name: Dana")))
    assert result.diff.remove == ("Database: MySQL",) and [f.text for f in result.base_truth] == ["Name: Dana"]


async def test_rule_then_lift() -> None:
    first = await run(Exchange(1, "Never use numpy in this codebase.", "Understood, plain Python only."))
    assert first.base_truth == (Fact("Constraint: never use numpy in this codebase", True, 1),)
    kept = await run(Exchange(2, "Speed up the loop.", "Numpy would help, but I kept plain Python."), first.base_truth)
    assert kept.base_truth == first.base_truth
    lifted = await run(Exchange(3, "You can use numpy now.", "Great, switching to numpy."), first.base_truth)
    assert lifted.base_truth == ()


async def test_identity_preferences_and_decisions() -> None:
    ex = Exchange(
        1,
        "I'm a data scientist at Acme. I prefer concise answers. My name is Dana and I live in Lisbon. "
        "Let's go with Redis for the cache.",
        "Got it, Dana.",
    )
    facts = {f.text for f in (await run(ex)).base_truth}
    assert facts == {
        "User is a data scientist at Acme",
        "User prefers concise answers",
        "Name: Dana",
        "User lives in Lisbon",
        "Decision: go with Redis for the cache",
    }


async def test_code_signatures_are_facts_and_change_by_update() -> None:
    reply = "Here you go:\n```python\ndef load_rows(path: str, limit: int = 100) -> list[Row]:\n    ...\n```"
    bt = (Fact("Function load_rows: def load_rows(path: str) -> list[Row]", since_turn=2),)
    result = await run(Exchange(4, "Add a limit parameter to the loader.", reply), bt)
    assert result.route.route is Route.CODE
    assert [f.text for f in result.base_truth] == [
        "Function load_rows: def load_rows(path: str, limit: int = 100) -> list[Row]"
    ]
    assert result.summary.assistant_summary.startswith("Provided 2 lines of python code defining load_rows")


async def test_incidental_short_exchange_has_no_diff() -> None:
    result = await run(Exchange(5, "thanks!", "You're welcome!"), (Fact("Name: Dana"),))
    assert result.diff.is_empty and result.base_truth == (Fact("Name: Dana"),)


@pytest.mark.parametrize(
    "ex",
    [
        Exchange(1, "I'm building a REST API with FastAPI and Python 3.11. We can't use any ORM.", "Sure, raw SQL."),
        Exchange(2, "Our database is Postgres 16 and the budget is $5,000.", "Noted, Postgres 16 with $5,000."),
        Exchange(3, "I'd rather you answer in bullet points. I hate long paragraphs.", "Understood."),
        Exchange(4, "Always run the linter before committing; don't skip CI.", "Will do."),
        Exchange(5, FILLER, "I've switched the report generator to weekly batches, because it is cheaper."),
    ],
)
async def test_offline_facts_pass_the_plausibility_check(ex: Exchange) -> None:
    result = await run(ex)
    assert not [w for w in result.warnings if w.kind in (WarningKind.UNSUPPORTED, WarningKind.WEAK_SUPPORT)]
    assert not result.diff.is_empty


def test_session_line_is_short_and_user_focused() -> None:
    log = [
        TurnSummary(1, "Asked to design the users endpoint for the REST API", "Proposed GET /users/{id}"),
        TurnSummary(2, "Asked to add pagination to the users endpoint", "Added limit/offset"),
        TurnSummary(3, "Asked how to test the users endpoint", "Suggested pytest with httpx"),
    ]
    bt = (Fact("Constraint: cannot use any ORM", True, 1), Fact("Framework: FastAPI", since_turn=1))
    line = session_line(log, bt, 30)
    assert len(line.split()) <= 30
    assert line.startswith("Asked to design the users endpoint")
    assert "cannot use any ORM" in line
    assert session_line([], bt, 30) == ""


@pytest.mark.parametrize(
    ("sentence", "rule"),
    [
        ("We can't use any ORM", True),
        ("Never use numpy", True),
        ("Always answer in French", True),
        ("Don't log personal data", True),
        ("The API must stay backwards compatible", True),
        ("you should never call eval", True),
        ("I don't have a car", False),
        ("I always forget my keys", False),
        ("I can't figure out the bug", False),
        ("I don't know", False),
        ("It must be nice to live by the sea", False),
        ("Must be nice", False),
        ("That must have been so hard", False),
        ("You must be tired after the flight", False),
        ("You must've felt relieved", False),
        ("The output must be valid JSON", True),
        ("Passwords must be hashed", True),
        ("It must be under 100 lines", True),
        ("It must be nice, but you must reply in French", True),
    ],
)
def test_rules_are_directives_not_any_negation(sentence: str, rule: bool) -> None:
    assert is_hard_rule(sentence) is rule


async def test_first_person_negations_are_not_rules() -> None:
    result = await run(Exchange(1, "I don't have a car and I always forget my keys.", "That sounds hard."))
    assert not [f for f in result.base_truth if f.hard_exception]


async def test_a_guess_with_must_is_not_a_rule() -> None:
    ex = Exchange(1, "It must be nice to retire early. That must have been a relief for my partner.", "It must!")
    result = await SummaryRunner(OfflineSummarizer()).run(ex, ())
    assert not any(f.hard_exception for f in result.base_truth)
