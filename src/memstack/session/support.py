"""Plausibility check of diff entries against the raw exchange (seed 04 §7, "summarizer hallucination").

An entry is *supported* by an exchange when
1. every number in it (versions, dates, amounts) appears in the exchange,
2. every name or identifier in it (``FastAPI``, ``snake_case``, ``numpy.array``, capitalised words) appears in the
   exchange, compared case-insensitively, and
3. its content words — stop words and framing words such as "user", "prefers", "constraint" removed, the rest
   stemmed — are covered by the exchange's words: at least ``support_flag`` (0.6) for *supported*; between
   ``support_reject`` (0.34) and that for *weak* (applied with a warning); below it *unsupported* (rejected).

"The exchange" may be widened with ``known`` text: for an update, the key of the fact it replaces. Paraphrase
costs coverage, invention of numbers or names is never accepted — but another spelling of a name the exchange
used is not an invention: a known alias ("JS" for "JavaScript", "Postgres" for "PostgreSQL"), a name plus a usual
suffix ("Mongo" / "MongoDB"), an acronym of words in the exchange ("NYC" for "New York City") or the words of an
acronym it used count as present.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from memstack.session.settings import SessionSettings
from memstack.session.text import content_words, names
from memstack.text import code_words, comparison_words, numbers, stem, words
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


#: Names of one thing that people use interchangeably (lower case).
_ALIASES: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split())
    for group in (
        "postgresql postgres psql pg",
        "javascript js ecmascript",
        "typescript ts",
        "python py python3",
        "kubernetes k8s kube",
        "node.js nodejs node",
        "golang go",
        "c# csharp",
        "c++ cpp",
        ".net dotnet",
        "tensorflow tf",
        "pytorch torch",
        "numpy np",
        "pandas pd",
        "macos osx",
        "neovim nvim",
        "sqlite sqlite3",
        "react reactjs react.js",
        "vue vuejs vue.js",
        "next.js nextjs",
    )
)
_ALIAS_OF = {name: group for group in _ALIASES for name in group}
#: Endings that make the long form of a name ("mongo" → "mongodb", "postgres" → "postgresql").
_NAME_SUFFIXES = frozenset({"ql", "sql", "db", "js", ".js", "lang"})
_CAPITALISED_RUN = re.compile(r"(?:\b[A-Z][a-z]+\b\s+){1,4}\b[A-Z][a-z]+\b")


class _Source:
    """The exchange pre-processed once per diff."""

    def __init__(self, exchange: Exchange) -> None:
        text = f"{exchange.user}\n{exchange.assistant}"
        self.words = content_words(text)
        self.user_words = content_words(exchange.user)
        self.numbers = set(numbers(text))
        bare = {w.strip("`'\"()[]{},;:!?.").lower() for w in text.split()}
        self.lower_tokens = {t.lower() for t in code_words(text)} | bare
        self.lower_text = text.lower()
        lw = words(text)
        self.initials = {"".join(w[0] for w in lw[i : i + n]) for n in range(2, 6) for i in range(len(lw) - n + 1)}

    def knows(self, name: str) -> bool:
        """Whether the exchange used ``name`` (lower case) under this or another usual spelling."""
        if name in self.lower_tokens or _in_text(name, self.lower_text):
            return True
        if any(alias in self.lower_tokens for alias in _ALIAS_OF.get(name, ())):
            return True
        if name.isalpha() and 2 <= len(name) <= 5 and name in self.initials:
            return True
        return any(_suffixed(name, t) or _suffixed(t, name) for t in self.lower_tokens if len(t) >= 3)

    def acronym_words(self, entry: str) -> set[str]:
        """Words of capitalised runs in ``entry`` whose acronym the exchange used ("New York City" for "NYC")."""
        out: set[str] = set()
        for run in _CAPITALISED_RUN.findall(entry):
            words = run.split()
            if "".join(w[0] for w in words).lower() in self.lower_tokens:
                out.update(w.lower() for w in words)
                out.update(stem(w) for w in words)
        return out


def _suffixed(long: str, short: str) -> bool:
    return len(short) >= 3 and long.startswith(short) and long[len(short) :] in _NAME_SUFFIXES


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
    spelled = src.acronym_words(entry)
    entry_names = names(entry)
    missing_names = tuple(
        sorted(n for n in entry_names if n not in known_lower and n not in spelled and not src.knows(n))
    )
    respelled_names = [n for n in entry_names if n not in missing_names]  # "k8s" for "Kubernetes": its 8 is no number
    missing_numbers = tuple(
        sorted(
            n
            for n in set(numbers(entry))
            if n not in src.numbers
            and n not in known_lower
            and n not in src.lower_text
            and not any(n in name for name in respelled_names)
        )
    )
    words = content_words(entry, framing=True)
    if not words:
        return Support(Verdict.UNSUPPORTED, 0.0, missing_numbers, missing_names)
    written = {stem(w): w for w in comparison_words(entry)}  # a stem's word as written: "k8s" for ``k8``
    respelled = {
        w for w in words - src.words - known_words if w in spelled or src.knows(w) or src.knows(written.get(w, w))
    }
    covered = words & (src.words | known_words | respelled)
    coverage = len(covered) / len(words)
    user_coverage = len(words & (src.user_words | known_words | respelled)) / len(words)
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
