"""Scoring of ``memstack eval capture``: what a message's stored memories say against its gold points.

Words are compared as :mod:`memstack.text` reads them everywhere (:func:`~memstack.text.comparison_words`, so
"don't" is ``do not``, then Porter stems, case-insensitive), with one reading of its own: a digit ordinal is its
number ("3rd" is ``3``), so "March 3rd" and "3 March" name the same day. A **key** is a word or a phrase (its words
consecutive in the memory), with alternatives separated by ``|``. A key word of four letters or more also matches
a memory word it begins ("intoleran" matches "intolerant", "allerg" "allergic"): gold writers cut words to a
common stem by hand, and a Porter stem ("intoler") is not what they write.

Per stored memory and per point:

* a point is **recalled** when some stored memory contains all its keys;
* a memory is **supported** when it recalls at least one point (precision = supported / stored);
* a memory is **distorted** (distortion = distorted / stored) when

  - ``date``: it holds a date or number token (a word with a digit, a month or weekday name, an ordinal word) found
    neither in the message nor in any point text of the case: an invented or shifted date. The message's own date,
    written in full ("27 November 2026", "Friday, 27 November 2026"), is the time the message was sent and counts
    as said: it is how a relative time is anchored ("two weeks ago (said on Friday, 27 November 2026)");
  - ``not``: it contains a phrase of the case's ``not`` list, word for word, the message's own date written in full
    aside as above (lower-cased, punctuation aside, not stemmed: the list names wrong text, so "lives in Osaka"
    does not rule out "lived in Osaka", nor "sister Ines" "sister-in-law Ines");
  - ``negation``: it says "not", "never" or "no longer" where the message has no negation at all;
  - ``partial``: it recalls no point but holds more than half of some point's keys (at least two), not all of them:
    a fact with a part dropped or changed (a lost subject, a lost qualifier);

* a memory that recalls two or more points is **fused** (one fact per memory is the goal; it still recalls them).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memstack.dates import MONTH_NAMES, WEEKDAY_NAMES
from memstack.text import NEGATIONS, comparison_words, stem

__all__ = [
    "DISTORTIONS",
    "CaptureCase",
    "CaseScore",
    "MemoryScore",
    "Point",
    "StoredMemory",
    "score_case",
    "summarize",
]

#: The reasons a memory is distorted, in the order they are checked.
DISTORTIONS = ("date", "not", "negation", "partial")

_ORDINAL_DIGITS = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_ORDINAL_TEXT = """first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth
    fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth thirtieth"""
_ORDINAL_WORDS = frozenset(_ORDINAL_TEXT.split())
_MONTHS = frozenset(MONTH_NAMES)
_WEEKDAYS = frozenset(WEEKDAY_NAMES) | {f"{d}s" for d in WEEKDAY_NAMES}
#: Negations a memory may add only where the message has one (of any kind).
_MEMORY_NEGATIONS = (("not",), ("never",), ("no", "longer"))


@dataclass(frozen=True, slots=True)
class Point:
    """One gold memory: the ideal text, the keys a memory must contain to recall it, and its category."""

    text: str
    keys: tuple[str, ...]
    category: str


@dataclass(frozen=True, slots=True)
class CaptureCase:
    id: str
    message: str
    at: datetime  # when the message was sent (aware)
    points: tuple[Point, ...]
    avoid: tuple[str, ...] = ()  # the case's "not" phrases


@dataclass(frozen=True, slots=True)
class StoredMemory:
    content: str
    category: str


@dataclass(frozen=True, slots=True)
class MemoryScore:
    content: str
    category: str
    recalls: tuple[int, ...]  # indexes of the points it recalls
    distorted: tuple[str, ...]  # reasons, from DISTORTIONS ("date: 2027" style detail)
    attributed: str  # the point category it is counted under

    @property
    def supported(self) -> bool:
        return bool(self.recalls)

    @property
    def fused(self) -> bool:
        return len(self.recalls) >= 2

    def to_dict(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "category": self.category,
            "recalls": list(self.recalls),
            "distorted": list(self.distorted),
            "attributed": self.attributed,
        }


@dataclass(frozen=True, slots=True)
class CaseScore:
    case: CaptureCase
    memories: tuple[MemoryScore, ...]
    recalled: tuple[bool, ...]  # per point
    ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.case.id,
            "message": self.case.message,
            "at": self.case.at.isoformat(),
            "points": [
                {"text": p.text, "category": p.category, "recalled": hit}
                for p, hit in zip(self.case.points, self.recalled, strict=True)
            ],
            "memories": [m.to_dict() for m in self.memories],
            "ms": self.ms,
        }


def _norm(word: str) -> str:
    if m := _ORDINAL_DIGITS.match(word):
        return m.group(1)
    return stem(word)


def _stems(text: str) -> list[str]:
    return [_norm(w) for w in comparison_words(text)]


def _phrase_in(phrase: Sequence[str], stems: Sequence[str]) -> bool:
    n = len(phrase)
    return n > 0 and any(tuple(stems[i : i + n]) == tuple(phrase) for i in range(len(stems) - n + 1))


#: A key word this long or longer also matches the memory words it begins (see the module docstring).
PREFIX_CHARS = 4


def _key_phrase_in(alt: str, stems: Sequence[str], words: Sequence[str]) -> bool:
    """Whether the key alternative ``alt`` is in the memory whose stems and lower-cased words are given: its words
    consecutive, each the same stem as the memory's word or (four letters or more) the start of it."""
    keys = [w.lower() for w in comparison_words(alt)]
    own = [_norm(w) for w in keys]
    n = len(keys)

    def same(i: int, j: int) -> bool:
        return stems[i] == own[j] or (len(keys[j]) >= PREFIX_CHARS and words[i].startswith(keys[j]))

    return n > 0 and any(all(same(i + j, j) for j in range(n)) for i in range(len(stems) - n + 1))


