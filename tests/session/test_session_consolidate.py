"""Consolidation every K turns: merging, superseding, and hard exceptions that always survive."""

from __future__ import annotations

import pytest

from memstack.embed import get_embedder
from memstack.errors import ProviderError
from memstack.session import (
    OfflineSummarizer,
    SessionSettings,
    consolidate_base_truth,
    consolidation_due,
    merge_facts,
)
from memstack.types import Fact

from .fakes import ScriptedSummarizer

S = SessionSettings()
RULE = Fact("Constraint: never use numpy", True, 1)
RULE2 = Fact("Constraint: never use pandas", True, 2)


def texts(facts: tuple[Fact, ...] | list[Fact]) -> list[str]:
    return [f.text for f in facts]


def test_cadence_every_k_turns_or_when_base_truth_is_too_big() -> None:
    assert S.consolidate_every == 16
    assert not consolidation_due(15, 0, 10, S) and consolidation_due(16, 0, 10, S)
    assert not consolidation_due(31, 16, 10, S) and consolidation_due(32, 16, 10, S)
    assert consolidation_due(3, 0, S.max_facts + 1, S)
    assert not consolidation_due(40, 0, 1, S)  # nothing to merge
    every20 = SessionSettings(consolidate_every=20)
    assert not consolidation_due(16, 0, 10, every20) and consolidation_due(20, 0, 10, every20)


def test_exact_duplicates_merge_keeping_the_earliest_turn() -> None:
    facts = [Fact("Framework: FastAPI", since_turn=1), Fact("framework: fastapi.", since_turn=5)]
    result = merge_facts(facts, S)
    assert len(result.facts) == 1 and result.facts[0].since_turn == 1


def test_newer_value_of_a_key_supersedes_the_older() -> None:
    facts = [
        Fact("Deadline: Friday", since_turn=2),
        Fact("Name: Dana", since_turn=1),
        Fact("Deadline: Monday", since_turn=9),
    ]
    result = merge_facts(facts, S)
    assert texts(result.facts) == ["Deadline: Monday", "Name: Dana"]
    assert result.merged == [(facts[0], Fact("Deadline: Monday", False, 9))]


def test_near_duplicates_merge_into_the_longer_wording_but_numbers_keep_facts_apart() -> None:
    facts = [
        Fact("User prefers answers in bullet points", since_turn=1),
        Fact("User prefers answers in short bullet points", since_turn=4),
        Fact("Budget: 5000 dollars for hosting", since_turn=2),
        Fact("Budget 2025: 7000 dollars for hosting", since_turn=3),
    ]
    result = merge_facts(facts, S)
    assert texts(result.facts) == [
        "User prefers answers in short bullet points",
        "Budget: 5000 dollars for hosting",
        "Budget 2025: 7000 dollars for hosting",
    ]


def test_hard_exceptions_survive_offline_merging() -> None:
    facts = [
        RULE,
        RULE2,  # a distinct rule, similar wording: both stay
        Fact("Constraint: never use numpy", True, 7),  # the same rule twice: one copy
        Fact("Constraint: never use numpy.", False, 8),
    ]
    result = merge_facts(facts, S)
    assert result.facts == [RULE, RULE2]  # one copy of the repeated rule, still hard, from its first turn


async def test_offline_consolidation_with_embeddings_merges_paraphrases() -> None:
    facts = [
        Fact("The app stores sessions in Redis", since_turn=1),
        Fact("Sessions are kept in Redis by the app", since_turn=6),
        RULE,
    ]
    lexical = await OfflineSummarizer().consolidate(facts)
    assert len(lexical) == 3
    semantic = await OfflineSummarizer(embedder=get_embedder("local:minilm")).consolidate(facts)
    assert len(semantic) == 2 and RULE in semantic


async def test_model_consolidation_cannot_drop_rules_or_invent_facts() -> None:
    old = (
        RULE,
        RULE2,
        Fact("Framework: FastAPI", since_turn=1),
        Fact("Uses FastAPI with uvicorn", since_turn=3),
        Fact("Deadline: Friday", since_turn=4),
    )
    model = ScriptedSummarizer(
        [],
        consolidated=[
            Fact("Constraint: avoid numpy and pandas"),  # rewrote two rules into one
            Fact("Framework: FastAPI served by uvicorn"),
            Fact("Deadline: Friday", True),  # tried to make a plain fact a rule
            Fact("Database: MongoDB"),  # invented
        ],
    )
    result = await consolidate_base_truth(model, old, S)
    assert set(result.restored) == {RULE, RULE2}
    assert result.rejected == ("Constraint: avoid numpy and pandas", "Database: MongoDB")
    assert texts(result.facts) == [
        "Constraint: never use numpy",
        "Constraint: never use pandas",
        "Framework: FastAPI served by uvicorn",
        "Deadline: Friday",
    ]
    assert [f.hard_exception for f in result.facts] == [True, True, False, False]
    assert result.facts[3].since_turn == 4
    assert set(result.dropped) == {
        Fact("Framework: FastAPI", since_turn=1),
        Fact("Uses FastAPI with uvicorn", since_turn=3),
    }


@pytest.mark.parametrize("failure", [ProviderError("502 from endpoint", status=502), []])
async def test_failed_or_empty_consolidation_keeps_what_matters(failure: object) -> None:
    old = (RULE, Fact("Deadline: Friday", since_turn=1), Fact("Deadline: Monday", since_turn=5))
    model = ScriptedSummarizer([], consolidated=failure)  # type: ignore[arg-type]
    result = await consolidate_base_truth(model, old, S)
    assert RULE in result.facts and result.error
    if isinstance(failure, ProviderError):  # merged offline instead
        assert texts(result.facts) == ["Constraint: never use numpy", "Deadline: Monday"]
    else:  # an empty answer changes nothing
        assert result.facts == old


async def test_consolidation_timeout_falls_back_to_offline_merge() -> None:
    class Slow(ScriptedSummarizer):
        async def consolidate(self, base_truth):  # type: ignore[no-untyped-def]
            import asyncio

            await asyncio.sleep(5)
            return []

    old = (RULE, Fact("Deadline: Friday", since_turn=1), Fact("Deadline: Monday", since_turn=5))
    result = await consolidate_base_truth(Slow([]), old, SessionSettings(timeout_s=0.05))
    assert "failed" in result.error and texts(result.facts) == ["Constraint: never use numpy", "Deadline: Monday"]
