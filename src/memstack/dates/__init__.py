"""Dates in text, read against the time it was written or asked: one table of month and weekday names, one grammar.

Two readings share them, because they answer different questions:

* **A statement's dates** (capture, here): ``find_dates("my quiz is next Thursday", at)`` finds each mention and the
  days it covers; :func:`anchor` writes the text as a memory keeps it, the user's words with the day they were
  said beside them ("my quiz is next Thursday (said on Thursday, 9 May 2024)"), so a memory stays readable after
  the week has passed and never says a date the user did not; :func:`stated_start` and :func:`expiry_for` give the
  days themselves (when a fact began, when a schedule stops mattering). :func:`resolve` is the other writing, with
  absolute dates ("my quiz is on Thursday, 16 May 2024"), for readers that want the day computed. A mention is
  exact or not a mention: "several days ago" names no day.
* **A question's time range** (retrieval, :mod:`memstack.retrieval.time_range`, with the names and counts of this
  module): ``find_time_range("what did I do last June", now)``.

Conventions of a statement's dates (documented, not guessed per call):
- ``next <weekday>`` / ``this <weekday>`` / bare ``<weekday>`` in a present or future sentence: the first such day
  after today (``this`` includes today); ``last <weekday>`` or a bare weekday in a past-tense sentence: the most
  recent one before today.
- ``next / last / this week|month|year|weekend``: the calendar unit after / before / containing today
  (weeks start on Monday).
- ``in N days|weeks|months|years``, ``N … from now``, ``N … ago``: calendar arithmetic from today.
- A month with or without a day and no year ("June 5th", "in June", "last June"): the next one in a future sentence,
  the last one in a past-tense sentence; ``last``/``next`` force the direction. A day alone ("on the 23rd"): the
  next such day (the last one in a past-tense sentence).
- What recurs is not a date: "every August", "every Monday and Thursday", "on Mondays", "Saturday mornings", "every
  other Wednesday", "the first Friday of every month", "the 25th of every month" are left as said, and so is a bare
  weekday or month in a habitual sentence ("usually", "every year", "twice a month") and a birthday or anniversary
  without a year ("my birthday is March 3rd", "Noor turns 9 on May 2nd": it comes back every year).
- A fuzzy time is not a day: "two weeks ago", "a few months ago", "in a few years" (a count of weeks, months or years
  back, or a vague count) keep their words, and :func:`resolve` writes the day they count from beside them ("two
  weeks before 27 November 2026"); "3 days ago" and "in two weeks" are days.
- Someone else's words keep their times as said: a quotation ("she texted 'landing tomorrow'"), a message relayed
  after a colon ("my boss emailed: deadline moved to Monday") and speech reported by another ("the doctor said the
  cast comes off in three weeks") were said at another time, so read against the message's time they would name the
  wrong day. What the user says they told someone is the user's own time.
- A clause reads its own tense: "quit my job yesterday, starting a new one on Monday" puts the quitting in the past
  and Monday ahead (a clause opening with a verb in -ing, its "I'm" left out, is an arrangement).
- ``since`` counts from a time that has come ("since March", "ever since Monday"), whatever the rest's tense.
- ``this week`` and ``this weekend`` are written against the day they were said ("in the week of 27 November
  2026", "on the weekend before 27 November 2026" for one gone): their own anchor, not a Monday or Saturday the user
  never named.
- The rewrite puts "on"/"in" where the words are an adverb ("tomorrow" → "on 28 November 2026"), not before a time
  that is its clause's subject ("Sunday was great" → "Sunday, 22 November 2026 was great") or a named day written
  without one ("taking Friday off").
- The rewritten date names a weekday only where the words did ("next Thursday" → "on Thursday, 16 May 2024",
  "tomorrow" → "on 10 May 2024"): nothing is added that was not said or computed.
Times of day are ignored: memories are dated to the day.

Bounds: every computation here is bounded, whatever the text and the time it is read against. A mention is kept
only when the days it covers lie between :data:`EARLIEST` and :data:`LATEST` (a century inside each end of what
:mod:`datetime` can hold, so a later step, an expiry's grace days or a time zone's offset, cannot leave the
calendar); one that does not ("my exam is in 99999999 days", "next year" read in the year 9999) is left alone as
text and the rest of the sentence is read as usual. The callers that
take a time from outside (recall's ``at``, a session's ``local_time``, an import's message times) refuse one out of
these bounds with ``InputError`` (:func:`check_time`), before any of this runs.

This package sits beside :mod:`memstack.text` at the bottom of memstack (it imports nothing of memstack's but the
number words there), so capture and retrieval, which do not import each other, both read dates with it. Its parts:
:mod:`~memstack.dates.names` (the names, counts and bounds), :mod:`~memstack.dates.unsaid` (what has the words of a
date but is none to resolve: a recurrence, a vague count, someone else's words) and this module (a statement's
dates: the grammar, the tense, the rewrite).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum

from memstack.dates.names import (
    AMBIGUOUS_NAMES,
    COUNT_PATTERN,
    DAY_NAMES_PATTERN,
    EARLIEST,
    LATEST,
    MONTH_NAMES,
    MONTH_PATTERN,
    MONTHS,
    WEEKDAY_NAMES,
    WEEKDAYS,
    add_months,
    check_time,
    count_value,
    day_text,
    in_bounds,
    in_range,
    month_span,
    out_of_range,
)
from memstack.dates.unsaid import (
    HABITUAL,
    RECURRING,
    YEARLY,
    attributive,
    modal_may,
    recurs,
    reported,
    span_back,
    vague,
)

__all__ = [
    "AMBIGUOUS_NAMES",
    "COUNT_PATTERN",
    "EARLIEST",
    "LATEST",
    "MONTHS",
    "MONTH_NAMES",
    "MONTH_PATTERN",
    "WEEKDAYS",
    "WEEKDAY_NAMES",
    "DateMention",
    "Granularity",
    "anchor",
    "check_time",
    "count_value",
    "expiry_for",
    "find_dates",
    "in_range",
    "is_past_tense",
    "keep_said",
    "out_of_range",
    "resolve",
    "stated_start",
    "unanchored",
    "when_held",
]

# ---------------------------------------------------------------------------------------------------------------------
# A statement's dates


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
    weekday: bool = True  # a day is written with its weekday (only where the words named one)
    # "this week", "this weekend": written against the day they were said ("the week of 27 November 2026", "the
    # weekend before 27 November 2026"), the words' own anchor, not a Monday or a Saturday the user never named
    said: date | None = None
    kind: str = ""  # which form of words it was ("weekday", "relday", …; see ``_PATTERNS``)

    def render(self, *, bare: bool = False) -> str:
        """Absolute wording that can replace the mention in a sentence (``bare``: without "on"/"in")."""
        text = self._render()
        return text.split(" ", 1)[1] if bare else text

    def _render(self) -> str:
        f = self.first
        if self.granularity is Granularity.DAY:
            if not self.weekday:
                return f"on {f.day} {calendar.month_name[f.month]} {f.year}"
            return f"on {calendar.day_name[f.weekday()]}, {f.day} {calendar.month_name[f.month]} {f.year}"
        if self.granularity is Granularity.WEEKEND:
            if self.said is not None and not f <= self.said <= self.last:  # "this weekend", said on a weekday
                side = "before" if self.last < self.said else "after"
                return f"on the weekend {side} {day_text(self.said)}"
            return f"on the weekend of {day_text(self.said or f)}"
        if self.granularity is Granularity.WEEK:
            f = self.said or f
            return f"in the week of {f.day} {calendar.month_name[f.month]} {f.year}"
        if self.granularity is Granularity.MONTH:
            return f"in {calendar.month_name[f.month]} {f.year}"
        return f"in {f.year}"


_MONTH = r"(?P<month>" + MONTH_PATTERN + r")\.?"
_WEEKDAY = r"(?P<weekday>" + DAY_NAMES_PATTERN + r")"
_COUNT = r"(?P<count>\d+|" + COUNT_PATTERN + r")"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_DAYNUM = r"(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"

_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
# A range of days in one month ("February 23-24, 2027", "3–5 March"): one mention would render its first day and leave
# "-24" dangling after it; it is left as the user wrote it.
_DAY_RANGE = re.compile(
    rf"\b(?:{MONTH_PATTERN})\.?\s+{_DAY}\s*(?:-|–|—|to|till|until|through|thru)\s*{_DAY}\b(?:,?\s+(?:19|20)\d\d\b)?|"
    rf"\b{_DAY}\s*(?:-|–|—)\s*{_DAY}\s+(?:of\s+)?(?:{MONTH_PATTERN})\b\.?(?:,?\s+(?:19|20)\d\d\b)?",
    re.IGNORECASE,
)

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (kind, re.compile(r"\b(?:on |in )?(?:the )?" + body + r"\b", re.IGNORECASE))
    for kind, body in [
        ("iso", r"(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)"),
        ("month_day", _MONTH + r" " + _DAYNUM + r"(?:,? " + _YEAR + r")?"),
        ("day_month", _DAYNUM + r" (?:of )?" + _MONTH + r"(?:,? " + _YEAR + r")?"),
        ("relday", r"(?P<rel>day after tomorrow|day before yesterday|today|tonight|tomorrow|yesterday)"),
        ("ago", _COUNT + r" " + _UNIT + r" (?P<dir>ago|back|from now|from today|later)"),
        # a day alone, where no word follows that makes it something else ("the 3rd floor", "the 25th of every")
        (
            "day_only",
            r"the (?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)"
            r"(?=\s*(?:$|[,.;:!?)]|(?:at|and|to|till|until|through|so|but|or|because|when|if|is|was|for)\b))",
        ),
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
    # "got" is past unless it is "have got" ("I've got a cold", "she's got an interview on the 14th")
    r"\b(was|were|went|did|had|(?<!'ve )(?<!have )(?<!has )(?<!'s )got|made|took|saw|met|came|ago|last|"
    r"yesterday|used to|"
    # an -ed word after a present "be" is a state, not a past ("the school is closed on Monday", "I'm booked Friday")
    r"(?<!\bis )(?<!\bare )(?<!\bam )(?<!'m )(?<!'re )(?<!’m )(?<!’re )(?<!\bbe )\w{3,}ed|"
    r"bought|ran|won|lost|left|told|said|felt|found|gave|began|wrote|ate|spent|moved|"
    # irregular past forms that are not also present forms ("read", "put", "cut" are left out; "I quit …" in a
    # statement is news, not a habit)
    r"quit|led|sent|kept|held|brought|thought|taught|caught|sold|paid|heard|wore|drove|flew|rode|swam|sang|sat|stood|"
    r"slept|fell|broke|chose|forgot|grew|knew|threw|built|lent|meant|drank|fought|hid|shook|spoke|stole|tore|woke|"
    r"became|froze|fed|fled|shot|stuck|swung|dug|hung|understood)\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(
    r"\b(will|'ll|going to|gonna|next|tomorrow|plan|planning|upcoming|coming|soon|is on|due|"
    # a date moved to a time ("the meeting moved to Friday"), not a move to a place ("moved to Rotterdam in May")
    r"moved to (?=(?:the |next |this )?(?:\d|mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|"
    r"nov|dec|tomorrow|later|after))|"
    r"rescheduled|postponed|pushed back|pushed to|"
    # an arrangement: what was booked, bought a ticket for or signed up for happens later ("got tickets for the
    # show on the 14th", "booked a table for Friday")
    r"tickets?|booked|reserved|signed up|registered|"
    # the present progressive of an arrangement ("Pepper is getting spayed on the 12th", "I'm flying out on the 3rd")
    # (not "it's amazing", "that is boring": an -ing adjective after it/that/this says nothing of the time)
    r"(?<!\bit )(?<!\bthat )(?<!\bthis )(?:am|is|are)\s+(?:\w+ly\s+)?\w{2,}ing|"
    r"(?<!\bit)(?<!\bthat)(?<!\bthis)(?:'m|'s|'re)\s+(?:\w+ly\s+)?\w{2,}ing)\b|"
    # the same with its "I'm" left out, at the start of a clause ("quit my job yesterday, starting a new one on
    # Monday"); not a noun in -ing ("morning was rough")
    r"^\s*(?:(?:also|then|and|but|so|now|just|finally|still)\s+)?(?!(?:nothing|something|anything|everything|"
    r"morning|evening|wedding|building|during|spring|string|thing|king|ring|sibling|ceiling|pudding|darling)\b)"
    r"[a-z]{2,}ing\b",
    re.IGNORECASE,
)
_BARE_BEFORE = re.compile(r"\b(to|by|until|till|before|after|from|since|of|for|through)\s*$", re.IGNORECASE)


def is_past_tense(text: str) -> bool:
    """A rough tense guess for resolving bare weekdays and months: past markers without future ones."""
    return bool(_PAST.search(text)) and not _FUTURE.search(text)


# Where a clause ends: punctuation, or a conjunction that starts another one.
_CLAUSE_END = re.compile(r"[,;:.!?()]|\s(?:and|but|so|because|though|although|while|whereas)\s", re.IGNORECASE)


def _clause_tense(text: str, start: int, end: int, default: bool) -> bool:
    """The tense of the clause holding ``text[start:end]`` ("I quit smoking in March and I'm trying to stay off it":
    the quitting is past, the trying does not move March ahead); the whole text's where the clause has no marker."""
    left = max((m.end() for m in _CLAUSE_END.finditer(text, 0, start)), default=0)
    right = next((m.start() for m in _CLAUSE_END.finditer(text, end)), len(text))
    clause = text[left:right]
    if _PAST.search(clause) or _FUTURE.search(clause):
        return is_past_tense(clause)
    return default


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
    if kind == "day_only":
        return _day_only(int(g["day"] or 0), today, past)
    if kind == "relday":
        offset = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1}
        rel = (g["rel"] or "").lower()
        n = offset.get(rel, 2 if "after" in rel else -2)
        d = today + timedelta(days=n)
        return d, d, day
    if kind in ("ago", "in_n"):
        n = count_value(g["count"] or "1")
        sign = -1 if (g.get("dir") or "").lower() == "ago" else 1
        unit = (g["unit"] or "day").lower()
        if unit == "day":
            d = today + timedelta(days=sign * n)
        elif unit == "week":
            d = today + timedelta(weeks=sign * n)
        elif unit == "month":
            d = add_months(today, sign * n)
        else:
            d = add_months(today, sign * 12 * n)
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
            elif which == "this" and past:  # "this weekend was chaos": the weekend now ending, or the one gone
                saturday = today - timedelta(days=(today.weekday() - 5) % 7)
            elif which == "next" and today.weekday() < 5:
                saturday += timedelta(weeks=1)
            return saturday, saturday + timedelta(days=1), Granularity.WEEKEND
        if unit == "month":
            first = add_months(today.replace(day=1), step)
            return (*month_span(first.year, first.month), Granularity.MONTH)
        return date(today.year + step, 1, 1), date(today.year + step, 12, 31), Granularity.YEAR
    if kind == "month":
        month = MONTHS[(g["month"] or "").lower()]
        which = (g["which"] or "").lower()
        if g["year"]:
            year = int(g["year"])
        elif which == "last" or (not which and past):
            year = today.year if month <= today.month else today.year - 1  # "joined in November", said in November
        elif which == "next":
            year = today.year if month > today.month else today.year + 1
        else:
            year = today.year if month >= today.month else today.year + 1
        return (*month_span(year, month), Granularity.MONTH)
    if kind == "year":
        year = int(g["year"] or 0)
        return date(year, 1, 1), date(year, 12, 31), Granularity.YEAR
    return None


