"""The guard's content check: :func:`scan` text for the attack families of :mod:`memstack.guard`.

Rules live in :mod:`~memstack.guard.phrases` (phrase rules), :mod:`~memstack.guard.claims` (claims of
authority, rules declared void), :mod:`~memstack.guard.directives` (text addressed to the model),
:mod:`~memstack.guard.standing` (standing orders) and :mod:`~memstack.guard.foreign` (other languages);
:mod:`~memstack.guard.rules` holds the machinery. Text is read in the normal form of :mod:`~memstack.guard.unmask`
(invisible characters, compatibility forms and look-alike letters undone) and through the decoding passes of
:mod:`~memstack.guard.decode` (hidden tag text, zero-width word gaps, base64, rot13, leetspeak, spaced and reversed
letters): what a decoded reading trips is reported with ``obfuscated``, and so is a sentence written in invisible
tag characters, whatever it says.
"""

from __future__ import annotations

import re
import unicodedata

from memstack.guard.claims import CLAIM_RULES
from memstack.guard.decode import decoded_variants, hidden_prose
from memstack.guard.directives import DIRECTIVE_RULES, general
from memstack.guard.foreign import scan_foreign
from memstack.guard.phrases import MORE_RULES, TEXT_RULES
from memstack.guard.rules import normalize, words_of
from memstack.guard.standing import STANDING_RULES
from memstack.guard.unmask import INVISIBLE

__all__ = ["FLAGS", "scan"]

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

# Case-sensitive: an upper-case role label at the start of a line ("SYSTEM: ...", "ADMIN OVERRIDE: ...").
_UPPER_LABELS = ("SYSTEM", "DEVELOPER", "ADMIN", "OPERATOR", "ＳＹＳＴＥＭ")
_UPPER_ROLE = re.compile(
    r"^\s*(?:#{1,6}\s*|\*\*|\[)?(?:SYSTEM|DEVELOPER|ADMIN|ADMINISTRATOR|OPERATOR)(?:\s+[A-Z]+)?\s*(?:\*\*|\])?\s*:",
    re.M,
)


def scan(text: str, *, instructions: bool = False) -> tuple[str, ...]:
    """The authority-taking patterns found in ``text`` (see :mod:`memstack.guard`); empty for ordinary text.

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
    TEXT_RULES.run(norm, words, found)
    MORE_RULES.run(norm, words, found)
    CLAIM_RULES.run(norm, words, found)
    if not instructions:
        DIRECTIVE_RULES.run(norm, words, found)
        STANDING_RULES.run(norm, words, found)
    general(norm, words, found, instructions=instructions)
    scan_foreign(text, norm, found, instructions=instructions)
    if "role_marker" not in found and any(label in text for label in _UPPER_LABELS):
        folded = text if text.isascii() else unicodedata.normalize("NFKC", text.translate(INVISIBLE))
        if _UPPER_ROLE.search(folded):
            found.append("role_marker")
    return found
