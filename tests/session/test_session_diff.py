"""apply_diff: remove → update → add, key matching, plausibility, hard exceptions, order conflicts."""

from __future__ import annotations

import logging

import pytest

from memstack.session import SessionSettings, Verdict, WarningKind, apply_diff, check_support
from memstack.types import BaseTruthDiff, Exchange, Fact


def texts(facts: tuple[Fact, ...]) -> list[str]:
    return [f.text for f in facts]


def kinds(warnings: tuple[object, ...]) -> list[WarningKind]:
    return [w.kind for w in warnings]  # type: ignore[attr-defined]


EX = Exchange(
    5,
    "Actually we moved to Python 3.12 and the deadline is Monday. I prefer pytest over unittest.",
    "Noted: Python 3.12, deadline Monday, and I'll write the tests with pytest.",
)
BT = (
    Fact("Python version: 3.10", since_turn=1),
    Fact("Deadline: Friday", since_turn=1),
    Fact("User open to unittest or pytest", since_turn=2),
)


def test_seed_example_applies_in_order() -> None:
    diff = BaseTruthDiff(
        add=("User prefers pytest over unittest",),
        update=("Python version: 3.12", "Deadline: Monday"),
        remove=("User open to unittest or pytest",),
    )
    new, warnings = apply_diff(BT, diff, EX)
    assert texts(new) == ["Python version: 3.12", "Deadline: Monday", "User prefers pytest over unittest"]
    assert warnings == ()
    assert [f.since_turn for f in new] == [5, 5, 5]


def test_update_matches_key_case_insensitively_and_keeps_position() -> None:
    new, _ = apply_diff(BT, BaseTruthDiff(update=("python VERSION: 3.12",)), EX)
    assert texts(new)[0] == "python VERSION: 3.12" and len(new) == 3


def test_update_without_key_matches_fuzzily() -> None:
    bt = (Fact("User writes tests with unittest and nose"),)
    ex = Exchange(2, "I write tests with pytest now, not unittest or nose.", "Okay.")
    new, warnings = apply_diff(bt, BaseTruthDiff(update=("User writes tests with pytest",)), ex)
    assert texts(new) == ["User writes tests with pytest"] and warnings == ()


def test_unknown_update_is_added_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="memstack.session"):
        new, warnings = apply_diff(BT, BaseTruthDiff(update=("Test runner: pytest",)), EX)
    assert texts(new)[-1] == "Test runner: pytest"
    assert kinds(warnings) == [WarningKind.UNKNOWN_UPDATE]
    assert "unknown_update" in caplog.text


def test_remove_by_substring_and_unknown_remove_is_ignored() -> None:
    new, warnings = apply_diff(BT, BaseTruthDiff(remove=("Deadline", "Favourite colour: blue")), EX)
    assert texts(new) == ["Python version: 3.10", "User open to unittest or pytest"]
    assert kinds(warnings) == [WarningKind.UNKNOWN_REMOVE]


def test_remove_fuzzy_needs_high_similarity() -> None:
    bt = (Fact("User likes green tea in the morning"), Fact("User drinks coffee at work"))
    ex = Exchange(3, "I no longer drink green tea.", "Okay.")
    new, _ = apply_diff(bt, BaseTruthDiff(remove=("likes green tea in the morning (stale)",)), ex)
    assert texts(new) == ["User drinks coffee at work"]
    same, warnings = apply_diff(bt, BaseTruthDiff(remove=("User likes tea",)), ex)
    assert same == bt and kinds(warnings) == [WarningKind.UNKNOWN_REMOVE]


def test_remove_matching_several_facts_removes_the_best_and_warns() -> None:
    bt = (Fact("Uses Redis for caching"), Fact("Uses Redis for queues"), Fact("Uses Postgres"))
    ex = Exchange(2, "We dropped Redis entirely.", "Okay, no Redis.")
    new, warnings = apply_diff(bt, BaseTruthDiff(remove=("Redis",)), ex)
    assert texts(new) == ["Uses Postgres"]
    assert kinds(warnings) == [WarningKind.AMBIGUOUS_REMOVE]


# -- diff-order conflicts ---------------------------------------------------------------------------------------


def test_same_fact_in_remove_and_update_ends_with_the_update() -> None:
    diff = BaseTruthDiff(update=("Python version: 3.12",), remove=("Python version: 3.10",))
    new, warnings = apply_diff(BT, diff, EX)
    assert "Python version: 3.10" not in texts(new)
    assert texts(new).count("Python version: 3.12") == 1
    assert kinds(warnings) == [WarningKind.UNKNOWN_UPDATE]  # removed first, so the update was added


def test_removed_and_re_added_in_one_diff_is_present() -> None:
    diff = BaseTruthDiff(add=("Deadline: Monday",), remove=("Deadline: Friday",))
    new, warnings = apply_diff(BT, diff, EX)
    assert texts(new) == ["Python version: 3.10", "User open to unittest or pytest", "Deadline: Monday"]
    assert warnings == ()


