"""Dates in text (``memstack.dates``): a statement's dates resolved to days (capture), a question's time range
(retrieval), both read with the one table of month and weekday names."""

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstack.dates import (
    EARLIEST,
    LATEST,
    MONTHS,
    WEEKDAYS,
    Granularity,
    anchor,
    check_time,
    expiry_for,
    find_dates,
    resolve,
    unanchored,
)
from memstack.errors import InputError
from memstack.retrieval.time_range import find_time_range

THURSDAY = datetime(2024, 5, 9, 14, 0, tzinfo=UTC)  # Thursday 9 May 2024


@pytest.mark.parametrize(
    ("text", "first", "granularity"),
    [
        ("my quiz is next Thursday", date(2024, 5, 16), Granularity.DAY),
        ("the exam is tomorrow", date(2024, 5, 10), Granularity.DAY),
        ("I went to a support group yesterday", date(2024, 5, 8), Granularity.DAY),
        ("my interview is in two weeks", date(2024, 5, 23), Granularity.DAY),
        ("the deadline is on June 5th", date(2024, 6, 5), Granularity.DAY),
        ("I visited Paris last June", date(2023, 6, 1), Granularity.MONTH),
        ("we go camping next month", date(2024, 6, 1), Granularity.MONTH),
        ("I ran a race last Saturday", date(2024, 5, 4), Granularity.DAY),
        ("it happened 3 days ago", date(2024, 5, 6), Granularity.DAY),
        ("my appointment is the 5th of August", date(2024, 8, 5), Granularity.DAY),
        ("the trip starts 2024-07-01", date(2024, 7, 1), Granularity.DAY),
        ("I graduate in June", date(2024, 6, 1), Granularity.MONTH),
        ("the party is next weekend", date(2024, 5, 18), Granularity.WEEKEND),
        ("I was busy last week", date(2024, 4, 29), Granularity.WEEK),
        ("we moved here in 2019", date(2019, 1, 1), Granularity.YEAR),
        ("the exam was on March 3", date(2024, 3, 3), Granularity.DAY),  # past tense: the last March 3
        ("my exam is on March 3", date(2025, 3, 3), Granularity.DAY),  # present: the next one
        ("we led the team to a win on Thursday", date(2024, 5, 2), Granularity.DAY),  # irregular past: last week's
        ("I drove to Leeds on Tuesday", date(2024, 5, 7), Granularity.DAY),
    ],
)
def test_mentions_resolve_against_the_message_time(text: str, first: date, granularity: Granularity) -> None:
    (mention,) = find_dates(text, THURSDAY)
    assert (mention.first, mention.granularity) == (first, granularity)


def test_resolve_rewrites_with_absolute_dates() -> None:
    assert resolve("my quiz is next Thursday", THURSDAY)[0] == "my quiz is on Thursday, 16 May 2024"
    assert resolve("my exam was moved to May 10", THURSDAY)[0] == "my exam was moved to 10 May 2024"  # no weekday said
    assert resolve("I have a test by Friday", THURSDAY)[0] == "I have a test by Friday, 10 May 2024"


def test_words_that_only_look_like_dates_are_left_alone() -> None:
    assert find_dates("I may go hiking", THURSDAY) == []
    assert find_dates("I love my cat", THURSDAY) == []
    assert find_dates("February 30 is not a day", THURSDAY) == []


def test_today_follows_the_message_time_zone() -> None:
    late_utc = datetime(2024, 5, 9, 23, 30, tzinfo=UTC)
    tokyo = late_utc.astimezone(timezone(timedelta(hours=9)))  # already Friday 10 May there
    assert find_dates("tomorrow", late_utc)[0].first == date(2024, 5, 10)
    assert find_dates("tomorrow", tokyo)[0].first == date(2024, 5, 11)


def test_expiry_is_the_day_after_the_last_future_day() -> None:
    mentions = find_dates("my quiz is next Thursday", THURSDAY)
    expires = expiry_for(mentions, THURSDAY)
    assert expires is not None and expires.date() == date(2024, 5, 17) and expires.tzinfo is UTC
    assert expiry_for(find_dates("I ran a race last Saturday", THURSDAY), THURSDAY) is None


