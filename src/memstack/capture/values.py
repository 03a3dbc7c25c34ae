"""Value words: the dates, numbers, months and weekdays whose change makes a different fact ("the exam is on 3 May"
/ "the exam is on 10 May"). Read by the dedup rule and by consolidation; words come from :mod:`memstack.text`, month
and weekday names from :mod:`memstack.dates`.

Everything here is pure, cheap (microseconds per sentence) and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstack.dates import AMBIGUOUS_NAMES, MONTHS, WEEKDAYS
from memstack.text import NUMBER_WORDS, comparison_words

__all__ = ["is_value", "values"]

_ORDINAL = re.compile(r"(?<=\d)(?:st|nd|rd|th)$")


def is_value(word: str, neighbours: Sequence[str] = ()) -> bool:
    """Whether a word (as :func:`memstack.text.comparison_words` reads it) is a date, number, month or weekday; an
    ambiguous month or weekday ("may", "sun") only next to a number among ``neighbours``."""
    if word[0].isdigit() or word in NUMBER_WORDS:
        return True
    if word in MONTHS or word in WEEKDAYS:
        if word in AMBIGUOUS_NAMES:
            return any(n[0].isdigit() for n in neighbours)
        return True
    return False


def values(text: str) -> frozenset[str]:
    """The values of a text, normalised: numbers without thousands separators or ordinal endings ("1,000" →
    ``1000``, "3rd" → ``3``), ``two`` → ``2``, ``June`` → ``month:6``, ``Fri`` → ``day:4``."""
    out: set[str] = set()
    toks = comparison_words(text)
    for i, word in enumerate(toks):
        if not is_value(word, toks[max(0, i - 2) : i + 3]):
            continue
        if word[0].isdigit():
            out.add(_ORDINAL.sub("", word).replace(",", ""))
        elif word in NUMBER_WORDS:
            out.add(str(NUMBER_WORDS[word]))
        elif word in MONTHS:
            out.add(f"month:{MONTHS[word]}")
        else:
            out.add(f"day:{WEEKDAYS[word]}")
    return frozenset(out)
