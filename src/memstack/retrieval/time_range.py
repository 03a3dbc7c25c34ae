"""A question's time range: ``find_time_range("what did I do last June", now)`` is the :class:`TimeRange` the
question is about, ``[start, end)``, widened by ``slack`` where the words are fuzzy ("two weeks ago" is not one exact
day; "several" counts), and the words it was read from, which the lexical query leaves out (a month name is not a
topic). A question looks back: a bare month is the last one. A range off the calendar's bounds
(:data:`memstack.dates.EARLIEST` … :data:`~memstack.dates.LATEST`) is dropped.

It reads month names and counts with the tables of :mod:`memstack.dates`, which reads a statement's dates.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from memstack.dates import COUNT_PATTERN, EARLIEST, LATEST, MONTH_PATTERN, MONTHS, count_value

__all__ = ["TimeRange", "find_time_range"]

_MON = r"(" + MONTH_PATTERN + r")\.?"
_QDAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_QYEAR = r"((?:19|20)\d\d)"
_NUMBER = r"(\d{1,3}|" + COUNT_PATTERN + r")"
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_F = re.IGNORECASE
_DAY_MONTH_YEAR = re.compile(rf"\b(?:on\s+)?(?:the\s+)?{_QDAY}\s+(?:of\s+)?{_MON},?\s+{_QYEAR}\b", _F)
_MONTH_DAY_YEAR = re.compile(rf"\b(?:on\s+)?{_MON}\s+{_QDAY},?\s*{_QYEAR}\b", _F)
_MONTH_YEAR = re.compile(rf"\b(?:in\s+|during\s+)?{_MON},?\s+(?:of\s+)?{_QYEAR}\b", _F)
_AGO = re.compile(rf"\b{_NUMBER}\s+(day|week|month|year)s?\s+ago\b", _F)
_LAST_MONTH_NAME = re.compile(rf"\b(last|this|next|in|during)\s+{_MON}(?!\s*\d)\b", _F)
_YEAR_ONLY = re.compile(rf"\b(?:in|during|of|since)\s+{_QYEAR}\b", _F)
_RELATIVE = re.compile(r"\b(yesterday|today|tonight|(?:last|this|next)\s+(?:week|weekend|month|year))\b", _F)


@dataclass(frozen=True, slots=True)
class TimeRange:
    """``[start, end)`` plus the words it was read from, their position, and how fuzzy it is."""

    start: datetime
    end: datetime
    text: str
    span: tuple[int, int]
    slack: timedelta = timedelta(0)

    def distance_days(self, when: datetime) -> float:
        """0 inside the widened range, else days to its nearest edge."""
        start, end = self.start - self.slack, self.end + self.slack
        if when < start:
            return (start - when).total_seconds() / 86400.0
        if when >= end:
            return (when - end).total_seconds() / 86400.0
        return 0.0

    def strip(self, query: str) -> str:
        """The query without the time expression."""
        return f"{query[: self.span[0]]} {query[self.span[1] :]}".strip()


def _month_range(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1)
    return start, datetime(year + (month == 12), month % 12 + 1, 1)


def _day(now: datetime, days_back: int = 0) -> datetime:
    return datetime(now.year, now.month, now.day) - timedelta(days=days_back)


def _absolute(query: str) -> TimeRange | None:
    for rx, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        if m := rx.search(query):
            day, mon = (m.group(1), m.group(2)) if order == "dmy" else (m.group(2), m.group(1))
            try:
                start = datetime(int(m.group(3)), MONTHS[mon.lower()], int(day))
            except ValueError:
                continue  # "31 February": not a date
            return TimeRange(start, start + timedelta(days=1), m.group(0), m.span())
    if m := _MONTH_YEAR.search(query):
        start, end = _month_range(int(m.group(2)), MONTHS[m.group(1).lower()])
        return TimeRange(start, end, m.group(0), m.span())
    return None


def _relative(query: str, now: datetime) -> TimeRange | None:
    if m := _AGO.search(query):
        count = count_value(m.group(1))
        days = count * _UNIT_DAYS[m.group(2).lower()]
        centre = _day(now, days)
        slack = timedelta(days=max(1, days // 4))
        return TimeRange(centre, centre + timedelta(days=1), m.group(0), m.span(), slack)
    if m := _LAST_MONTH_NAME.search(query):
        which, month = m.group(1).lower(), MONTHS[m.group(2).lower()]
        if m.group(2).lower() == "may" and which in ("in", "during"):
            pass  # "in may" is far more often the verb than the month; fall through
        else:
            year = now.year
            if which == "next":
                year += month <= now.month
            elif which == "last" or which in ("in", "during"):
                year -= month > now.month or (which == "last" and month == now.month)
            start, end = _month_range(year, month)
            return TimeRange(start, end, m.group(0), m.span())
    if m := _RELATIVE.search(query):
        word = " ".join(m.group(1).lower().split())
        today = _day(now)
        if word in ("today", "tonight"):
            start, end = today, today + timedelta(days=1)
        elif word == "yesterday":
            start, end = today - timedelta(days=1), today
        else:
            which, unit = word.split()
            step = {"last": -1, "this": 0, "next": 1}[which]
            if unit in ("week", "weekend"):
                monday = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
                start, end = monday, monday + timedelta(days=7)
                if unit == "weekend":
                    start = monday + timedelta(days=5)
            elif unit == "month":
                index = now.year * 12 + now.month - 1 + step
                start, end = _month_range(index // 12, index % 12 + 1)
            else:
                start, end = datetime(now.year + step, 1, 1), datetime(now.year + step + 1, 1, 1)
        return TimeRange(start, end, m.group(0), m.span(), timedelta(days=1))
    return None


def _year_only(query: str) -> TimeRange | None:
    if m := _YEAR_ONLY.search(query):
        year = int(m.group(1))
        return TimeRange(datetime(year, 1, 1), datetime(year + 1, 1, 1), m.group(0), m.span())
    return None


def _bounded(found: TimeRange) -> bool:
    """The range, widened by its slack, lies within :data:`EARLIEST` … :data:`LATEST` (so ``distance_days`` and
    every comparison with a stored time stay on the calendar)."""
    try:
        return found.start - found.slack >= EARLIEST and found.end + found.slack <= LATEST
    except OverflowError:
        return False


def find_time_range(query: str, now: datetime) -> TimeRange | None:
    """The first time expression of ``query`` resolved against ``now`` (naive local time), or ``None``.

    Absolute dates win over relative ones; a bare year ("in 2023") is the weakest reading. A reading that leaves
    :data:`EARLIEST` … :data:`LATEST` ("next year" asked in 9899) is no range: the question is answered without one."""
    now = now.replace(tzinfo=None)
    readings: tuple[Callable[[], TimeRange | None], ...] = (
        lambda: _absolute(query),
        lambda: _relative(query, now),
        lambda: _year_only(query),
    )
    for read in readings:
        try:
            found = read()
        except (OverflowError, ValueError):  # "last week" read in the year 1: off the calendar
            continue
        if found is not None:
            return found if _bounded(found) else None
    return None