def _key_in(key: str, stems: Sequence[str], words: Sequence[str]) -> bool:
    return any(_key_phrase_in(alt, stems, words) for alt in key.split("|") if alt.strip())


def _date_tokens(text: str) -> list[str]:
    """The words of ``text`` that name a date or a number (lower-cased, as written)."""
    words = comparison_words(text)
    out = []
    for i, word in enumerate(words):
        near_digit = any(any(c.isdigit() for c in words[j]) for j in (i - 1, i + 1) if 0 <= j < len(words))
        if (
            any(c.isdigit() for c in word)
            or (word in _MONTHS and (word != "may" or near_digit))
            or word in _WEEKDAYS
            or word in _ORDINAL_WORDS
        ):
            out.append(word)
    return out


def _without_message_date(text: str, at: datetime) -> str:
    """``text`` with the message's own date, written in full, taken out (see the module docstring)."""
    day = at.date()
    month = calendar.month_name[day.month]
    weekday = calendar.day_name[day.weekday()]
    pattern = (
        rf"(?:{weekday},?\s+)?(?:the\s+)?{day.day}(?:st|nd|rd|th)?\s+(?:of\s+)?{month},?\s+{day.year}|"
        rf"(?:{weekday},?\s+)?{month}\s+{day.day}(?:st|nd|rd|th)?,?\s+{day.year}"
    )
    return re.sub(pattern, " ", text, flags=re.IGNORECASE)


def _has_negation(stems: Sequence[str]) -> bool:
    return any(_phrase_in(neg, stems) for neg in _MEMORY_NEGATIONS)


#: Contractions chat writes without the apostrophe ("i dont eat pork"): a negation the message has all the same.
_BARE_CONTRACTIONS = frozenset(
    [
        "dont",
        "doesnt",
        "didnt",
        "cant",
        "cannot",
        "wont",
        "isnt",
        "arent",
        "wasnt",
        "werent",
        "havent",
        "hasnt",
        "hadnt",
        "shouldnt",
        "wouldnt",
        "couldnt",
    ]
)


def _message_negates(message: str) -> bool:
    words = comparison_words(message)
    bare = _BARE_CONTRACTIONS & set(message.lower().split())
    return bool(bare) or any(w in NEGATIONS for w in words) or _phrase_in(("no", "longer"), words)