# A question's time range

NOW = datetime(2023, 11, 20, 15, 0)  # a Monday


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("What did Tim say on 16 November, 2023?", datetime(2023, 11, 16), datetime(2023, 11, 17)),
        ("as mentioned on November 11, 2023?", datetime(2023, 11, 11), datetime(2023, 11, 12)),
        ("What book did he read on 8th December, 2023?", datetime(2023, 12, 8), datetime(2023, 12, 9)),
        ("What did Audrey do in November 2023?", datetime(2023, 11, 1), datetime(2023, 12, 1)),
        ("the trip in December 2023", datetime(2023, 12, 1), datetime(2024, 1, 1)),
        ("an injury in 2022?", datetime(2022, 1, 1), datetime(2023, 1, 1)),
        ("what did I do last June", datetime(2023, 6, 1), datetime(2023, 7, 1)),
        ("the deal in December", datetime(2022, 12, 1), datetime(2023, 1, 1)),
        ("plans for next March", datetime(2024, 3, 1), datetime(2024, 4, 1)),
        ("what happened yesterday", datetime(2023, 11, 19), datetime(2023, 11, 20)),
        ("anything last week?", datetime(2023, 11, 13), datetime(2023, 11, 20)),
        ("last weekend", datetime(2023, 11, 18), datetime(2023, 11, 20)),
        ("this month", datetime(2023, 11, 1), datetime(2023, 12, 1)),
        ("last month", datetime(2023, 10, 1), datetime(2023, 11, 1)),
        ("last year", datetime(2022, 1, 1), datetime(2023, 1, 1)),
    ],
)
def test_time_expressions_resolve_against_now(query: str, start: datetime, end: datetime) -> None:
    found = find_time_range(query, NOW)
    assert found is not None
    assert (found.start, found.end) == (start, end)
    assert found.text in query
    assert found.text not in found.strip(query)


def test_ago_is_fuzzy_and_may_the_verb_is_not_a_month() -> None:
    found = find_time_range("I mentioned it two weeks ago", NOW)
    assert found is not None and found.start == datetime(2023, 11, 6)
    assert found.slack >= timedelta(days=3)
    assert found.distance_days(datetime(2023, 11, 4)) == 0.0
    assert found.distance_days(datetime(2023, 10, 1)) > 30
    assert find_time_range("a few days ago", NOW) is not None
    assert find_time_range("what we may do in may", NOW) is None
    assert find_time_range("what did she paint?", NOW) is None
    impossible_day = find_time_range("on 31 February, 2023 or later", NOW)
    assert impossible_day is not None and impossible_day.start == datetime(2023, 2, 1)  # the month still stands


def test_timezone_aware_now_is_accepted() -> None:
    found = find_time_range("yesterday", NOW.replace(tzinfo=UTC))
    assert found is not None and found.start == datetime(2023, 11, 19)


@pytest.mark.parametrize("name", ["Sept", "sep.", "September", "sept"])
def test_both_readings_know_the_same_month_names(name: str) -> None:
    assert MONTHS[name.lower().rstrip(".")] == 9
    (mention,) = find_dates(f"the exam is on 3 {name} 2024", THURSDAY)
    found = find_time_range(f"what happened on 3 {name} 2023?", NOW)
    assert mention.first == date(2024, 9, 3)
    assert found is not None and found.start == datetime(2023, 9, 3)


def test_several_is_a_fuzzy_count_for_a_question_only() -> None:
    found = find_time_range("several days ago", NOW)
    assert found is not None and found.start == datetime(2023, 11, 16) and found.slack >= timedelta(days=1)
    assert find_dates("I went there several days ago", THURSDAY) == []  # a statement's date is exact or left alone
    assert WEEKDAYS["thurs"] == THURSDAY.weekday()


# What a statement says stays what it said: recurrences, fuzzy times, no weekday that was not named

FRIDAY = datetime(2026, 11, 27, 10, 0, tzinfo=UTC)  # Friday 27 November 2026


