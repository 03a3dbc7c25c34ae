"""Generated training cases for the update judge: the plain, direct ways of telling news about a single-valued
attribute ("I moved to Lisbon", "I work at Stripe now"), each beside its look-alikes (the same news about someone
else, a visit, a wish, a detail that keeps the memory true).

The written pairs (``data/judge/pairs-*.jsonl``) tell most news sideways, as people do at length; these fill in the
short direct forms, with many values, so the head learns the attribute and the change rather than a city's name.
Deterministic (seeded); read by `scripts/train_update_crossencoder.py`, never scored.
"""

from __future__ import annotations

import random

from memstack.evals.updates import UpdateCase
from memstack.types import Category

CITIES = [
    "Lisbon",
    "Porto",
    "Berlin",
    "Paris",
    "Madrid",
    "Denver",
    "Austin",
    "Leeds",
    "Toronto",
    "Oslo",
    "Nairobi",
    "Seoul",
    "Dublin",
    "Glasgow",
    "Boston",
    "Lyon",
    "Seattle",
    "Kyoto",
    "Melbourne",
    "Chicago",
    "Prague",
    "Vienna",
    "Bristol",
    "Calgary",
    "Phoenix",
    "Milan",
    "Warsaw",
    "Lima",
    "Accra",
    "Zurich",
]
COMPANIES = [
    "Google",
    "Stripe",
    "Amazon",
    "Deloitte",
    "Spotify",
    "Shopify",
    "IKEA",
    "Pfizer",
    "Airbus",
    "Netflix",
    "Siemens",
    "KPMG",
    "Canva",
    "Atlassian",
    "Etsy",
    "Oracle",
    "Nike",
    "Zendesk",
    "Unilever",
    "Adobe",
]
PEOPLE = [
    "Sam",
    "Priya",
    "Tom",
    "Lena",
    "Marco",
    "Aisha",
    "Jonas",
    "Chloe",
    "Ravi",
    "Hana",
    "Diego",
    "Mia",
    "Omar",
    "Ines",
    "Felix",
    "Zoe",
]
CARS = ["Honda Civic", "Tesla Model 3", "Ford Fiesta", "VW Golf", "Toyota Prius", "Mini Cooper", "Kia Niro", "Subaru"]
PHONES = ["iPhone", "Pixel", "Samsung Galaxy", "OnePlus", "MacBook", "ThinkPad", "Windows laptop", "Chromebook"]
JOBS = ["nurse", "teacher", "barista", "software engineer", "accountant", "paramedic", "chef", "architect", "pilot"]
RELATIVES = ["sister", "brother", "mom", "dad", "best friend", "roommate", "cousin", "coworker", "neighbour", "boss"]
EVENTS = ["dentist appointment", "job interview", "driving test", "flight to Rome", "piano recital", "thesis defense"]
DAYS = ["3 June", "12 March", "21 September", "8 July", "30 April", "14 October", "2 December", "19 May"]
THINGS = [("band", ["Radiohead", "Arctic Monkeys", "Queen", "Blur", "Coldplay"]), ("food", ["sushi", "tacos", "ramen"])]
MONTHS = ["January", "March", "May", "July", "September", "last month", "last week", "in the spring"]

