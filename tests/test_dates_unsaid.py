"""Times a statement's rewrite must not move: someone else's words, a time counted from, "this week" said in passing,
and a time written where the user wrote it (each class in many wordings, none of them a development sentence)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memstack.dates import find_dates, resolve

AT = datetime(2026, 11, 27, 10, tzinfo=UTC)  # a Friday


@pytest.mark.parametrize(
    "text",
    [
        # quoted, in double, curly, single and guillemet quotes
        'my neighbour left a note saying "back on Monday, feed the fish"',
        "the landlord's email literally says “inspection next Tuesday between 9 and 12”",
        "Rita replied 'can't make it tomorrow, sorry' and then went silent",
        "the sign on the bakery door: «closed until next week»",
        "so my flatmate goes 'I'm moving out in two weeks' like it's nothing",
        'he wrote "see you in March" at the bottom of the card',
        # a quotation left open to the end of the message
        'the group chat just says "party at mine on Saturday',
        # relayed after a colon
        "my manager posted in slack: offsite is next Thursday, no excuses",
        "got this from the school: pickup moved to tomorrow at 2",
        "she texted me back: landing on Sunday, can you drive?",
        # reported by someone else
        "my doctor said the cast comes off in three weeks",
        "Priya told me she's starting at Google next month",
        "the coach says the season opener is on Saturday",
        "apparently my brother mentioned he's flying in tomorrow",
        "the agent claims the flat will be ready in January",
        "our teacher warned us the exam is next Monday",
    ],
)
def test_someone_elses_words_keep_their_times_as_said(text: str) -> None:
    rewritten, mentions = resolve(text, AT)
    assert rewritten == text
    assert mentions == []


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        # the user's own time beside a quotation is still read
        (
            "I'm flying out tomorrow and my mum just texted 'bring a coat'",
            "I'm flying out on 28 November 2026 and my mum just texted 'bring a coat'",
        ),
        # what the user says they told someone is the user's own time
        ("I told my boss I'm taking Friday off", "I told my boss I'm taking Friday, 4 December 2026 off"),
        ("we told the kids we're going to Rome next month", "we told the kids we're going to Rome in December 2026"),
        (
            "I sent the forms on Monday: all done now",
            "I sent the forms on Monday, 23 November 2026: all done now",
        ),
        # apostrophes inside words and after plurals open no quotation
        ("my kids' school is closed on Monday", "my kids' school is closed on Monday, 30 November 2026"),
        ("I'm at my parents' place until Sunday", "I'm at my parents' place until Sunday, 29 November 2026"),
    ],
)
def test_the_users_own_times_beside_someone_elses_words_are_read(text: str, rewritten: str) -> None:
    assert resolve(text, AT)[0] == rewritten


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("I've been sick since Monday", date(2026, 11, 23)),
        ("ive had this cough since tuesday", date(2026, 11, 24)),
        ("I have been learning Spanish since March", date(2026, 3, 1)),
        ("Since October I'm working from home three days a week", date(2026, 10, 1)),
        ("been vegetarian ever since January", date(2026, 1, 1)),
        ("my knee hurts since the 3rd", date(2026, 11, 3)),
        ("living in Leeds since June and loving it", date(2026, 6, 1)),
    ],
)
def test_a_time_counted_from_has_come(text: str, first: date) -> None:
    """ "since March" is the March gone, whatever the tense of the rest ("I've been", "my knee hurts")."""
    mentions = find_dates(text, AT)
    assert [m.first for m in mentions] == [first]


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("I joined the climbing gym in November", date(2026, 11, 1)),
        ("started therapy in November, it helps", date(2026, 11, 1)),
        ("we adopted the kitten in november", date(2026, 11, 1)),
    ],
)
def test_the_current_month_in_a_past_clause_is_this_years(text: str, first: date) -> None:
    assert [m.first for m in find_dates(text, AT)] == [first]


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("they're driving me nuts this week", "they're driving me nuts in the week of 27 November 2026"),
        ("I was swamped at work this week", "I was swamped at work in the week of 27 November 2026"),
        ("this week I finally fixed the bike", "in the week of 27 November 2026 I finally fixed the bike"),
        ("I have two exams this week", "I have two exams in the week of 27 November 2026"),
        ("this weekend was a total mess", "the weekend before 27 November 2026 was a total mess"),
        ("we painted the hallway this weekend", "we painted the hallway on the weekend before 27 November 2026"),
        ("I'm camping this weekend with Jo", "I'm camping on the weekend after 27 November 2026 with Jo"),
    ],
)
def test_this_week_and_this_weekend_are_anchored_to_the_day_said(text: str, rewritten: str) -> None:
    """The day the words were said is their anchor; a Monday or a Saturday the user never named is not written."""
    assert resolve(text, AT)[0] == rewritten


def test_this_weekend_said_on_the_weekend_is_that_weekend() -> None:
    saturday = datetime(2026, 11, 28, 10, tzinfo=UTC)
    assert resolve("this weekend was a total mess", saturday)[0] == ("the weekend of 28 November 2026 was a total mess")


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        # a time as the subject of its clause takes no preposition
        ("Sunday was lovely, we walked for hours", "Sunday, 22 November 2026 was lovely, we walked for hours"),
        ("tomorrow is my last day at the firm", "28 November 2026 is my last day at the firm"),
        ("yesterday was my first day off in ages", "26 November 2026 was my first day off in ages"),
        # a named day or month written without one keeps none
        ("I'm taking Thursday off to move flats", "I'm taking Thursday, 3 December 2026 off to move flats"),
        ("my appointment got moved to Tuesday", "my appointment got moved to Tuesday, 1 December 2026"),
        ("dentist Tuesday, ugh", "dentist Tuesday, 1 December 2026, ugh"),
        # where the user wrote one, or the words are relative, it stays
        ("my interview is on Tuesday", "my interview is on Tuesday, 1 December 2026"),
        ("dentist next Tuesday at 4", "dentist on Tuesday, 1 December 2026 at 4"),
        ("I'm moving next June", "I'm moving in June 2027"),
    ],
)
def test_a_date_is_written_where_and_how_the_user_wrote_it(text: str, rewritten: str) -> None:
    assert resolve(text, AT)[0] == rewritten


@pytest.mark.parametrize(
    "text",
    [
        "Noor turns 9 on May 2nd, any cake ideas?",
        "I'm turning forty on the 12th and I'm weirdly fine with it",
        "my grandad turns 90 on 14 March",
        "the twins turn six on January 9th",
    ],
)
def test_an_age_reached_on_a_day_is_a_birthday_that_comes_back(text: str) -> None:
    """As "my birthday is March 3rd": the day and month without a year recur, so no year is written."""
    assert resolve(text, AT)[0] == text


def test_an_age_reached_on_a_relative_day_is_still_that_day() -> None:
    assert resolve("I turn 30 tomorrow", AT)[0] == "I turn 30 on 28 November 2026"


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("quit my job yesterday, starting a new one on Monday", date(2026, 11, 30)),
        ("sold the car last week and flying to Lisbon on Sunday", date(2026, 11, 29)),
        ("finished the course in October, now starting the next level in January", date(2027, 1, 1)),
        ("the movers came yesterday; heading to the new place on Tuesday", date(2026, 12, 1)),
    ],
)
def test_a_progressive_clause_without_its_subject_is_ahead_whatever_came_before(text: str, first: date) -> None:
    """ "starting a new one on Monday" is "I'm starting …": an arrangement, not the past of the clause before it."""
    assert find_dates(text, AT)[-1].first == first


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("morning was rough on Monday, the bus broke down", date(2026, 11, 23)),
        ("something happened on Tuesday at work that upset me", date(2026, 11, 24)),
    ],
)
def test_a_noun_in_ing_starts_no_arrangement(text: str, first: date) -> None:
    assert find_dates(text, AT)[0].first == first


@pytest.mark.parametrize(
    "text",
    [
        "the festival runs July 9-11, 2027",
        "we're in Porto 14–16 March",
        "my exams are on the 3-5 of June",
        "conference is Sept 22 to 24",
        "offsite is april 2nd–4th, 2027",
    ],
)
def test_a_range_of_days_is_left_as_written(text: str) -> None:
    """One mention would render its first day and leave the rest dangling ("9 July 2027-11, 2027")."""
    assert resolve(text, AT)[0] == text


def test_a_day_and_a_time_are_no_range() -> None:
    assert resolve("dentist on March 3 at 5", AT)[0] == "dentist on 3 March 2027 at 5"