def _day_only(dnum: int, today: date, past: bool) -> tuple[date, date, Granularity] | None:
    """The next day numbered ``dnum`` from today (the last one before it in a past sentence), skipping months
    without it."""
    step = -1 if past else 1
    month = today.replace(day=1)
    for _ in range(13):
        d = _safe_date(month.year, month.month, dnum)
        if d is not None and (d < today if past else d >= today):
            return d, d, Granularity.DAY
        month = add_months(month, step)
    return None


# "since March", "ever since Monday": a time the sentence counts from, which has come.
_SINCE = re.compile(r"\bsince\s*$", re.IGNORECASE)
# A time that is the subject of its clause ("Sunday was great", "this weekend was chaos"): written without "on"/"in".
_SUBJECT = re.compile(r"\s+(?:was|is|were|are|will|has|had|went|felt|feels|looks|looked|seems|seemed)\b", re.IGNORECASE)
# The kinds whose words name a day, month or year ("Friday", "June 5th"): written with a preposition only where the
# user wrote one ("taking Friday off" stays without "on"). Relative words ("tomorrow", "next week") are adverbs and
# take one.
_NAMED_KINDS = frozenset({"iso", "month_day", "day_month", "weekday", "month"})
_RELATIVE_WORD = re.compile(r"(?:the )?(?:next|last|this|coming)\b", re.IGNORECASE)


