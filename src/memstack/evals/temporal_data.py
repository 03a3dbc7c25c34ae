"""The generated suite of ``memstack eval temporal``: synthetic users whose lives change over dated sessions, and
questions about them whose answer is one memory.

Deterministic: :func:`generate` with the same ``users`` and ``seed`` gives the same users, memories, times and
questions on every machine (:class:`random.Random`, no clock). Each user has five single-valued attributes, each a
timeline of two to four **versions** (a value and the interval it held): where they live, where they work, their
partner, their pet, the trip they plan. A version ends where the next one begins; the first one's start is unknown
for about a third of them (memories captured without a stated time). Each user also has **distractors** that never
change and share words with the attributes: a sibling's city and employer (someone else's facts), a hobby, a
friend's pet. Values are drawn without repeats within a user, so a memory is named by its text.

Questions, each with the text of the one memory that answers it:

- ``current``: what holds now ("Where does the user live?"), one per attribute;
- ``as_of``: what held at a time strictly inside a past version's interval (the query is the same question, asked
  ``as_of`` that time), one or two per attribute with a past;
- ``before`` / ``after``: "Where did the user live before Lisbon?": the version just before (after) the one named
  (the anchor), one per attribute with a past, alternating.

The words here were written for this suite (cities, invented company names, first names); none come from a data set.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

__all__ = ["ATTRIBUTES", "Attribute", "Question", "SyntheticUser", "Version", "generate"]

Kind = Literal["current", "as_of", "before", "after"]

_CITIES = (
    "Lisbon", "Berlin", "Toronto", "Osaka", "Nairobi", "Montreal", "Oslo", "Valencia", "Melbourne", "Denver",
    "Porto", "Krakow", "Seoul", "Lyon", "Austin", "Dublin", "Helsinki", "Santiago", "Glasgow", "Hanoi", "Tallinn",
    "Bologna", "Quito", "Seattle", "Utrecht", "Marseille", "Vienna", "Ljubljana", "Cork", "Auckland",
)  # fmt: skip
_COMPANIES = (
    "Northwind Labs", "Bluefin Analytics", "Copperleaf Studios", "Harbor Robotics", "Quillstone Press",
    "Maplegate Health", "Silverline Freight", "Brightwater Energy", "Tallgrass Software", "Ironbark Foods",
    "Redwood Ledger", "Lanternfish Games", "Oakridge Clinics", "Stonebridge Bank", "Kestrel Aerospace",
    "Juniper Textiles", "Cobalt Vision", "Wrenfield Schools", "Granite Peak Insurance", "Saltmarsh Brewing",
)  # fmt: skip
_NAMES = (
    "Priya", "Mateo", "Ingrid", "Kofi", "Hana", "Tomasz", "Leila", "Ravi", "Noor", "Elias", "Yuki", "Camille",
    "Dmitri", "Amara", "Joaquin", "Freya", "Tariq", "Sione", "Greta", "Anselm", "Marisol", "Ewan", "Chiara", "Idris",
)  # fmt: skip
_PETS = (
    ("dog", "Biscuit"), ("cat", "Pepper"), ("parrot", "Mango"), ("rabbit", "Clover"), ("dog", "Juniper"),
    ("cat", "Tofu"), ("tortoise", "Atlas"), ("dog", "Pickles"), ("cat", "Nimbus"), ("hamster", "Waffle"),
    ("dog", "Sprocket"), ("cat", "Olive"), ("ferret", "Ziggy"), ("dog", "Maple"), ("cat", "Sable"),
)  # fmt: skip
_TRIPS = (
    "Iceland", "Patagonia", "Morocco", "Vietnam", "New Zealand", "Peru", "Norway", "Japan", "Kenya", "Portugal",
    "Mongolia", "Scotland", "Jordan", "Chile", "Sri Lanka", "Georgia", "Tasmania", "Croatia",
)  # fmt: skip
_HOBBIES = ("rock climbing", "pottery", "chess", "trail running", "birdwatching", "baking sourdough", "sailing")


@dataclass(frozen=True, slots=True)
class Attribute:
    """One single-valued part of a user's life: how a memory of it reads, the questions asked about it, and how a
    distractor about someone else reads."""

    name: str
    memory: str  # "{v}": the value
    questions: tuple[str, ...]
    past: str  # "before/after" wording, "{q}": before or after, "{v}": the anchor's value


ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute(
        "residence",
        "User lives in {v}",
        ("Where does the user live?", "Which city is the user based in?", "What city is home for the user?"),
        "Where did the user live {q} {v}?",
    ),
    Attribute(
        "employer",
        "User works at {v}",
        ("Where does the user work?", "Who is the user's employer?", "Which company does the user work for?"),
        "Where did the user work {q} {v}?",
    ),
    Attribute(
        "partner",
        "User's partner is {v}",
        ("Who is the user's partner?", "Who is the user dating?", "What is the name of the user's partner?"),
        "Who was the user's partner {q} {v}?",
    ),
    Attribute(
        "pet",
        "User has a {v}",
        ("What pet does the user have?", "What is the name of the user's pet?", "Does the user have a pet?"),
        "What pet did the user have {q} the {v}?",
    ),
    Attribute(
        "plan",
        "User plans a trip to {v}",
        ("Where is the user planning to travel?", "What trip is the user planning?", "Where is the user's next trip?"),
        "What trip did the user plan {q} the one to {v}?",
    ),
)

#: When the synthetic lives run: sessions between these days (before any clock this runs on).
FIRST = datetime(2018, 1, 1, tzinfo=UTC)
LAST = datetime(2025, 6, 30, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Version:
    attribute: str
    value: str
    content: str
    start: datetime | None  # None: not stated (the first version only)
    end: datetime | None  # None: holds now
    since: datetime  # when it was said (the session it came up in), for the first version too


@dataclass(frozen=True, slots=True)
class SyntheticUser:
    id: str
    versions: tuple[Version, ...]  # by attribute, oldest first
    distractors: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Question:
    user: str
    kind: Kind
    attribute: str
    text: str  # the query sent to search (for before/after: the attribute's question, asked as of the anchor's edge)
    expected: str  # the content of the one memory that answers it
    as_of: datetime | None = None  # as_of questions
    anchor: str | None = None  # before/after: the value named in the question
    asked: str = ""  # before/after: the question as a person would ask it


def _value(attr: str, rng: random.Random, used: set[str]) -> str:
    pool: tuple[str, ...]
    if attr == "residence":
        pool = _CITIES
    elif attr == "employer":
        pool = _COMPANIES
    elif attr == "partner":
        pool = _NAMES
    elif attr == "pet":
        pool = tuple(f"{species} named {name}" for species, name in _PETS)
    else:
        pool = _TRIPS
    choice = rng.choice([v for v in pool if v not in used and not any(w in used for w in v.split())])
    used.add(choice)
    used.update(w for w in choice.split() if w[:1].isupper())
    return choice


def _changes(rng: random.Random, n: int) -> list[datetime]:
    """``n`` change times between FIRST and LAST, at least 90 days apart, at a session's hour."""
    span = (LAST - FIRST).days
    while True:
        days = sorted(rng.sample(range(120, span - 30), n))
        if all(b - a >= 90 for a, b in itertools.pairwise(days)):
            return [FIRST + timedelta(days=d, hours=rng.randrange(8, 21)) for d in days]


