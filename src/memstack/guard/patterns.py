"""The guard's content check: :func:`scan` text for the attack families of :mod:`memstack.guard.content`.

Rules live in tables (:mod:`~memstack.guard.tables`): ``data/phrases.yaml`` (phrase rules), ``data/claims.yaml``
(claims of authority, rules declared void), ``data/directives.yaml`` (text addressed to the model, with the
sentence-level detectors of :mod:`~memstack.guard.directives`), ``data/standing.yaml`` (standing orders); the other
languages are :mod:`~memstack.guard.foreign`'s and :mod:`~memstack.guard.rules` holds the machinery. Text is read
in the normal form of :mod:`~memstack.guard.unmask` (invisible characters, compatibility forms and look-alike letters
undone) and through the decoding passes of :mod:`~memstack.guard.decode` (hidden tag text, zero-width word gaps,
base64, rot13, leetspeak, spaced and reversed letters): what a decoded reading trips is reported with
``obfuscated``, and so is a sentence written in invisible tag characters, whatever it says.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from memstack.guard.decode import decoded_variants, hidden_prose
from memstack.guard.directives import general
from memstack.guard.foreign import scan_foreign
from memstack.guard.rules import FLAGS, Rule, RuleSet, normalize, words_of
from memstack.guard.tables import rules
from memstack.guard.unmask import invisible

__all__ = ["FLAGS", "scan"]


@dataclass(frozen=True, slots=True)
class _Sets:
    """The sets :func:`scan` runs, in order (looked up once)."""

    every: tuple[RuleSet, ...]  # whatever the text is
    addressed: tuple[RuleSet, ...]  # not in a delegated task's instructions, which are addressed to the model
    upper_role: Rule  # an upper-case role label, read with its case kept


@lru_cache(maxsize=1)
def _sets() -> _Sets:
    return _Sets(
        (rules("phrases", "imperatives"), rules("phrases", "more"), rules("claims", "claims")),
        (rules("directives", "addressed"), rules("standing", "standing")),
        rules("phrases", "upper_role").rules[0],
    )


def scan(text: str, *, instructions: bool = False) -> tuple[str, ...]:
    """The authority-taking patterns found in ``text`` (see :mod:`memstack.guard.content`); empty for ordinary text.

    ``instructions``: the text is a delegated task's instructions, addressed to the model by design, so only the
    authority-taking families apply (not ``injected_instruction``)."""
    if not text:
        return ()
    norm = normalize(text)
    words = words_of(norm)
    found = _scan(text, norm, words, instructions)
    for variant in decoded_variants(norm, text, words):
        hidden = _scan(variant, variant, words_of(variant), instructions)
        if hidden:
            found.extend(flag for flag in (*hidden, "obfuscated") if flag not in found)
    if "obfuscated" not in found and hidden_prose(text):
        found.append("obfuscated")
    return tuple(flag for flag in FLAGS if flag in found)


def _scan(text: str, norm: str, words: set[str], instructions: bool) -> list[str]:
    found: list[str] = []
    sets = _sets()
    for rule_set in sets.every:
        rule_set.run(norm, words, found)
    if not instructions:
        for rule_set in sets.addressed:
            rule_set.run(norm, words, found)
    general(norm, words, found, instructions=instructions)
    scan_foreign(text, norm, found, instructions=instructions)
    upper = sets.upper_role
    if "role_marker" not in found and any(label in text for label in upper.gates[0]):
        folded = text if text.isascii() else unicodedata.normalize("NFKC", text.translate(invisible()))
        if upper.pattern.search(folded):
            found.append("role_marker")
    return found