def test_two_updates_of_one_key_leave_the_last() -> None:
    ex = Exchange(6, "Python 3.11, no wait, Python 3.12.", "Python 3.12 it is.")
    new, _ = apply_diff(BT, BaseTruthDiff(update=("Python version: 3.11", "Python version: 3.12")), ex)
    assert texts(new).count("Python version: 3.12") == 1 and "Python version: 3.11" not in texts(new)


def test_add_of_an_existing_fact_is_a_duplicate_not_a_copy() -> None:
    ex = Exchange(3, "The deadline is Friday.", "Yes, Friday.")
    new, warnings = apply_diff(BT, BaseTruthDiff(add=("deadline: friday.",), update=("Deadline: Friday",)), ex)
    assert new == BT and set(kinds(warnings)) == {WarningKind.DUPLICATE}


def test_update_then_add_same_text_keeps_one() -> None:
    diff = BaseTruthDiff(add=("Deadline: Monday",), update=("Deadline: Monday",))
    new, warnings = apply_diff(BT, diff, EX)
    assert texts(new).count("Deadline: Monday") == 1 and kinds(warnings) == [WarningKind.DUPLICATE]


def test_too_many_changes_in_one_turn_are_cut() -> None:
    ex = Exchange(1, " ".join(f"fact{i} is value{i}." for i in range(12)), "ok")
    diff = BaseTruthDiff(add=tuple(f"Fact{i}: value{i}" for i in range(12)))
    new, warnings = apply_diff((), diff, ex, SessionSettings(max_facts_per_turn=5))
    assert len(new) == 5 and kinds(warnings).count(WarningKind.TOO_MANY) == 7


def test_empty_and_oversized_entries_are_invalid() -> None:
    new, warnings = apply_diff(BT, BaseTruthDiff(add=("  ", "x " * 400)), EX)
    assert new == BT and kinds(warnings) == [WarningKind.INVALID, WarningKind.INVALID]


# -- plausibility ---------------------------------------------------------------------------------------------


def test_hallucinated_entries_are_rejected_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    diff = BaseTruthDiff(
        add=(
            "User prefers pytest over unittest",  # supported
            "User lives in Berlin",  # name not in the exchange
            "Budget: 5000 dollars",  # number not in the exchange
            "User enjoys hiking with their dog",  # content not in the exchange
        ),
        update=("Python version: 3.13",),  # invented version
    )
    with caplog.at_level(logging.WARNING, logger="memstack.session"):
        result = apply_diff(BT, diff, EX)
    assert "User prefers pytest over unittest" in texts(result.base_truth)
    assert "Python version: 3.10" in texts(result.base_truth)  # the bad update left the fact alone
    assert {w.entry for w in result.rejected} == {
        "User lives in Berlin",
        "Budget: 5000 dollars",
        "User enjoys hiking with their dog",
        "Python version: 3.13",
    }
    assert caplog.text.count("unsupported") == 4


def test_weakly_supported_entry_is_applied_and_flagged() -> None:
    ex = Exchange(2, "We deploy the service on Kubernetes.", "Okay.")
    # "deploy" covers "deployment" (one stem); "hosting", "cluster" and "autoscaling" are not in the exchange
    support = check_support("Service hosting: Kubernetes cluster with autoscaling", ex)
    assert support.verdict is Verdict.WEAK, support
    new, warnings = apply_diff((), BaseTruthDiff(add=("Service hosting: Kubernetes cluster with autoscaling",)), ex)
    assert len(new) == 1 and kinds(warnings) == [WarningKind.WEAK_SUPPORT]


def test_support_ignores_framing_and_accepts_the_replaced_key() -> None:
    ex = Exchange(4, "Actually it's 3.12 now.", "Okay, 3.12.")
    assert check_support("User currently prefers version 3.12", ex).verdict is Verdict.SUPPORTED
    assert check_support("Python version: 3.12", ex).verdict is Verdict.WEAK  # "Python" is not in the text
    assert check_support("Python version: 3.12", ex, known="python version").verdict is Verdict.SUPPORTED
    new, warnings = apply_diff(BT, BaseTruthDiff(update=("Python version: 3.12",)), ex)
    assert texts(new)[0] == "Python version: 3.12" and warnings == ()


def test_support_finds_identifiers_inside_code() -> None:
    ex = Exchange(2, "Rename it.", "```python\ndef load_rows(path: str) -> list[Row]:\n    ...\n```")
    assert check_support("Function load_rows: def load_rows(path: str) -> list[Row]", ex).verdict is Verdict.SUPPORTED
    assert check_support("Function load_items: returns list[Row]", ex).verdict is Verdict.UNSUPPORTED