def _user(index: int, rng: random.Random) -> SyntheticUser:
    used: set[str] = set()
    versions: list[Version] = []
    for attr in ATTRIBUTES:
        count = rng.choice((2, 2, 3, 3, 4))
        values = [_value(attr.name, rng, used) for _ in range(count)]
        starts: list[datetime | None] = [None if rng.random() < 0.35 else FIRST + timedelta(days=rng.randrange(0, 60))]
        changes = _changes(rng, count - 1)
        starts += changes
        said = [FIRST + timedelta(days=rng.randrange(0, 90)), *changes]
        for i, value in enumerate(values):
            end = changes[i] if i < len(changes) else None
            versions.append(Version(attr.name, value, attr.memory.format(v=value), starts[i], end, said[i]))
    sibling = rng.choice(("sister", "brother"))
    distractors = (
        f"User's {sibling} lives in {_value('residence', rng, used)}",
        f"User's {sibling} works at {_value('employer', rng, used)}",
        f"User's friend {_value('partner', rng, used)} has a {_value('pet', rng, used)}",
        f"User enjoys {rng.choice(_HOBBIES)}",
        f"User's colleague {_value('partner', rng, used)} went on a trip to {_value('plan', rng, used)}",
    )
    return SyntheticUser(f"temporal-{index:03d}", tuple(versions), distractors)


def _inside(rng: random.Random, start: datetime | None, end: datetime) -> datetime:
    """A time strictly inside a past version's interval, a day away from either edge."""
    low = (start or FIRST - timedelta(days=365)) + timedelta(days=1)
    high = end - timedelta(days=1)
    return low + timedelta(seconds=rng.randrange(0, max(1, int((high - low).total_seconds()))))


def _questions(user: SyntheticUser, rng: random.Random) -> list[Question]:
    out: list[Question] = []
    for n, attr in enumerate(ATTRIBUTES):
        timeline = [v for v in user.versions if v.attribute == attr.name]
        now = timeline[-1]
        out.append(Question(user.id, "current", attr.name, rng.choice(attr.questions), now.content))
        past = timeline[:-1]
        for version in rng.sample(past, min(len(past), rng.choice((1, 2)))):
            assert version.end is not None
            when = _inside(rng, version.start, version.end)
            out.append(Question(user.id, "as_of", attr.name, rng.choice(attr.questions), version.content, when))
        k = rng.randrange(1, len(timeline))  # a change: timeline[k - 1] → timeline[k]
        kind: Kind
        if (n + len(user.id)) % 2 == 0:
            anchor, expected, kind = timeline[k], timeline[k - 1], "before"
        else:
            anchor, expected, kind = timeline[k - 1], timeline[k], "after"
        asked = attr.past.format(q=kind, v=anchor.value)
        question = Question(user.id, kind, attr.name, attr.questions[0], expected.content, None, anchor.value, asked)
        out.append(question)
    return out


def generate(users: int = 40, seed: int = 7) -> tuple[list[SyntheticUser], list[Question]]:
    """``users`` synthetic users and their questions (about 17 per user), the same for the same arguments."""
    rng = random.Random(seed)
    made = [_user(i, rng) for i in range(users)]
    return made, [q for u in made for q in _questions(u, rng)]
