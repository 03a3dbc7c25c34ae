"""Time expressions in a query, resolved to a date range against the time the question is asked.

"on 16 November, 2023", "November 16, 2023", "in May 2023", "in 2023", "last June", "in December",
"yesterday", "last week", "two weeks ago", "a few days ago", "last weekend", "this month"… become a
:class:`TimeRange` ``[start, end)``. Retrieval then prefers items whose time falls in or near that range, and the
expression is removed from the words matched lexically (a month name is not a topic). Relative expressions are
fuzzy ("two weeks ago" is not one exact day), so their ranges are widened by ``slack``.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

__all__ = ["TimeRange", "find_time_range"]

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MON = (
    r"(january|february|march|april|may|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "several": 4,
}  # fmt: skip
_NUMBER = r"(\d{1,3}|a couple of|a few|several|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_F = re.IGNORECASE
_DAY_MONTH_YEAR = re.compile(rf"\b(?:on\s+)?(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MON},?\s+{_YEAR}\b", _F)
_MONTH_DAY_YEAR = re.compile(rf"\b(?:on\s+)?{_MON}\s+{_DAY},?\s*{_YEAR}\b", _F)
_MONTH_YEAR = re.compile(rf"\b(?:in\s+|during\s+)?{_MON},?\s+(?:of\s+)?{_YEAR}\b", _F)
_AGO = re.compile(rf"\b{_NUMBER}\s+(day|week|month|year)s?\s+ago\b", _F)
_LAST_MONTH_NAME = re.compile(rf"\b(last|this|next|in|during)\s+{_MON}(?!\s*\d)\b", _F)
_YEAR_ONLY = re.compile(rf"\b(?:in|during|of|since)\s+{_YEAR}\b", _F)
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
                start = datetime(int(m.group(3)), _MONTHS[mon.lower()], int(day))
            except ValueError:
                continue  # "31 February": not a date
            return TimeRange(start, start + timedelta(days=1), m.group(0), m.span())
    if m := _MONTH_YEAR.search(query):
        start, end = _month_range(int(m.group(2)), _MONTHS[m.group(1).lower()])
        return TimeRange(start, end, m.group(0), m.span())
    return None


def _relative(query: str, now: datetime) -> TimeRange | None:
    if m := _AGO.search(query):
        count = _NUMBERS.get(m.group(1).lower()) or int(m.group(1))
        days = count * _UNIT_DAYS[m.group(2).lower()]
        centre = _day(now, days)
        slack = timedelta(days=max(1, days // 4))
        return TimeRange(centre, centre + timedelta(days=1), m.group(0), m.span(), slack)
    if m := _LAST_MONTH_NAME.search(query):
        which, month = m.group(1).lower(), _MONTHS[m.group(2).lower()]
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


def find_time_range(query: str, now: datetime) -> TimeRange | None:
    """The first time expression of ``query`` resolved against ``now`` (naive local time), or ``None``.

    Absolute dates win over relative ones; a bare year ("in 2023") is the weakest reading."""
    now = now.replace(tzinfo=None)
    found = _absolute(query) or _relative(query, now)
    if found is None and (m := _YEAR_ONLY.search(query)):
        year = int(m.group(1))
        found = TimeRange(datetime(year, 1, 1), datetime(year + 1, 1, 1), m.group(0), m.span())
    return found