def find_dates(text: str, at: datetime, *, past: bool | None = None) -> list[DateMention]:
    """Date mentions in ``text``, resolved against ``at`` (its own time zone decides what "today" is).

    ``past`` forces the tense used for bare weekdays and months; by default it is guessed from the text."""
    return _scan(text, at, past)[0]


def _scan(text: str, at: datetime, past: bool | None) -> tuple[list[DateMention], list[re.Match[str]]]:
    """The date mentions of ``text`` (:func:`find_dates`), and the fuzzy counts it left as said ("two weeks ago",
    "in a few years"), which name no day but are still read against ``at``."""
    today = at.date()
    tense = is_past_tense(text) if past is None else past
    found: list[DateMention] = []
    fuzzy: list[re.Match[str]] = []
    # what recurs is no date, and someone else's words are not read against the message's time
    taken: list[tuple[int, int]] = [m.span() for m in RECURRING.finditer(text)] + reported(text)
    taken += [m.span() for m in _DAY_RANGE.finditer(text)]
    habitual = HABITUAL.search(text) is not None
    yearly = YEARLY.search(text) is not None
    candidates: list[tuple[str, re.Match[str]]] = []
    for kind, pattern in _PATTERNS:
        candidates.extend((kind, m) for m in pattern.finditer(text))
    # longest first, so "June 5th, 2024" wins over "June"
    candidates.sort(key=lambda c: (-(c[1].end() - c[1].start()), c[1].start()))
    for kind, m in candidates:
        if any(m.start() < end and start < m.end() for start, end in taken):
            continue
        if kind == "month" and modal_may(m):
            continue
        taken.append((m.start(), m.end()))
        if vague(kind, m) and not recurs(kind, m, habitual, yearly):
            fuzzy.append(m)
            continue
        if recurs(kind, m, habitual, yearly) or attributive(kind, m, text) or span_back(kind, m):
            continue
        if text[m.end() : m.end() + 2] in ("'s", "’s"):
            continue  # "tomorrow's opening": a thing of that day, not a day the sentence can be rewritten with
        try:
            own = tense if past is not None else _clause_tense(text, m.start(), m.end(), tense)
            own = own or _SINCE.search(text, 0, m.start()) is not None
            resolved = _resolve(kind, m.groupdict(), today, own)
        except (OverflowError, ValueError):  # "in 99999999 days": off the calendar (or too many digits for an int)
            resolved = None
        if resolved is None or not in_bounds(resolved[0], resolved[1]):
            continue  # "February 30", "in 99999999 days": not a date (left as written), and not "February" either
        first, last, granularity = resolved
        named = kind == "weekday" or (kind != "day_only" and granularity is not Granularity.DAY)
        this = kind == "unit" and (m.group("which") or "").lower() == "this"
        said = today if this and granularity in (Granularity.WEEK, Granularity.WEEKEND) else None
        found.append(DateMention(m.start(), m.end(), m.group(0), first, last, granularity, named, said, kind))
    return sorted(found, key=lambda d: d.start), fuzzy