# (memory, updates, look-alikes): {a} the memory's value, {b} another, {r} a relative, {m} a time
FRAMES: list[tuple[str, Category, list[str], list[str], str]] = [
    (
        "User lives in {a}.",
        Category.FACT,
        [
            "I moved to {b} {m}.",
            "I live in {b} now.",
            "We just moved to {b}!",
            "Relocated to {b} for work {m}.",
            "Moving day is done, we're officially in {b}.",
            "Got the keys to our new flat in {b}.",
        ],
        [
            "My {r} moved to {b} {m}.",
            "I visited {b} {m}, lovely city.",
            "Thinking about moving to {b} someday.",
            "I'm in {b} for a conference this week.",
            "{a} is so pretty in the spring.",
            "My {r} lives in {b}.",
        ],
        "cities",
    ),
    (
        "User works at {a}.",
        Category.FACT,
        [
            "I got a job at {b}.",
            "I work at {b} now.",
            "Started at {b} on Monday!",
            "Left {a} and joined {b} {m}.",
            "Last day at {a} was Friday, I start at {b} next week.",
            "I got laid off from {a}.",
        ],
        [
            "My {r} got a job at {b}.",
            "I had a meeting with people from {b} today.",
            "{a} opened a new office.",
            "I got promoted at {a}!",
            "I might apply to {b} someday.",
            "My {r} works at {b}.",
        ],
        "companies",
    ),
    (
        "User is dating {a}.",
        Category.FACT,
        [
            "{a} and I broke up {m}.",
            "I'm seeing {b} now.",
            "I split up with {a}.",
            "I'm single again.",
            "{a} and I called it quits.",
            "I started dating {b} after {a} and I ended things.",
        ],
        [
            "{a} and I went to the coast {m}.",
            "My {r} is dating {b}.",
            "{a} cooked dinner for us tonight.",
            "My {r} broke up with {b}.",
            "{a} and I had a small argument but we're fine.",
            "{b} is {a}'s best friend.",
        ],
        "people",
    ),
    (
        "User drives a {a}.",
        Category.FACT,
        [
            "I sold my {a}.",
            "I drive a {b} now.",
            "Traded the {a} in for a {b}.",
            "Bought a {b}, the {a} is gone.",
            "I don't have a car anymore.",
            "Said goodbye to the {a} {m}.",
        ],
        [
            "My {r} bought a {b}.",
            "I washed the {a} this morning.",
            "Took the {a} in for a service.",
            "I rented a {b} on holiday.",
            "Thinking about getting a {b} one day.",
            "The {a} needs new tyres.",
        ],
        "cars",
    ),
    (
        "User uses a {a}.",
        Category.FACT,
        [
            "I switched to a {b}.",
            "I use a {b} now.",
            "Finally ditched the {a} for a {b}.",
            "Got a {b} to replace my {a}.",
        ],
        [
            "My {r} got a {b}.",
            "My {a} needs a new case.",
            "I might try a {b} one day.",
            "I dropped my {a} but it's fine.",
        ],
        "phones",
    ),
    (
        "User works as a {a}.",
        Category.FACT,
        [
            "I'm a {b} now.",
            "I retired {m}.",
            "I quit being a {a}, I'm training as a {b}.",
            "Changed careers, I'm a {b}.",
        ],
        [
            "My {r} is a {b}.",
            "Long shift as a {a} today.",
            "I trained a new {a} this week.",
            "I dreamed of being a {b}.",
        ],
        "jobs",
    ),
    (
        "User's {e} is on {a}.",
        Category.SCHEDULE,
        [
            "My {e} got moved to {b}.",
            "The {e} is cancelled.",
            "They pushed my {e} to {b}.",
            "Rescheduled the {e} to {b}.",
        ],
        [
            "My {r}'s {e} got moved to {b}.",
            "I'm nervous about my {e}.",
            "I booked a taxi for my {e}.",
            "My {r} has a {e} on {b}.",
        ],
        "days",
    ),
    (
        "User's favourite {t} is {a}.",
        Category.PREFERENCE,
        ["My favourite {t} is {b} now.", "I'm over {a}, {b} is my favourite now.", "Honestly {b} is my top {t} now."],
        [
            "My {r}'s favourite {t} is {b}.",
            "I also like {b}.",
            "I listened to {a} all day.",
            "{b} was fine, not for me.",
        ],
        "things",
    ),
]


def _values(kind: str, rng: random.Random) -> tuple[str, str, dict[str, str]]:
    extra: dict[str, str] = {}
    if kind == "things":
        thing, names = rng.choice(THINGS)
        extra["t"] = thing
        pool = names
    else:
        pool = {
            "cities": CITIES,
            "companies": COMPANIES,
            "people": PEOPLE,
            "cars": CARS,
            "phones": PHONES,
            "jobs": JOBS,
            "days": DAYS,
        }[kind]
    if kind == "days":
        extra["e"] = rng.choice(EVENTS)
    a, b = rng.sample(pool, 2)
    return a, b, extra


def template_cases(per_frame: int = 40, seed: int = 29) -> list[UpdateCase]:
    """``per_frame`` updates and as many look-alikes for each frame, with random values."""
    rng = random.Random(seed)
    out: list[UpdateCase] = []
    for n, (memory, category, updates, look_alikes, kind) in enumerate(FRAMES):
        for i in range(per_frame):
            for label, forms in (("update", updates), ("compatible", look_alikes)):
                a, b, extra = _values(kind, rng)
                words = {"a": a, "b": b, "r": rng.choice(RELATIVES), "m": rng.choice(MONTHS), **extra}
                message = rng.choice(forms).format(**words)
                out.append(UpdateCase(f"t{n}-{label}-{i}", label, memory.format(**words), category, message))
    return out
