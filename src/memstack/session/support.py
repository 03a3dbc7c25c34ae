"""Plausibility check of diff entries against the raw exchange (seed 04 §7, "summarizer hallucination").

An entry is *supported* by an exchange when
1. every number in it (versions, dates, amounts) appears in the exchange,
2. every name or identifier in it (``FastAPI``, ``snake_case``, ``numpy.array``, capitalised words) appears in the
   exchange, compared case-insensitively, and
3. its content words — stop words and framing words such as "user", "prefers", "constraint" removed, the rest
   stemmed — are covered by the exchange's words: at least ``support_flag`` (0.6) for *supported*; between
   ``support_reject`` (0.34) and that for *weak* (applied with a warning); below it *unsupported* (rejected).

"The exchange" may be widened with ``known`` text: for an update, the key of the fact it replaces. Paraphrase
costs coverage, invention of numbers or names is never accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from memstack.session.settings import SessionSettings
from memstack.session.text import content_words, names, numbers, tokens
from memstack.types import Exchange

__all__ = ["Support", "Verdict", "check_support"]


class Verdict(StrEnum):
    SUPPORTED = "supported"
    WEAK = "weak"
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True, slots=True)
class Support:
    verdict: Verdict
    coverage: float  # share of the entry's content words found in the exchange
    missing_numbers: tuple[str, ...] = ()
    missing_names: tuple[str, ...] = ()
    user_coverage: float = 0.0  # the same share counting the user's message only

    @property
    def reason(self) -> str:
        parts = [f"{self.coverage:.0%} of its content words are in the exchange"]
        if self.missing_numbers:
            parts.append(f"numbers not in the exchange: {', '.join(self.missing_numbers)}")
        if self.missing_names:
            parts.append(f"names not in the exchange: {', '.join(self.missing_names)}")
        return "; ".join(parts)


class _Source:
    """The exchange pre-processed once per diff."""

    def __init__(self, exchange: Exchange) -> None:
        text = f"{exchange.user}\n{exchange.assistant}"
        self.words = content_words(text)
        self.user_words = content_words(exchange.user)
        self.numbers = numbers(text)
        bare = {w.strip("`'\"()[]{},;:!?.").lower() for w in text.split()}
        self.lower_tokens = {t.lower() for t in tokens(text)} | bare
        self.lower_text = text.lower()


@lru_cache(maxsize=64)
def _source(exchange: Exchange) -> _Source:
    return _Source(exchange)


def check_support(
    entry: str, exchange: Exchange, settings: SessionSettings | None = None, *, known: str = ""
) -> Support:
    s = settings or SessionSettings()
    src = _source(exchange)
    known_words = content_words(known)
    known_lower = known.lower()
    missing_numbers = tuple(
        sorted(n for n in numbers(entry) if n not in src.numbers and n not in known_lower and n not in src.lower_text)
    )
    missing_names = tuple(
        sorted(
            n
            for n in names(entry)
            if n not in src.lower_tokens and n not in known_lower and not _in_text(n, src.lower_text)
        )
    )
    words = content_words(entry, framing=True)
    if not words:
        return Support(Verdict.UNSUPPORTED, 0.0, missing_numbers, missing_names)
    covered = words & (src.words | known_words)
    coverage = len(covered) / len(words)
    user_coverage = len(words & (src.user_words | known_words)) / len(words)
    if missing_numbers or missing_names or coverage < s.support_reject:
        verdict = Verdict.UNSUPPORTED
    elif coverage < s.support_flag:
        verdict = Verdict.WEAK
    else:
        verdict = Verdict.SUPPORTED
    return Support(verdict, coverage, missing_numbers, missing_names, user_coverage)


def _in_text(name: str, lower_text: str) -> bool:
    """A multi-part identifier (``numpy.array``) may appear inside a longer token of the text."""
    return len(name) >= 4 and name in lower_text
