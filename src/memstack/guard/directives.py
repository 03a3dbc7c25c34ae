"""Detectors of text addressed to the model: vocatives and labels ("Dear AI", "note for the assistant:"), directives
about its replies, and sentence-level checks for a directive aimed at the model or at its control surface
(its rules, filters, persona, system prompt). Also a few whole-text checks (authority, exfiltration); other
languages are :mod:`memstack.guard.foreign`'s. The rules are ``data/directives.yaml``; this module runs the sets that
read one sentence at a time, which stop at the first sentence that trips each.
"""

from __future__ import annotations

from functools import lru_cache

from memstack.guard.rules import SENTENCE, Rule, RuleSet, gates_open
from memstack.guard.tables import rules

__all__ = ["general"]


@lru_cache(maxsize=1)
def _detectors() -> tuple[RuleSet, Rule, Rule]:
    """The whole-text checks, and the two sentence-level detectors (``data/directives.yaml``)."""
    return (
        rules("directives", "whole_text"),
        rules("directives", "control_surface").rules[0],
        rules("directives", "to_the_model").rules[0],
    )


def general(norm: str, words: set[str], found: list[str], *, instructions: bool) -> None:
    whole_text, to_control, to_model = _detectors()
    whole_text.run(norm, words, found)
    control = to_control.flag not in found and gates_open(to_control, words)
    addressed = not instructions and to_model.flag not in found and gates_open(to_model, words)
    if not (control or addressed):
        return
    for sentence in SENTENCE.findall(norm):
        if control and to_control.pattern.search(sentence):
            found.append(to_control.flag)
            control = False
        if addressed and to_model.pattern.search(sentence):
            found.append(to_model.flag)
            addressed = False
        if not (control or addressed):
            return
