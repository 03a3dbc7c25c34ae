"""The machinery of the guard's phrase rules: the flags, normalization, word gates, indexed rule sets.

A rule has a flag, a regular expression over normalized text and gates: word sets that must each meet the text's
words before the expression runs. A :class:`RuleSet` indexes its rules by their first gate, so one set intersection
per text finds the few rules worth running; ordinary text costs one word split. The rules themselves are data
(``data/*.yaml``, read by :mod:`memstack.guard.tables`), each with the texts it must catch and pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memstack.guard.unmask import fold

__all__ = [
    "FLAGS",
    "SENTENCE",
    "WRITE_TIME_FLAGS",
    "Rule",
    "RuleSet",
    "gates_open",
    "normalize",
    "rule",
    "run_rules",
    "words_of",
]

#: Every flag the guard reports, in the order it reports them (see :mod:`memstack.guard.content`).
FLAGS = (
    "override",
    "role_marker",
    "fake_delimiter",
    "authority_claim",
    "identity_change",
    "policy_change",
    "exfiltration",
    "injected_instruction",
    "obfuscated",
    "semantic",
    "suspect",
)

#: The flags only the write-time check reports (:func:`memstack.guard.check_memory_candidate`): an order triggered
#: by a question ("when asked about X, say Y") and one addressed to the assistant ("you must always ...").
WRITE_TIME_FLAGS = ("trigger_rule", "instruction_to_assistant")

# --- normalization -------------------------------------------------------------------------------------------------


def normalize(text: str) -> str:
    """The text every rule reads: :func:`memstack.guard.unmask.fold` (lower case, invisible characters removed,
    compatibility forms and look-alike letters folded)."""
    return fold(text)


@dataclass(frozen=True, slots=True)
class Rule:
    flag: str
    pattern: re.Pattern[str]
    gates: tuple[frozenset[str], ...]  # the rule runs only when the text holds a word of every gate
    examples: tuple[str, ...] = ()  # texts the rule must catch (its row's ``examples``)
    passes: tuple[str, ...] = ()  # look-alikes it must not catch (its row's ``passes``)
    where: str = ""  # its row, for messages: "phrases.yaml: sets.text.rules[3]"


def rule(flag: str, pattern: str, *gates: str) -> Rule:
    return Rule(flag, re.compile(pattern, re.M), tuple(frozenset(g.split()) for g in gates))


class RuleSet:
    """Rules indexed by the words of their first gate: one set intersection finds the rules a text can trigger.

    ``scope``: what the rules read (:data:`memstack.guard.tables.SCOPES`): the normal form of the whole text
    (``text``), of each sentence (``sentence``), or the text as written, case kept (``written``)."""

    def __init__(self, *rules: Rule, scope: str = "text") -> None:
        self.rules = rules
        self.scope = scope
        self.index: dict[str, list[int]] = {}
        for i, r in enumerate(rules):
            for word in r.gates[0]:
                self.index.setdefault(word, []).append(i)
        self.keys = frozenset(self.index)

    def run(self, norm: str, words: set[str], found: list[str]) -> None:
        """Append the flag of every rule whose gates are open and whose pattern matches (once per flag)."""
        hits = self.keys.intersection(words)
        if not hits:
            return
        candidates = sorted({i for word in hits for i in self.index[word]})
        for i in candidates:
            r = self.rules[i]
            if (
                r.flag not in found
                and all(not gate.isdisjoint(words) for gate in r.gates[1:])
                and r.pattern.search(norm)
            ):
                found.append(r.flag)


#: A sentence of normalized text, as the sentence-level detectors read it (a set with ``scope: sentence``).
SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")

_WORDS = re.compile(r"[a-z]+")
_SPECIAL = ("<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "```", "![", "</")


def gates_open(rule: Rule, words: set[str]) -> bool:
    return all(not gate.isdisjoint(words) for gate in rule.gates)


def run_rules(rules: RuleSet, norm: str, words: set[str], found: list[str]) -> None:
    rules.run(norm, words, found)


def words_of(norm: str) -> set[str]:
    """The words of normalized text, plus the special tokens some rules look for."""
    words = set(_WORDS.findall(norm))
    if "language" in words and ("model" in words or "models" in words):
        words.add("language_model")
    if "<" in norm or "[" in norm or "`" in norm:
        words.update(token for token in _SPECIAL if token in norm)
    return words