def resolve(text: str, at: datetime, *, past: bool | None = None) -> tuple[str, list[DateMention]]:
    """``text`` with every date mention replaced by its absolute form, and the mentions. A fuzzy count keeps its
    words and is anchored to the day it was said ("two weeks ago" → "two weeks before 27 November 2026"), so the
    memory stays true when it is read later; it names no day, so it is no mention."""
    mentions, fuzzy = _scan(text, at, past)
    edits = [(m.start, m.end, m.render(bare=_bare(m, text))) for m in mentions]
    edits += [(m.start(), m.end(), _anchored(m, at)) for m in fuzzy]
    out, pos = [], 0
    for start, end, replacement in sorted(edits):
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out), mentions


_YEAR_WRITTEN = re.compile(r"\b(?:19|20)\d\d\b")
_NAME_WORD = re.compile(r"[A-Za-z]+")
_PART_OF_DAY = re.compile(r"\s+(?:morning|afternoon|evening|night|lunchtime|noon)\b", re.IGNORECASE)
_TRAILING = re.compile(r"[\s.!?…]+$")


def keep_said(text: str, at: datetime, *, past: bool | None = None) -> tuple[str, list[DateMention], str | None]:
    """``text`` with its time words kept as said (month and weekday names capitalised), its mentions (read against
    ``at`` as :func:`find_dates` reads them) and, when any of its times counts from the day it was said ("next
    Thursday", "in March", "last year", "two weeks ago"), that day written in full ("Friday, 27 November 2026"),
    else ``None`` (no time, or only times with their year: "in 2019", "3 March 2027").

    This is how a memory keeps its times (:func:`anchor`): the user's words, and the day they were said beside them,
    so the memory never says a date the user did not (a year added to "in March" is a guess, however good) and stays
    readable after the week has passed. The mentions still give the fact's start and a schedule's expiry."""
    words, mentions, _, said = _kept(text, at, past)
    return words, mentions, said