@pytest.mark.parametrize(
    "text",
    [
        "I visit her every August.",
        "I go swimming every Monday and Thursday morning",
        "Book club meets every other Wednesday at my place",
        "I volunteer at the food bank on Saturday mornings",
        "Spanish class is Tuesdays 7-9pm",
        "On weekends I'm out hiking",
        "I work nights Thursday to Sunday",
        "First Friday of every month is poker night",
        "I get paid on the 25th of every month",
        "I get my hair cut once a month, usually the first Saturday",
        "I usually fly home in August",
        "My birthday is on March 3rd",
        "my boyfriend's birthday is the 22nd of october",
        "Our wedding anniversary is June 14",
        "the 3rd floor is closed",
    ],
)
def test_what_recurs_is_not_a_date(text: str) -> None:
    assert find_dates(text, FRIDAY) == []
    assert resolve(text, FRIDAY)[0] == text


@pytest.mark.parametrize(
    "text",
    [
        "We moved to Lisbon two weeks ago",
        "I ran a half marathon a few months ago",
        "I started the cello a couple of years back",
        "I want to move to Osaka in a few years",
        "I lost my job a couple weeks ago",
    ],
)
def test_a_fuzzy_time_is_left_as_said(text: str) -> None:
    assert find_dates(text, FRIDAY) == []


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("first PB&J in 20 years", "first PB&J in 20 years"),
        ("best sleep I've had in 10 years", "best sleep I've had in 10 years"),
        ("I haven't seen him in 5 years", "I haven't seen him in 5 years"),
        ("for the first time in two years I ran", "for the first time in two years I ran"),
        ("my first exam is in 2 weeks", "my first exam is on 11 December 2026"),  # a verb of a time ahead: a day
        ("I can't wait, the wedding is in 3 weeks", "I can't wait, the wedding is on 18 December 2026"),
    ],
)
def test_in_n_units_after_a_first_or_a_superlative_is_how_long_it_has_been(text: str, rewritten: str) -> None:
    """ "first PB&J in 20 years" was written "first PB&J on 27 November 2046": a span looked back over became a
    day decades ahead."""
    assert resolve(text, FRIDAY)[0] == rewritten


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("We moved to Lisbon two weeks ago", "We moved to Lisbon two weeks before 27 November 2026"),
        ("I started the cello a couple of years back", "I started the cello a couple of years before 27 November 2026"),
        ("I want to move to Osaka in a few years", "I want to move to Osaka a few years after 27 November 2026"),
        (
            "a few weeks ago I quit, and tomorrow I fly",
            "a few weeks before 27 November 2026 I quit, and on 28 November 2026 I fly",
        ),
        ("I go there every two weeks", "I go there every two weeks"),  # a recurrence is no time at all
    ],
)
def test_a_fuzzy_time_keeps_its_words_and_is_anchored_to_the_day_it_was_said(text: str, rewritten: str) -> None:
    """Left as said, "two weeks ago" would be wrong the day the memory is read a month later; the words stay (no
    day is invented) and the day they count from is written beside them."""
    assert resolve(text, FRIDAY)[0] == rewritten


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("it happened 3 days ago", "it happened on 24 November 2026"),  # a count of days is a day
        ("the draft is due in two weeks", "the draft is due on 11 December 2026"),  # and so is a deadline ahead
        ("my review is a week from today", "my review is on 4 December 2026"),
    ],
)
def test_an_exact_count_is_a_day(text: str, rewritten: str) -> None:
    assert resolve(text, FRIDAY)[0] == rewritten


def test_a_weekday_naming_a_kind_of_thing_is_not_a_day() -> None:
    assert find_dates("keep that in mind for the Sunday lunch menu", FRIDAY) == []
    assert resolve("see you on the Sunday morning", FRIDAY)[0] == "see you on Sunday, 29 November 2026 morning"


