"""What in a statement names no date to resolve, though it has the words of one (see :mod:`memstack.dates`).

Two kinds: what recurs or names no exact day ("every August", "on Mondays", "my birthday is March 3rd", "a few weeks
ago", "the Friday meeting", "I may go"), and someone else's words ("my coworker wrote: 'I'm quitting on Friday'"),
whose times were said at another time by another person. Each is a test on a match or a span of the text; the
statement reader (:func:`memstack.dates.find_dates`) leaves what they cover as written.
"""

from __future__ import annotations

import re

from memstack.dates.names import MONTH_NAMES, VAGUE_COUNTS, WEEKDAY_NAMES, alternation

# What recurs (see the module docstring): the mentions inside these spans are not dates.
_DAY_WORDS = alternation(WEEKDAY_NAMES)
_PLURAL_DAYS = alternation([f"{d}s" for d in WEEKDAY_NAMES] + ["weekends", "weekdays"])
_RECUR_TEXT = """weekend weekday day week fortnight month year morning afternoon evening night summer winter spring
    autumn fall christmas easter"""
_RECUR_UNITS = "(?:" + alternation([*WEEKDAY_NAMES, *MONTH_NAMES, *_RECUR_TEXT.split()]) + ")s?"
RECURRING = re.compile(
    rf"\b(?:every|each|most|alternate)\s+(?:(?:other|second|third|single)\s+)?{_RECUR_UNITS}"
    rf"(?:\s*(?:,|and|&|/|or)\s*{_RECUR_UNITS})*(?:\s+(?:morning|afternoon|evening|night)s?)?|"
    rf"\b(?:on\s+|at\s+)?(?:{_PLURAL_DAYS})(?:\s*(?:,|and|&|/|or)\s*(?:{_DAY_WORDS})s?)*|"
    rf"\b(?:on\s+)?(?:{_DAY_WORDS})\s+(?:mornings|afternoons|evenings|nights)\b|"
    rf"(?:\bthe\s+(?:first|second|third|fourth|last)|\b(?:first|second|third|fourth))\s+(?:{_DAY_WORDS})"
    r"(?:\s+(?:of|in)\s+(?:every|each|the|a)\s+month)?|"
    rf"(?<!from )\b(?:{_DAY_WORDS})\s*(?:to|through|thru|till|until|-)\s*(?:{_DAY_WORDS})\b|"
    r"\b(?:on\s+)?the\s+\d{1,2}(?:st|nd|rd|th)?\s+of\s+(?:every|each|the)\s+month\b",
    re.IGNORECASE,
)
# A habitual sentence: its bare weekdays and months recur ("I usually fly home in August").
HABITUAL = re.compile(
    r"\b(?:every|each)\s+(?:year|month|week|day|time|summer|winter|spring|autumn|fall)\b|"
    r"\b(?:annually|yearly|weekly|monthly|usually|always|normally|typically|generally|often|sometimes)\b|"
    r"\b(?:once|twice|\w+ times)\s+(?:a|an|per|every)\s+(?:year|month|week|day)\b",
    re.IGNORECASE,
)
# A yearly occasion: its day and month without a year come back every year.
# A birthday said as an age reached ("Noor turns 9 on May 2nd", "I'm turning forty on the 12th") is one too.
YEARLY = re.compile(
    r"\b(?:birthday|bday|b-day|anniversary|name day)s?\b|\b(?:turns|turning|turn)\s+(?:\d{1,3}|[a-z]+ty|[a-z]+teen|"
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b(?!\s+(?:days?|weeks?|months?))",
    re.IGNORECASE,
)
#: The kinds of mention that name a weekday or month without saying which one: recurring in a habitual sentence.
_BARE_KINDS = frozenset({"weekday", "month"})


def recurs(kind: str, m: re.Match[str], habitual: bool, yearly: bool) -> bool:
    """Whether a mention names a recurring time rather than a date (its span lies in a recurring phrase is checked
    by the caller)."""
    groups = m.groupdict()
    if habitual and kind in _BARE_KINDS and not groups.get("which") and not groups.get("year"):
        return True
    return yearly and kind in ("month_day", "day_month", "day_only") and not groups.get("year")


def vague(kind: str, m: re.Match[str]) -> bool:
    """A count of days, weeks, months or years that names no exact day: a vague count ("a few weeks ago", "in a
    couple of years"), or weeks, months or years back ("two weeks ago": said loosely, as a rule)."""
    if kind not in ("ago", "in_n"):
        return False
    count = (m.group("count") or "").lower()
    unit = (m.group("unit") or "").lower()
    back = kind == "ago" and (m.group("dir") or "").lower() in ("ago", "back")
    return count in VAGUE_COUNTS or (back and unit != "day")


