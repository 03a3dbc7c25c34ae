"""Small lexical helpers shared by the classifier and the dedup rule: tokens, light stems, value words.

Everything here is pure, cheap (microseconds per sentence) and deterministic.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "MONTHS",
    "NEGATIONS",
    "NUMBER_WORDS",
    "STOPWORDS",
    "WEEKDAYS",
    "content_stems",
    "is_value",
    "stem",
    "tokens",
    "values",
]

MONTHS: dict[str, int] = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}

WEEKDAYS: dict[str, int] = {
    name: i
    for i, names in enumerate(
        (
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thur", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        )
    )
    for name in names
}

NUMBER_WORDS: dict[str, int] = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
    "million": 1_000_000,
    "billion": 1_000_000_000,
}

NEGATIONS = frozenset({"not", "no", "never", "nobody", "nothing", "none", "neither", "nor", "without"})

_STOPWORD_TEXT = """a an the is are was were be been being am of to in on at for with by from and or but as that
    this these those
    it its there their his her he she they them we our you your i my me mine do does did has have had having will
    would can could should may might must shall very just also so than then too user users s"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# Short month/weekday abbreviations that are also common words only count as values in a date-like context.
_AMBIGUOUS_VALUES = frozenset({"may", "mar", "jan", "sat", "sun", "wed", "dec", "oct", "aug", "mon", "fri", "tue"})

_TOKEN = re.compile(r"[a-z]+|\d+(?:[.:,]\d+)*")
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")


@lru_cache(maxsize=4096)
def tokens(text: str) -> tuple[str, ...]:
    """Lower-case word and number tokens; ``n't`` becomes ``not``, ordinals lose their suffix, ``'s`` is dropped."""
    low = text.lower().replace("’", "'").replace("n't", " not").replace("'s", " ")
    low = _ORDINAL.sub(r"\1", low)
    return tuple(_TOKEN.findall(low))


def stem(word: str) -> str:
    """A light suffix stripper (*likes / liked / liking / like* → ``lik``), never a linguistic claim."""
    if not word.isalpha():
        return word
    if word in NUMBER_WORDS:
        return str(NUMBER_WORDS[word])
    base = word
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "es" and not word.endswith(("ses", "xes", "zes", "ches", "shes")):
                continue
            base = word[: -len(suffix)]
            break
    if base.endswith("e") and len(base) > 3:
        base = base[:-1]
    return base


def is_value(word: str, neighbours: tuple[str, ...] = ()) -> bool:
    """A date, number, month or weekday token: the kind of word whose change makes a different fact."""
    if word[0].isdigit() or word in NUMBER_WORDS:
        return True
    if word in MONTHS or word in WEEKDAYS:
        if word in _AMBIGUOUS_VALUES:
            return any(n[0].isdigit() for n in neighbours)
        return True
    return False


def content_stems(toks: tuple[str, ...]) -> list[str]:
    """Stems of the non-stopword tokens, in order (values included)."""
    return [stem(w) for w in toks if w not in STOPWORDS]


def values(toks: tuple[str, ...]) -> frozenset[str]:
    """The value tokens of a sentence, normalised: ``two`` → ``2``, ``June`` → ``month:6``, ``Fri`` → ``day:4``."""
    out: set[str] = set()
    for i, word in enumerate(toks):
        if not is_value(word, toks[max(0, i - 2) : i + 3]):
            continue
        if word in NUMBER_WORDS:
            out.add(str(NUMBER_WORDS[word]))
        elif word in MONTHS:
            out.add(f"month:{MONTHS[word]}")
        elif word in WEEKDAYS:
            out.add(f"day:{WEEKDAYS[word]}")
        else:
            out.add(word.replace(",", ""))
    return frozenset(out)