def _kept(text: str, at: datetime, past: bool | None) -> tuple[str, list[DateMention], list[re.Match[str]], str | None]:
    """:func:`keep_said`, with the fuzzy counts of the one scan (:func:`anchor` places the day after them too)."""
    mentions, fuzzy = _scan(text, at, past)
    relative = bool(fuzzy) or any(_counts_from_said(m) for m in mentions)
    chars = list(text)
    for m in mentions:
        for word in _NAME_WORD.finditer(m.text):
            if word.group(0).lower() in MONTHS or word.group(0).lower() in WEEKDAYS:
                chars[m.start + word.start()] = word.group(0)[0].upper()
    day = at.date()
    said = f"{calendar.day_name[day.weekday()]}, {day_text(day)}" if relative else None
    return "".join(chars), mentions, fuzzy, said


def anchor(text: str, at: datetime, *, past: bool | None = None) -> tuple[str, list[DateMention]]:
    """``text`` as a memory keeps it: its times as said (:func:`keep_said`) and, where one counts from the day it
    was said, that day after it, before any closing punctuation ("we're moving to Leeds on the 12th of December!!"
    → "we're moving to Leeds on the 12th of December (said on Friday, 27 November 2026)!!"); and its mentions."""
    words, mentions, fuzzy, said = _kept(text, at, past)
    if said is None or _ANCHOR.search(text):
        return words, mentions  # nothing to date, or dated already (a model's text that copied the form)
    ends = [m.end for m in mentions if _counts_from_said(m)] + [m.end() for m in fuzzy]
    cut = max(ends) if ends else len(words)
    if part := _PART_OF_DAY.match(words, cut):
        cut = part.end()  # "tomorrow night (said on …)", not "tomorrow (said on …) night"
    if cut == len(words) or _TRAILING.fullmatch(words, cut):
        end = _TRAILING.search(words)
        cut = end.start() if end else len(words)
    return f"{words[:cut]} (said on {said}){words[cut:]}", mentions


