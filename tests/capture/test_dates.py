from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from memstack.capture.dates import Granularity, expiry_for, find_dates, resolve

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
        ("my birthday is the 5th of August", date(2024, 8, 5), Granularity.DAY),
        ("the trip starts 2024-07-01", date(2024, 7, 1), Granularity.DAY),
        ("I graduate in June", date(2024, 6, 1), Granularity.MONTH),
        ("the party is next weekend", date(2024, 5, 18), Granularity.WEEKEND),
        ("I was busy last week", date(2024, 4, 29), Granularity.WEEK),
        ("we moved here in 2019", date(2019, 1, 1), Granularity.YEAR),
        ("the exam was on March 3", date(2024, 3, 3), Granularity.DAY),  # past tense: the last March 3
        ("my exam is on March 3", date(2025, 3, 3), Granularity.DAY),  # present: the next one
    ],
)
def test_mentions_resolve_against_the_message_time(text: str, first: date, granularity: Granularity) -> None:
    (mention,) = find_dates(text, THURSDAY)
    assert (mention.first, mention.granularity) == (first, granularity)


def test_resolve_rewrites_with_absolute_dates() -> None:
    assert resolve("my quiz is next Thursday", THURSDAY)[0] == "my quiz is on Thursday, 16 May 2024"
    assert resolve("my exam was moved to May 10", THURSDAY)[0] == "my exam was moved to Friday, 10 May 2024"
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
