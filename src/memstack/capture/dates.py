"""Resolve relative and partial dates against the time a message was sent.

``find_dates("my quiz is next Thursday", at)`` finds the mention and its absolute day; :func:`resolve` rewrites the
text with absolute dates ("my quiz is on Thursday, 16 May 2024") so a memory stays true after the week has passed.

Conventions (documented, not guessed per call):
- ``next <weekday>`` / ``this <weekday>`` / bare ``<weekday>`` in a present or future sentence: the first such day
  after today (``this`` includes today); ``last <weekday>`` or a bare weekday in a past-tense sentence: the most
  recent one before today.
- ``next / last / this week|month|year|weekend``: the calendar unit after / before / containing today
  (weeks start on Monday).
- ``in N days|weeks|months|years``, ``N … from now``, ``N … ago``: calendar arithmetic from today.
- A month with or without a day and no year ("June 5th", "in June", "last June"): the next one in a future sentence,
  the last one in a past-tense sentence; ``last``/``next`` force the direction.
Times of day are ignored: memories are dated to the day.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from enum import StrEnum

from memstack.capture.text import MONTHS, NUMBER_WORDS, WEEKDAYS

__all__ = ["DateMention", "Granularity", "expiry_for", "find_dates", "is_past_tense", "resolve"]


class Granularity(StrEnum):
    DAY = "day"
    WEEKEND = "weekend"
    WEEK = "week"
    MONTH = "month"
    YEAR = "year"


@dataclass(frozen=True, slots=True)
class DateMention:
    start: int  # span in the original text (includes a leading "on"/"in" when present)
    end: int
    text: str
    first: date  # first day the mention covers
    last: date  # last day it covers (== first for a single day)
    granularity: Granularity

    def render(self, *, bare: bool = False) -> str:
        """Absolute wording that can replace the mention in a sentence (``bare``: without "on"/"in")."""
        text = self._render()
        return text.split(" ", 1)[1] if bare else text

    def _render(self) -> str:
        f = self.first
        if self.granularity is Granularity.DAY:
            return f"on {calendar.day_name[f.weekday()]}, {f.day} {calendar.month_name[f.month]} {f.year}"
        if self.granularity is Granularity.WEEKEND:
            return f"on the weekend of {f.day} {calendar.month_name[f.month]} {f.year}"
        if self.granularity is Granularity.WEEK:
            return f"in the week of {f.day} {calendar.month_name[f.month]} {f.year}"
        if self.granularity is Granularity.MONTH:
            return f"in {calendar.month_name[f.month]} {f.year}"
        return f"in {f.year}"


_MONTH_NAMES = sorted(MONTHS, key=len, reverse=True)
_DAY_NAMES = sorted((d for d in WEEKDAYS if len(d) > 3), key=len, reverse=True)  # no "sun", "sat", "wed" alone
_MONTH = r"(?P<month>" + "|".join(_MONTH_NAMES) + r")\.?"
_WEEKDAY = r"(?P<weekday>" + "|".join(_DAY_NAMES) + r")"
_COUNT = r"(?P<count>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|a few)"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_DAYNUM = r"(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (kind, re.compile(r"\b(?:on |in )?(?:the )?" + body + r"\b", re.IGNORECASE))
    for kind, body in [
        ("iso", r"(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)"),
        ("month_day", _MONTH + r" " + _DAYNUM + r"(?:,? " + _YEAR + r")?"),
        ("day_month", _DAYNUM + r" (?:of )?" + _MONTH + r"(?:,? " + _YEAR + r")?"),
        ("relday", r"(?P<rel>day after tomorrow|day before yesterday|today|tonight|tomorrow|yesterday)"),
        ("ago", _COUNT + r" " + _UNIT + r" (?P<dir>ago|from now|later)"),
        ("weekday", r"(?:(?P<which>next|last|this|this past|this coming|coming) )?" + _WEEKDAY),
        ("unit", r"(?P<which>next|last|this|this past|this coming) (?P<unit>weekend|week|month|year)"),
        ("month", r"(?:(?P<which>next|last|this) )?" + _MONTH + r"(?:,? " + _YEAR + r")?"),
    ]
] + [
    # "in" is part of these mentions, not an optional prefix: "in two weeks", "in 2025"
    ("in_n", re.compile(r"\bin " + _COUNT + r" " + _UNIT + r"\b", re.IGNORECASE)),
    ("year", re.compile(r"\bin " + _YEAR + r"\b", re.IGNORECASE)),
]

_PAST = re.compile(
    r"\b(was|were|went|did|had|got|made|took|saw|met|came|ago|last|yesterday|used to|"
    r"\w{3,}ed|bought|ran|won|lost|left|told|said|felt|found|gave|began|wrote|ate|spent|moved)\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(
    r"\b(will|'ll|going to|gonna|next|tomorrow|plan|planning|upcoming|coming|soon|is on|due|moved to|"
    r"rescheduled|postponed|pushed back|pushed to)\b",
    re.IGNORECASE,
)
_BARE_BEFORE = re.compile(r"\b(to|by|until|till|before|after|from|since|of|for|through)\s*$", re.IGNORECASE)


def is_past_tense(text: str) -> bool:
    """A rough tense guess for resolving bare weekdays and months: past markers without future ones."""
    return bool(_PAST.search(text)) and not _FUTURE.search(text)


def _count(raw: str) -> int:
    raw = raw.lower()
    if raw.isdigit():
        return int(raw)
    if raw in ("a", "an"):
        return 1
    if raw == "a couple of":
        return 2
    if raw == "a few":
        return 3
    return NUMBER_WORDS.get(raw, 1)


def _add_months(d: date, months: int) -> date:
    index = d.year * 12 + d.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(d.day, calendar.monthrange(year, month + 1)[1]))


def _month_span(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _resolve(kind: str, g: dict[str, str | None], today: date, past: bool) -> tuple[date, date, Granularity] | None:
    day = Granularity.DAY
    if kind == "iso":
        d = _safe_date(int(g["y"] or 0), int(g["m"] or 0), int(g["d"] or 0))
        return (d, d, day) if d else None
    if kind in ("month_day", "day_month"):
        month = MONTHS[(g["month"] or "").lower()]
        dnum = int(g["day"] or 0)
        if g["year"]:
            d = _safe_date(int(g["year"]), month, dnum)
            return (d, d, day) if d else None
        this_year = _safe_date(today.year, month, dnum)
        if this_year is None:
            return None
        if past and this_year > today:
            this_year = _safe_date(today.year - 1, month, dnum) or this_year
        elif not past and this_year < today:
            this_year = _safe_date(today.year + 1, month, dnum) or this_year
        return this_year, this_year, day
    if kind == "relday":
        offset = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1}
        rel = (g["rel"] or "").lower()
        n = offset.get(rel, 2 if "after" in rel else -2)
        d = today + timedelta(days=n)
        return d, d, day
    if kind in ("ago", "in_n"):
        n = _count(g["count"] or "1")
        sign = -1 if (g.get("dir") or "").lower() == "ago" else 1
        unit = (g["unit"] or "day").lower()
        if unit == "day":
            d = today + timedelta(days=sign * n)
        elif unit == "week":
            d = today + timedelta(weeks=sign * n)
        elif unit == "month":
            d = _add_months(today, sign * n)
        else:
            d = _add_months(today, sign * 12 * n)
        return d, d, day
    if kind == "weekday":
        target = WEEKDAYS[(g["weekday"] or "").lower()]
        which = (g["which"] or "").lower()
        delta = (target - today.weekday()) % 7
        if which in ("last", "this past") or (not which and past):
            d = today - timedelta(days=(today.weekday() - target) % 7 or 7)
        elif which == "this":
            d = today + timedelta(days=delta)
        else:
            d = today + timedelta(days=delta or 7)
        return d, d, day
    if kind == "unit":
        which = (g["which"] or "").lower()
        step = {"next": 1, "last": -1, "this past": -1}.get(which, 0)
        unit = (g["unit"] or "").lower()
        if unit == "week":
            monday = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
            return monday, monday + timedelta(days=6), Granularity.WEEK
        if unit == "weekend":
            saturday = today + timedelta(days=(5 - today.weekday()) % 7)
            if which in ("last", "this past") or (which == "this" and today.weekday() == 6):
                saturday = today - timedelta(days=(today.weekday() - 5) % 7 or 7)
            elif which == "next" and today.weekday() < 5:
                saturday += timedelta(weeks=1)
            return saturday, saturday + timedelta(days=1), Granularity.WEEKEND
        if unit == "month":
            first = _add_months(today.replace(day=1), step)
            return (*_month_span(first.year, first.month), Granularity.MONTH)
        return date(today.year + step, 1, 1), date(today.year + step, 12, 31), Granularity.YEAR
    if kind == "month":
        month = MONTHS[(g["month"] or "").lower()]
        which = (g["which"] or "").lower()
        if g["year"]:
            year = int(g["year"])
        elif which == "last" or (not which and past):
            year = today.year if month < today.month else today.year - 1
        elif which == "next":
            year = today.year if month > today.month else today.year + 1
        else:
            year = today.year if month >= today.month else today.year + 1
        return (*_month_span(year, month), Granularity.MONTH)
    if kind == "year":
        year = int(g["year"] or 0)
        return date(year, 1, 1), date(year, 12, 31), Granularity.YEAR
    return None


def _modal_may(m: re.Match[str]) -> bool:
    """ "I may go" is not a month: a bare May/Mar counts only as "in May", "next May" or with a year."""
    if (m.group("month") or "").lower() not in ("may", "mar") or m.group("which") or m.group("year"):
        return False
    return not m.group(0).lower().startswith("in ")


def find_dates(text: str, at: datetime, *, past: bool | None = None) -> list[DateMention]:
    """Date mentions in ``text``, resolved against ``at`` (its own time zone decides what "today" is).

    ``past`` forces the tense used for bare weekdays and months; by default it is guessed from the text."""
    today = at.date()
    tense = is_past_tense(text) if past is None else past
    found: list[DateMention] = []
    taken: list[tuple[int, int]] = []
    candidates: list[tuple[str, re.Match[str]]] = []
    for kind, pattern in _PATTERNS:
        candidates.extend((kind, m) for m in pattern.finditer(text))
    # longest first, so "June 5th, 2024" wins over "June"
    candidates.sort(key=lambda c: (-(c[1].end() - c[1].start()), c[1].start()))
    for kind, m in candidates:
        if any(m.start() < end and start < m.end() for start, end in taken):
            continue
        if kind == "month" and _modal_may(m):
            continue
        resolved = _resolve(kind, m.groupdict(), today, tense)
        taken.append((m.start(), m.end()))
        if resolved is None:
            continue  # "February 30": not a date, and not "February" either
        first, last, granularity = resolved
        found.append(DateMention(m.start(), m.end(), m.group(0), first, last, granularity))
    return sorted(found, key=lambda d: d.start)


def resolve(text: str, at: datetime, *, past: bool | None = None) -> tuple[str, list[DateMention]]:
    """``text`` with every date mention replaced by its absolute form, and the mentions."""
    mentions = find_dates(text, at, past=past)
    out, pos = [], 0
    for m in mentions:
        before = text[pos : m.start]
        out.append(before)
        out.append(m.render(bare=bool(_BARE_BEFORE.search(text[: m.start]))))
        pos = m.end
    out.append(text[pos:])
    return "".join(out), mentions


def expiry_for(mentions: list[DateMention], at: datetime, *, grace_days: int = 1) -> datetime | None:
    """When a schedule memory about these dates stops being useful: the end of its last future day, plus grace.

    ``None`` when no mention lies in the future (a past event is a durable fact, not a schedule)."""
    future = [m.last for m in mentions if m.last >= at.date()]
    if not future:
        return None
    end = datetime.combine(max(future) + timedelta(days=grace_days), time(23, 59, 59), tzinfo=at.tzinfo)
    return end