_ANCHOR = re.compile(
    r" \(said on (?:" + DAY_NAMES_PATTERN + r"), \d{1,2} (?:" + MONTH_PATTERN + r") \d{4}\)|"
    r"(?<=\bsaid) on (?:" + DAY_NAMES_PATTERN + r"), \d{1,2} (?:" + MONTH_PATTERN + r") \d{4}(?=:)",
    re.IGNORECASE,
)


def unanchored(text: str) -> str:
    """``text`` without the days :func:`anchor` and the offline classifier's "User said on …:" wrote into it: the
    statement alone, for readers that compare what statements say (the update judge), not when."""
    return _ANCHOR.sub("", text)


def _counts_from_said(mention: DateMention) -> bool:
    """Whether ``mention`` needs the day it was said to be read: all but a written year or an ISO date."""
    return mention.kind != "iso" and _YEAR_WRITTEN.search(mention.text) is None


def _bare(mention: DateMention, text: str) -> bool:
    """Whether ``mention`` is rewritten without its "on"/"in": after a preposition ("until Friday"), as the subject
    of its clause ("Sunday was great"), or a named day or month the user wrote without one ("taking Friday off")."""
    if _BARE_BEFORE.search(text[: mention.start]):
        return True
    if mention.text[:3].lower() in ("on ", "in "):
        return False
    named = mention.kind in _NAMED_KINDS and _RELATIVE_WORD.match(mention.text) is None
    return named or _SUBJECT.match(text, mention.end) is not None


