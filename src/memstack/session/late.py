"""Applying a late summary: a background retry, or a turn resumed after a crash, meets base truth that later turns
have changed since.

The rule is *later turns win*. The summarizer sees base truth as it stood for its turn (the facts established at
or before it); its diff is applied to those; the facts later turns established are kept as they are, and a change
of the late turn that a later fact already overrides (the same ``key:``, or the same fact reworded) is dropped with
a ``superseded`` warning. So "Python version: 3.11" summarized late for turn 5 cannot undo turn 6's "Python version:
3.12".
"""

from __future__ import annotations

from collections.abc import Sequence

from memstack.session.diff import DiffWarning, WarningKind
from memstack.session.settings import SessionSettings
from memstack.session.text import fact_key, normalize, similarity
from memstack.types import Fact

__all__ = ["settle_late", "split_at"]


def split_at(facts: Sequence[Fact], turn: int) -> tuple[tuple[Fact, ...], tuple[Fact, ...]]:
    """``(as of turn, established later)``: the base truth a late summary of ``turn`` works on, and the rest."""
    return tuple(f for f in facts if f.since_turn <= turn), tuple(f for f in facts if f.since_turn > turn)


def settle_late(
    applied: Sequence[Fact], later: Sequence[Fact], turn: int, settings: SessionSettings
) -> tuple[tuple[Fact, ...], tuple[DiffWarning, ...]]:
    """The base truth after a late diff: ``applied`` (the late diff applied to the facts as of ``turn``) less what
    ``later`` facts override, then the ``later`` facts."""
    kept: list[Fact] = []
    warnings: list[DiffWarning] = []
    for fact in applied:
        newer = next((g for g in later if fact.since_turn == turn and _overrides(g, fact, settings)), None)
        if newer is None:
            kept.append(fact)
            continue
        warnings.append(
            DiffWarning(WarningKind.SUPERSEDED, "add", fact.text, f"turn {newer.since_turn} set {newer.text!r}")
        )
    return (*kept, *later), tuple(warnings)


def _overrides(newer: Fact, fact: Fact, settings: SessionSettings) -> bool:
    key = fact_key(fact.text)
    if key is not None and key == fact_key(newer.text):
        return True
    return (
        normalize(fact.text) == normalize(newer.text) or similarity(fact.text, newer.text) >= settings.update_similarity
    )