#: Before "in N days|weeks|months|years", words that make it a span looked back over, not a day ahead: a first, a
#: superlative or a perfect negation ("the first holiday in three years", "best sleep in 10 years", "haven't seen him
#: in 5 years"), within the clause ("can't wait, the wedding is in 3 weeks" is a day ahead) and with no verb of a
#: time ahead between them.
_SPAN_BEFORE = re.compile(
    r"\b(?:first|only|best|worst|longest|shortest|biggest|most|least|ever|never|"
    r"haven['’]t|hasn['’]t|hadn['’]t|have not|has not|had not)\b"
    r"(?:(?!\b(?:is|are|will|due|starts?|begins?)\b)[^,.;:!?])*$",  # "my first exam is in 2 weeks" is a day
    re.IGNORECASE,
)


def span_back(kind: str, m: re.Match[str]) -> bool:
    """ "in N units" read as how long it has been ("first PB&J in 20 years"), not as a day ahead."""
    return kind == "in_n" and _SPAN_BEFORE.search(m.string[: m.start()]) is not None


_TIME_OF_DAY = re.compile(
    r"\s*(?:$|[^\w\s]|(?:morning|afternoon|evening|night|at|and|or|to|before|after|until|till|from|is|was|will)\b)",
    re.IGNORECASE,
)


def attributive(kind: str, m: re.Match[str], text: str) -> bool:
    """ "the Sunday lunch menu", "the Friday meeting": a weekday naming a kind of thing, not a day."""
    if kind != "weekday" or m.group("which") or not m.group(0).lower().startswith("the "):
        return False
    return _TIME_OF_DAY.match(text, m.end()) is None


def modal_may(m: re.Match[str]) -> bool:
    """ "I may go" is not a month: a bare May/Mar counts only as "in May", "next May" or with a year."""
    if (m.group("month") or "").lower() not in ("may", "mar") or m.group("which") or m.group("year"):
        return False
    return not m.group(0).lower().startswith("in ")


# Someone else's words (see :func:`reported`): a quotation in double quotes, in single quotes (an apostrophe inside
# a word, "I'm", "kids' toys", opens and closes nothing), or left open to the end of the text.
_QUOTED = re.compile(
    r"\"[^\"\n]*(?:\"|$)|“[^”\n]*(?:”|$)|«[^»\n]*(?:»|$)|„[^“”\n]*(?:[“”]|$)|"
    r"(?:^|(?<=[\s:(\[]))['‘](?=\w)[^\n]*?(?:(?<=[^\s'‘])['’](?=$|[\s.,;:!?)\]])|$)",
    re.MULTILINE,
)
# A message passed on after a colon ("my boss emailed: deadline moved to Monday", "she sent this in the group chat:
# …", "got this from the school: …"), to the end of its sentence; what the user sent ("I sent the forms on Monday:
# all done") is the user's own.
_RELAYED = re.compile(
    r"(?:(?<!\bI )(?<!\bwe )\b(?:said|says|wrote|writes|texted|texts|messaged|emailed|posted|replied|announced|sent|"
    r"forwarded)|\b(?:got|received|read) (?:this|that|an? (?:message|text|note|email|letter|dm))|"
    r"\b(?:message|text|note|email) from)\b[^.!?:\n]{0,60}:[^.!?\n]*",
    re.IGNORECASE,
)
# Speech reported by someone other than the user ("the doctor said I need surgery next month", "my landlord says the
# rent goes up in January"), to the end of its sentence; what the user says they said ("I told my boss I'm off on
# Friday") is the user's own time.
_REPORTED_SPEECH = re.compile(
    r"(?<!\bI )(?<!\bwe )(?<!\bI've )(?<!\bI had )"
    r"\b(?:said|says|told (?:me|us|him|her|them|everyone)|tells (?:me|us)|texted (?:me|us)|wrote (?:me|us|that)|"
    r"mentioned|announced|claims|claimed|promised|warned (?:me|us)|insists|insisted|reckons|swears)\b[^.!?;\n]*",
    re.IGNORECASE,
)


def reported(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that are someone else's words: quoted, relayed after a colon, or reported. Their times
    were said at another time and by another person ("I'm quitting on Friday", quoted from last week's group chat):
    read against the message's time they name the wrong day, so they are left as said, not resolved."""
    return [m.span() for pattern in (_QUOTED, _RELAYED, _REPORTED_SPEECH) for m in pattern.finditer(text)]
