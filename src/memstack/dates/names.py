"""The names and counts dates are read with, and the bounds every computation stays inside (see :mod:`memstack.dates`).

Shared by a statement's dates (:mod:`memstack.dates`) and a question's time range
(:mod:`memstack.retrieval.time_range`), so both know the same month names ("Sept", "sep.") and count words.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable
from datetime import date, datetime

from memstack.errors import InputError
from memstack.text import NUMBER_WORDS

#: The first and last moments memstack reads dates against, and the first and last days a date may resolve to (naive:
#: a wall time, whatever its zone). A century inside each end of :mod:`datetime`'s range: the arithmetic a phrase
#: asks for against a time in range ("next year", "99 years ago", a question's slack, a zone's offset) stays in it.
EARLIEST = datetime(100, 1, 1)
LATEST = datetime(9899, 12, 31, 23, 59, 59, 999999)


def check_time(when: datetime, what: str) -> datetime:
    """``when`` unchanged if its wall time lies within :data:`EARLIEST` … :data:`LATEST`; otherwise
    :func:`out_of_range` naming ``what`` (the field the caller sent it in)."""
    if not in_range(when):
        raise out_of_range(what, when.isoformat())
    return when


def in_range(when: datetime) -> bool:
    """Whether ``when``'s wall time lies within :data:`EARLIEST` … :data:`LATEST`."""
    return EARLIEST <= when.replace(tzinfo=None) <= LATEST


def out_of_range(what: str, got: str) -> InputError:
    """The error for a time out of bounds, naming the field it came in."""
    return InputError(
        f"{what} must be a time between {EARLIEST.date().isoformat()} and {LATEST.date().isoformat()}, got {got}"
    )


def in_bounds(first: date, last: date) -> bool:
    return EARLIEST.date() <= first and last <= LATEST.date()


_MONTH_GROUPS = (
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
)
_WEEKDAY_GROUPS = (
    ("monday", "mon"),
    ("tuesday", "tue", "tues"),
    ("wednesday", "wed"),
    ("thursday", "thu", "thur", "thurs"),
    ("friday", "fri"),
    ("saturday", "sat"),
    ("sunday", "sun"),
)
#: Month names and abbreviations → month number (1-12).
MONTHS: dict[str, int] = {name: i for i, names in enumerate(_MONTH_GROUPS, start=1) for name in names}
#: Weekday names and abbreviations → weekday number (Monday 0, as :meth:`datetime.date.weekday`).
WEEKDAYS: dict[str, int] = {name: i for i, names in enumerate(_WEEKDAY_GROUPS) for name in names}
#: The whole names alone, in order ("sun" and "sat" are words too): for patterns that must not read abbreviations.
MONTH_NAMES: tuple[str, ...] = tuple(names[0] for names in _MONTH_GROUPS)
WEEKDAY_NAMES: tuple[str, ...] = tuple(names[0] for names in _WEEKDAY_GROUPS)

#: Month and weekday names that are also everyday words ("I may go", "in the sun", "dec."): a date only beside a
#: number ("may 3", "sat 12").
AMBIGUOUS_NAMES = frozenset({"may", "mar", "jan", "sat", "sun", "wed", "dec", "oct", "aug", "mon", "fri", "tue"})

#: How many a count word stands for ("two weeks ago", "in a few days"); "several" only in a question's fuzzy range.
COUNTS: dict[str, int] = {
    **{w: n for w, n in NUMBER_WORDS.items() if 1 <= n <= 12},
    "a": 1,
    "an": 1,
    "a couple of": 2,
    "a couple": 2,
    "a few": 3,
    "several": 4,
}
_FUZZY_COUNTS = frozenset({"several"})
#: Counts that name no number: a statement's "a few weeks ago" stays in its words, never a day.
VAGUE_COUNTS = frozenset({"a couple of", "a couple", "a few", "several"})


def alternation(names: Iterable[str]) -> str:
    """A regex alternation of names, longest first (so "june" wins over "jun")."""
    return "|".join(sorted(names, key=len, reverse=True))


#: A regular-expression alternation of every month name and abbreviation.
MONTH_PATTERN = alternation(MONTHS)
DAY_NAMES_PATTERN = alternation(d for d in WEEKDAYS if len(d) > 3)  # no "sun", "sat", "wed" alone
#: A regular-expression alternation of the count words ("two", "a couple of", …).
COUNT_PATTERN = alternation(COUNTS)


def count_value(raw: str) -> int:
    raw = raw.lower()
    return int(raw) if raw.isdigit() else COUNTS.get(raw, 1)


def day_text(d: date) -> str:
    return f"{d.day} {calendar.month_name[d.month]} {d.year}"


def add_months(d: date, months: int) -> date:
    index = d.year * 12 + d.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(d.day, calendar.monthrange(year, month + 1)[1]))


def month_span(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