PARAPHRASE_EX = Exchange(
    3, "We keep user data in postgres and mongo, the frontend is js, and we run on Kubernetes in NYC.", "Noted."
)


@pytest.mark.parametrize(
    "entry",
    [
        "Stores user data in PostgreSQL",
        "Stores user data in MongoDB",
        "Frontend: JavaScript",
        "Runs on k8s",
        "Runs in New York City",
    ],
)
def test_another_spelling_of_a_name_in_the_exchange_is_supported(entry: str) -> None:
    support = check_support(entry, PARAPHRASE_EX)
    assert support.verdict is Verdict.SUPPORTED, support.reason


@pytest.mark.parametrize(
    "entry",
    ["Stores user data in MySQL", "The frontend uses Java", "Runs on k9s", "Runs in Boston", "Uses Postgres 16"],
)
def test_names_the_exchange_never_used_are_still_rejected(entry: str) -> None:
    assert check_support(entry, PARAPHRASE_EX).verdict is Verdict.UNSUPPORTED


def test_a_paraphrased_name_is_applied_not_rejected() -> None:
    diff = BaseTruthDiff(add=("User data lives in PostgreSQL", "User data lives in Oracle"))
    new, warnings = apply_diff((), diff, PARAPHRASE_EX)
    assert [f.text for f in new] == ["User data lives in PostgreSQL"]
    assert [(w.kind, w.entry) for w in warnings] == [(WarningKind.UNSUPPORTED, "User data lives in Oracle")]


# -- hard exceptions ------------------------------------------------------------------------------------------

RULE = Fact("Constraint: never use numpy", hard_exception=True, since_turn=1)


def test_rules_stated_by_the_user_become_hard_exceptions() -> None:
    ex = Exchange(1, "Never use numpy in this project.", "Understood.")
    new, _ = apply_diff((), BaseTruthDiff(add=("Constraint: never use numpy",)), ex)
    assert new == (Fact("Constraint: never use numpy", True, 1),)


def test_marked_hard_but_only_the_assistant_said_it_is_demoted() -> None:
    ex = Exchange(1, "How should I open files?", "You must always use a context manager to open files.")
    new, warnings = apply_diff((), BaseTruthDiff(add=("Always open files with a context manager",)), ex)
    assert new[0].hard_exception is False and kinds(warnings) == [WarningKind.HARD_DEMOTED]


def test_hard_exception_survives_a_remove_the_user_did_not_ask_for() -> None:
    ex = Exchange(3, "Let's vectorize the loop.", "I used plain Python loops; numpy would be faster though.")
    new, warnings = apply_diff((RULE,), BaseTruthDiff(remove=("Constraint: never use numpy",)), ex)
    assert new == (RULE,) and kinds(warnings) == [WarningKind.HARD_EXCEPTION_KEPT]


def test_hard_exception_survives_an_update_from_the_assistant() -> None:
    ex = Exchange(3, "Make it faster.", "Numpy is allowed for the heavy loops, so I switched to numpy arrays.")
    new, warnings = apply_diff((RULE,), BaseTruthDiff(update=("Constraint: numpy allowed for heavy loops",)), ex)
    assert new == (RULE,) and kinds(warnings) == [WarningKind.HARD_EXCEPTION_KEPT]
    added, warnings = apply_diff((RULE,), BaseTruthDiff(add=("Numpy allowed for heavy loops",)), ex)
    assert added == (RULE,) and kinds(warnings) == [WarningKind.HARD_EXCEPTION_KEPT]


@pytest.mark.parametrize(
    "message",
    [
        "You can use numpy now.",
        "Forget the numpy rule.",
        "The numpy restriction no longer applies.",
        "numpy is allowed",
    ],
)
def test_user_lifts_a_hard_exception_explicitly(message: str) -> None:
    ex = Exchange(4, message, "Great, numpy it is.")
    new, warnings = apply_diff((RULE,), BaseTruthDiff(remove=("never use numpy",)), ex)
    assert new == () and warnings == ()


def test_lifting_one_rule_does_not_lift_another() -> None:
    other = Fact("Constraint: never use pandas", True, 1)
    ex = Exchange(4, "You can use numpy now.", "Okay.")
    new, warnings = apply_diff((RULE, other), BaseTruthDiff(remove=("never use numpy", "never use pandas")), ex)
    assert new == (other,) and kinds(warnings) == [WarningKind.HARD_EXCEPTION_KEPT]


def test_user_restating_a_rule_may_update_it_and_it_stays_hard() -> None:
    bt = (Fact("Minimum Python version: 3.8", True, 1),)
    ex = Exchange(5, "Correction: the minimum Python version must be 3.9.", "Noted, 3.9 minimum.")
    new, warnings = apply_diff(bt, BaseTruthDiff(update=("Minimum Python version: 3.9",)), ex)
    assert new == (Fact("Minimum Python version: 3.9", True, 5),) and warnings == ()
