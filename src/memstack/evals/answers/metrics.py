"""The answer metrics of the LoCoMo papers: token F1 and BLEU-1 against the gold answer, and J, the share of
answers a judge model labels CORRECT.

Answers are normalised as SQuAD's evaluation does (lower case, punctuation and the articles a/an/the removed,
white space folded) before they are split into tokens.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Graded", "Scores", "bleu1", "normalize_answer", "score", "token_f1"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> list[str]:
    """``"The 7th of May, 2023!"`` → ``["7th", "of", "may", "2023"]``."""
    return _ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split()


def token_f1(answer: str, gold: str) -> float:
    """Harmonic mean of token precision and recall (tokens counted with multiplicity); 1.0 when both are empty."""
    got, want = normalize_answer(answer), normalize_answer(gold)
    if not got or not want:
        return float(got == want)
    common = sum((Counter(got) & Counter(want)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)


def bleu1(answer: str, gold: str) -> float:
    """BLEU with unigrams only against one reference: clipped unigram precision times the brevity penalty
    ``exp(1 - r/c)`` when the answer (``c`` tokens) is shorter than the gold answer (``r``)."""
    got, want = normalize_answer(answer), normalize_answer(gold)
    if not got or not want:
        return float(got == want)
    clipped = sum((Counter(got) & Counter(want)).values())
    brevity = 1.0 if len(got) >= len(want) else math.exp(1 - len(want) / len(got))
    return brevity * clipped / len(got)


@dataclass(frozen=True, slots=True)
class Graded:
    """One question answered and judged."""

    category: int
    correct: bool
    f1: float
    bleu1: float
    context_tokens: int
    latency_ms: float


@dataclass(frozen=True, slots=True)
class Scores:
    questions: int
    j: float  # percent judged CORRECT
    f1: float  # mean token F1, percent
    bleu1: float  # mean BLEU-1, percent
    context_tokens: float  # mean per question

    def as_dict(self) -> dict[str, float | int]:
        return {
            "questions": self.questions,
            "j": round(self.j, 2),
            "f1": round(self.f1, 2),
            "bleu1": round(self.bleu1, 2),
            "context_tokens": round(self.context_tokens, 1),
        }


def score(graded: Iterable[Graded]) -> Scores:
    """Means over ``graded`` (J, F1 and BLEU-1 in percent, as the papers report them); zeros when empty."""
    rows: Sequence[Graded] = list(graded)
    if not rows:
        return Scores(0, 0.0, 0.0, 0.0, 0.0)
    n = len(rows)
    return Scores(
        questions=n,
        j=100 * sum(r.correct for r in rows) / n,
        f1=100 * sum(r.f1 for r in rows) / n,
        bleu1=100 * sum(r.bleu1 for r in rows) / n,
        context_tokens=sum(r.context_tokens for r in rows) / n,
    )
