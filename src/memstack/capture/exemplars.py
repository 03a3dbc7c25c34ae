"""Example sentences the offline classifier compares candidates with (embedded once, lazily).

Written for memstack; general on purpose (students, work, family, hobbies), never taken from evaluation data:
``scripts/check_exemplars.py --data DIR`` compares every sentence here with every text of the evaluation data and
fails on a near-verbatim one (run it after changing them).
"""

from __future__ import annotations

from types import MappingProxyType

from memstack.types import Category

__all__ = ["NEGATIVE", "POSITIVE"]

POSITIVE = MappingProxyType(
    {
        Category.PREFERENCE: (
            "I prefer short explanations.",
            "I love spicy food.",
            "I really enjoy hiking on weekends.",
            "I can't stand horror movies.",
            "My favourite band is Radiohead.",
            "I could listen to jazz records all day.",
            "I don't like working late at night.",
            "I'm vegetarian.",
        ),
        Category.FACT: (
            "I'm a sophomore at UCLA.",
            "I work as a nurse at the city hospital.",
            "I live in Chicago with my two kids.",
            "My sister is a lawyer.",
            "I have a golden retriever named Max.",
            "I grew up in a small town in Ohio.",
            "I've been playing the violin for ten years.",
            "I moved here from Brazil three years ago.",
        ),
        Category.GOAL: (
            "I want to ace my physics final.",
            "I'm planning to run a marathon next year.",
            "My goal is to become a software engineer.",
            "I'm saving up to buy a house.",
            "I hope to open my own bakery someday.",
            "I'm trying to learn Spanish before my trip.",
            "I'm studying for the MCAT.",
            "I'd like to get better at public speaking.",
        ),
        Category.LEARNINGSTYLE: (
            "Visual explanations help me.",
            "I learn best with step-by-step examples.",
            "Diagrams make things click for me.",
            "I understand better when you use analogies.",
            "Flashcards work well for me.",
            "I like to practice with quizzes after reading.",
        ),
        Category.SCHEDULE: (
            "My quiz is next Thursday.",
            "I have a job interview on Monday.",
            "My flight to Tokyo leaves on June 5th.",
            "The essay is due tomorrow.",
            "My sister's wedding is in two weeks.",
            "I have a dentist appointment on Friday.",
        ),
        Category.GENERAL: (
            "I spoke at a community meeting on Tuesday and felt proud afterwards.",
            "I cycled forty miles for a fundraiser on Sunday.",
            "I started volunteering at the animal shelter.",
            "We adopted a puppy last month.",
            "I just finished painting my first landscape.",
            "My family went camping at the lake last summer.",
        ),
    }
)

NEGATIVE = (
    "Can you explain how photosynthesis works?",
    "Write me a poem about the sea.",
    "Thanks, that was helpful!",
    "Hey there, hope your morning's going well?",
    "Any thoughts on my last message?",
    "You're so kind, thank you.",
    "Wow, congratulations, that's brilliant news!",
    "Fair point, I'm with you on that.",
    "I'm a bit tired right now.",
    "I'm looking at page 12 of the textbook.",
    "Yep, that's my view as well.",
    "Have a lovely evening, chat soon.",
    "Yeah, I get where you're coming from.",
    "I'm not sure about this question.",
    "Give me a moment to mull it over.",
    "I see, that's interesting.",
    "Tell me how it turns out, okay?",
    "I'm proud of you for doing that.",
    "I mean, it's just a thought.",
    "Wishing you the very best with it.",
    "I'll have a look at that tonight.",
    "I was just wondering about that.",
    "Yep, likewise.",
    "I guess that's true.",
)