def _anchored(m: re.Match[str], at: datetime) -> str:
    """A fuzzy count read against the day it was said: "a few months ago" → "a few months before 27 November 2026",
    "in a couple of years" → "a couple of years after 27 November 2026"."""
    day = at.date()
    said = f"{day.day} {calendar.month_name[day.month]} {day.year}"
    direction = m.groupdict().get("dir")
    back = (direction or "").lower() in ("ago", "back")
    length = m.string[m.start("count") : m.start("dir") if direction else m.end()].strip()  # "two weeks"
    return f"{length} {'before' if back else 'after'} {said}"


def stated_start(mentions: list[DateMention], at: datetime) -> datetime | None:
    """When a statement says its fact began: the first day of its earliest mention on or before ``at``'s day ("I
    moved to Berlin last month": the first of last month), at midnight in ``at``'s zone; ``None`` when it names no
    such day (a date ahead is a plan, which :func:`expiry_for` dates instead). A capture's ``valid_from``, and where
    a superseded memory's interval closes."""
    past = [m.first for m in mentions if m.first <= at.date()]
    if not past:
        return None
    return datetime.combine(min(past), time(0, 0), tzinfo=at.tzinfo)


def _utc(when: datetime) -> datetime:
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def _month(when: datetime) -> str:
    return f"{MONTH_NAMES[when.month - 1].capitalize()} {when.year}"


def when_held(valid_from: datetime | None, valid_to: datetime | None, now: datetime) -> str | None:
    """A short note of when a fact held, for one that does not hold at ``now``: ``until March 2026`` (ended),
    ``from June 2026`` (not yet), ``March 2025 to March 2026`` (ended, start known); ``None`` for one that holds now
    (or whose ends are unknown). Months, not days: what a reader asking "where did I live before?" needs. A time
    without a zone is taken as UTC."""
    now = _utc(now)
    valid_from = _utc(valid_from) if valid_from is not None else None
    valid_to = _utc(valid_to) if valid_to is not None else None
    if valid_to is not None and valid_to <= now:
        return f"{_month(valid_from)} to {_month(valid_to)}" if valid_from is not None else f"until {_month(valid_to)}"
    if valid_from is not None and valid_from > now:
        return f"from {_month(valid_from)}"
    return None


def expiry_for(mentions: list[DateMention], at: datetime, *, grace_days: int = 1) -> datetime | None:
    """When a schedule memory about these dates stops being useful: the end of its last future day, plus grace.

    ``None`` when no mention lies in the future (a past event is a durable fact, not a schedule), or when the day
    falls outside :data:`EARLIEST` … :data:`LATEST` (mentions from :func:`find_dates` never do)."""
    future = [m.last for m in mentions if m.last >= at.date()]
    if not future:
        return None
    try:
        last = max(future) + timedelta(days=grace_days)
    except OverflowError:
        return None
    if not in_bounds(last, last):
        return None
    return datetime.combine(last, time(23, 59, 59), tzinfo=at.tzinfo)