def test_a_birthday_named_by_a_relative_day_is_still_that_day() -> None:
    assert resolve("my birthday is tomorrow", FRIDAY)[0] == "my birthday is on 28 November 2026"


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("the cat is getting neutered on the 2nd", date(2024, 6, 2)),  # a progressive arrangement: ahead
        ("we're driving up to the lake on the 3rd", date(2024, 6, 3)),
        ("I bought tickets for the opera on March 8th", date(2025, 3, 8)),  # bought now, for later
        ("booked a table at Nando's for the 1st", date(2024, 6, 1)),
        ("the kids went back to school on the 2nd", date(2024, 5, 2)),  # plainly past: stays past
        ("I saw the opera on March 8th", date(2024, 3, 8)),
        ("it's amazing, we ran the relay on the 2nd", date(2024, 5, 2)),  # an -ing adjective is no arrangement
        ("I quit smoking in March and I'm really trying to stay off it", date(2024, 3, 1)),  # each clause its tense
        ("we moved in on the 2nd and I'm still unpacking", date(2024, 5, 2)),
        ("moved to Rotterdam in March, started a new job", date(2024, 3, 1)),  # a move to a place: past
        ("my exam got moved to March", date(2025, 3, 1)),  # a date moved to a time: ahead
        ("this weekend was chaos", date(2024, 5, 4)),  # the weekend gone (Thursday 9 May: 4–5 May)
        ("this weekend we're hiking", date(2024, 5, 11)),
    ],
)
def test_an_arrangement_said_in_the_past_or_progressive_is_ahead(text: str, first: date) -> None:
    (mention,) = find_dates(text, THURSDAY)
    assert mention.first == first


def test_a_day_alone_is_the_next_one_or_the_last_one_in_a_past_sentence() -> None:
    assert resolve("My flight leaves on the 23rd", FRIDAY)[0] == "My flight leaves on 23 December 2026"
    assert resolve("I paid the rent on the 3rd", FRIDAY)[0] == "I paid the rent on 3 November 2026"
    assert resolve("I paid the rent on the 30th", FRIDAY)[0] == "I paid the rent on 30 October 2026"
    # "have got" is not a past tense
    assert resolve("I've got an interview on the 14th", FRIDAY)[0] == "I've got an interview on 14 December 2026"


def test_a_day_is_written_with_a_weekday_only_where_one_was_named() -> None:
    assert resolve("dentist tomorrow at 3", FRIDAY)[0] == "dentist on 28 November 2026 at 3"
    assert resolve("surgery on Monday", FRIDAY)[0] == "surgery on Monday, 30 November 2026"
    assert resolve("my exam is on January 9th", FRIDAY)[0] == "my exam is on 9 January 2027"


# Bounds: no count and no reference time makes a date computation fail (issue 24)

_PHRASES = (
    "in {n} days",
    "in {n} weeks",
    "in {n} months",
    "in {n} years",
    "{n} days ago",
    "{n} years from now",
    "{n} months later",
    "next year",
    "last year",
    "next week",
    "last week",
    "next weekend",
    "this month",
    "next month",
    "tomorrow",
    "the day before yesterday",
    "next Thursday",
    "last Saturday",
    "next June",
    "last June",
    "in December",
    "on March 3",
    "the 5th of August",
    "in 2019",
    "on 16 November, 2023",
)
_ZONES = (UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12)), None)
_COUNTS = st.one_of(
    st.integers(min_value=0, max_value=10**12).map(str),
    st.sampled_from(["99999999", "3652059", "1" * 19, "9" * 5000]),  # past every calendar; past int()'s digit limit
)


@st.composite
def _sentences(draw: st.DrawFn) -> str:
    phrases = draw(st.lists(st.sampled_from(_PHRASES), min_size=1, max_size=3))
    said = " and ".join(p.format(n=draw(_COUNTS)) for p in phrases)
    return draw(st.sampled_from(["My exam is {}", "I moved here {}", "what did I do {}?", "{}"])).format(said)