def score_case(case: CaptureCase, stored: Sequence[StoredMemory], *, ms: float = 0.0) -> CaseScore:
    """Each stored memory of ``case`` scored against its points (see the module docstring)."""
    said = set(_stems(case.message))
    for point in case.points:
        said.update(_stems(point.text))
    negated = _message_negates(case.message)
    recalled = [False] * len(case.points)
    scores = []
    for memory in stored:
        stems = _stems(memory.content)
        lowered = [w.lower() for w in comparison_words(memory.content)]
        matched = [sum(_key_in(k, stems, lowered) for k in p.keys) for p in case.points]
        recalls = tuple(i for i, p in enumerate(case.points) if p.keys and matched[i] == len(p.keys))
        for i in recalls:
            recalled[i] = True
        reasons = []
        invented = [t for t in _date_tokens(_without_message_date(memory.content, case.at)) if _norm(t) not in said]
        if invented:
            reasons.append("date: " + ", ".join(dict.fromkeys(invented)))
        words = comparison_words(_without_message_date(memory.content, case.at))
        avoided = [p for p in case.avoid if any(_phrase_in(comparison_words(a), words) for a in p.split("|"))]
        if avoided:
            reasons.append("not: " + ", ".join(avoided))
        if _has_negation(stems) and not negated:
            reasons.append("negation")
        if not recalls:
            partial = [
                i for i, p in enumerate(case.points) if 2 <= matched[i] < len(p.keys) and matched[i] > len(p.keys) / 2
            ]
            if partial:
                reasons.append("partial: " + case.points[partial[0]].text)
        scores.append(
            MemoryScore(memory.content, memory.category, recalls, tuple(reasons), _attribute(case, recalls, matched))
        )
    return CaseScore(case, tuple(scores), tuple(recalled), ms)


def _attribute(case: CaptureCase, recalls: Sequence[int], matched: Sequence[int]) -> str:
    """The point category a memory counts under: of the first point it recalls, else of the point it shares most
    keys with, else of the case's first point; ``none`` in a case without points."""
    if not case.points:
        return "none"
    if recalls:
        return case.points[recalls[0]].category
    best = max(range(len(case.points)), key=lambda i: matched[i])
    return case.points[best if matched[best] else 0].category


def _rates(cases: Sequence[CaseScore], category: str | None) -> dict[str, Any]:
    points = [
        hit
        for c in cases
        for p, hit in zip(c.case.points, c.recalled, strict=True)
        if category is None or p.category == category
    ]
    memories = [m for c in cases for m in c.memories if category is None or m.attributed == category]
    n = len(memories)
    return {
        "points": len(points),
        "stored": n,
        "point_recall": round(sum(points) / len(points), 4) if points else 0.0,
        "precision": round(sum(m.supported for m in memories) / n, 4) if n else 0.0,
        "distorted": sum(bool(m.distorted) for m in memories),
        "distortion": round(sum(bool(m.distorted) for m in memories) / n, 4) if n else 0.0,
        "fused": sum(m.fused for m in memories),
        "fused_rate": round(sum(m.fused for m in memories) / n, 4) if n else 0.0,
    }


def summarize(cases: Sequence[CaseScore]) -> dict[str, Any]:
    """The summary of scored cases: overall rates, the same per point category, distortions by reason, and what
    the cases without points stored."""
    overall = {"cases": len(cases), **_rates(cases, None)}
    categories = sorted({p.category for c in cases for p in c.case.points})
    reasons = {
        reason: sum(any(r.startswith(reason) for r in m.distorted) for c in cases for m in c.memories)
        for reason in DISTORTIONS
    }
    empty = [c for c in cases if not c.case.points]
    return {
        **overall,
        "distorted_by": reasons,
        "per_category": {
            category: {"cases": sum(any(p.category == category for p in c.case.points) for c in cases)}
            | _rates(cases, category)
            for category in categories
        },
        "no_point_cases": len(empty),
        "no_point_cases_stored": sum(bool(c.memories) for c in empty),
        "no_point_stored": sum(len(c.memories) for c in empty),
    }