@given(
    text=_sentences(),
    at=st.datetimes(min_value=datetime.min, max_value=datetime.max),
    zone=st.sampled_from(_ZONES),
)
@settings(max_examples=400, deadline=None)
def test_no_count_and_no_reference_time_makes_a_date_computation_fail(
    text: str, at: datetime, zone: timezone | None
) -> None:
    at = at.replace(tzinfo=zone)
    for mention in find_dates(text, at):
        assert EARLIEST.date() <= mention.first <= mention.last <= LATEST.date(), mention
    rewritten, mentions = resolve(text, at)
    assert rewritten  # mentions out of bounds are left as written
    expires = expiry_for(mentions, at)
    assert expires is None or EARLIEST <= expires.replace(tzinfo=None) <= LATEST
    found = find_time_range(text, at)
    if found is not None:
        assert EARLIEST <= found.start - found.slack <= found.end + found.slack <= LATEST, found
        for when in (EARLIEST, LATEST, at.replace(tzinfo=None)):
            assert found.distance_days(when) >= 0.0


@pytest.mark.parametrize(
    "at", [datetime(1, 1, 3, tzinfo=UTC), datetime(9999, 12, 30, tzinfo=UTC), datetime.min, datetime.max]
)
def test_a_date_off_the_calendar_is_left_as_written_and_the_rest_is_read(at: datetime) -> None:
    text = "My exam is in 99999999 days and my party is next year"
    rewritten, mentions = resolve(text, datetime(2026, 11, 25, tzinfo=UTC))
    assert rewritten == "My exam is in 99999999 days and my party is in 2027"
    assert [m.granularity for m in mentions] == [Granularity.YEAR]
    assert find_dates("My exam is in 99999999 days", at) == []
    assert resolve(text, at)[0].startswith("My exam is in 99999999 days and my party is ")
    for query in ("what did I do last week?", "what about next year?", "two weeks ago"):
        found = find_time_range(query, at)
        assert found is None or found.start - found.slack >= EARLIEST


@pytest.mark.parametrize(
    "when", [datetime(1, 1, 3, tzinfo=UTC), datetime(9999, 12, 31, 23, 0), EARLIEST - timedelta(seconds=1)]
)
def test_a_time_out_of_bounds_is_an_input_error_naming_the_field(when: datetime) -> None:
    with pytest.raises(InputError, match=r"^metadata\.local_time must be a time between 0100-01-01 and 9899-12-31"):
        check_time(when, "metadata.local_time")
    assert check_time(EARLIEST, "at") == EARLIEST and check_time(LATEST, "at") == LATEST


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # a time counting from the day said keeps its words, the day beside it, before closing punctuation
        ("my quiz is next thursday.", "my quiz is next Thursday (said on Thursday, 9 May 2024)."),
        ("trip to Lisbon in march!!", "trip to Lisbon in March (said on Thursday, 9 May 2024)!!"),
        ("mum passed away last year", "mum passed away last year (said on Thursday, 9 May 2024)"),
        (
            "we moved two weeks ago, still unpacking",
            "we moved two weeks ago (said on Thursday, 9 May 2024), still unpacking",
        ),
        ("dinner tomorrow night, can't wait", "dinner tomorrow night (said on Thursday, 9 May 2024), can't wait"),
        ("interview on the 14th", "interview on the 14th (said on Thursday, 9 May 2024)"),
        # a written year needs no day; what recurs and a birthday are no mention
        ("I quit smoking in March 2023", "I quit smoking in March 2023"),
        ("on a pump since 2019-04-02", "on a pump since 2019-04-02"),
        ("I swim every tuesday", "I swim every tuesday"),
        ("my birthday is March 3rd", "my birthday is March 3rd"),
    ],
)
def test_a_memory_keeps_its_times_as_said_with_the_day_they_were_said(text: str, kept: str) -> None:
    written, mentions = anchor(text, THURSDAY)
    assert written == kept
    assert unanchored(written).lower() == text.lower()
    assert [m.first for m in mentions] == [m.first for m in find_dates(text, THURSDAY)]


def test_a_text_dated_already_is_not_dated_twice() -> None:
    once, _ = anchor("my quiz is next Thursday", THURSDAY)
    assert anchor(once, THURSDAY)[0] == once


def test_the_offline_classifiers_attribution_loses_its_day_when_unanchored() -> None:
    assert unanchored("User said on Friday, 27 November 2026: dentist tomorrow") == "User said: dentist tomorrow"
