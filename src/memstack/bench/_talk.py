"""Synthetic conversation for the benchmarks: messages that save a memory, and whole conversations of LoCoMo's size
and shape, written here from templates (no evaluation data is copied; a LoCoMo file is read only when passed with
``--data``).

* :func:`saving_message`: a first-person statement the offline classifier stores ("I just adopted a puppy named
  Tavime."), naming someone or something by a made-up name that :class:`Names` never repeats, so each message is a
  text of its own (nothing cached, nothing a duplicate of an earlier memory) and the memory it becomes can be found
  by that name.
* :func:`no_save_message`: a question or a request with nothing to remember ("How do you pronounce Tavime?"), each
  naming something new in the same sentence: a guard or an embedding cache keyed by the text or by the sentence has
  never met it.
* :func:`synthetic_conversations`: two people chatting over many dated sessions, as LoCoMo's conversations do (its
  shape: 19-32 sessions of 14-35 turns, 370-680 turns a conversation, about 23 words a turn, captions included, the
  speakers alternating, one turn in five sharing a photo, shown as its caption). About one sentence in four says
  something about the speaker worth remembering; the rest are reactions, questions and small talk.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from memstack.evals.locomo_data import Conversation, LocomoTurn

__all__ = ["Names", "no_save_message", "saving_message", "synthetic_conversations"]

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "tr", "sh", "ch", "kl")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")

PETS = ("puppy", "kitten", "rabbit", "parrot", "hamster", "tortoise", "golden retriever", "tabby cat")
CITIES = ("Lisbon", "Denver", "Kyoto", "Porto", "Oslo", "Austin", "Seville", "Toronto", "Nairobi", "Hanoi", "Cork")
JOBS = ("nurse", "carpenter", "pharmacist", "bus driver", "graphic designer", "chef", "electrician", "librarian")
RELATIVES = ("cousin", "sister", "brother", "aunt", "uncle", "niece", "nephew", "grandmother")
HOBBIES = ("pottery", "salsa", "climbing", "cello", "watercolor", "chess", "kayaking", "baking", "archery")
FOODS = ("lasagna", "ramen", "banana bread", "tacos", "curry", "dumplings", "paella", "apple pie")
MONTHS = ("March", "April", "June", "July", "September", "October", "December")
PLACES = ("the lake", "the farmers market", "a friend's cabin", "the coast", "the botanical garden", "a concert")

_SAVING = (
    "I just adopted a {pet} named {name}.",
    "My {relative} {name} moved to {city} last month.",
    "My best friend {name} is a {job} in {city}.",
    "I'm planning a trip to {city} in {month} with my {relative} {name}.",
    "My daughter {name} just started kindergarten.",
    "I've been taking {hobby} lessons from a teacher called {name}.",
    "My {relative} {name} works as a {job} now.",
    "I named my new bike {name}.",
    "My neighbour {name} taught me how to make {food}.",
    "I joined a {hobby} club that my friend {name} runs.",
)
_NO_SAVE = (
    "In a fantasy story, what would a dragon called {name} eat?",
    "How do you pronounce {name}?",
    "Write me a 100-word story about a robot named {name} who learns to cook {food}.",
    "Could you make a quiz with five questions about the imaginary planet {name}?",
    "Translate 'good morning, {name}, see you at the market' into Spanish.",
    "What rhymes with {name}?",
    "Is {name} a good name for a {pet}, or is it too odd?",
    "Summarize in three sentences what a novel titled '{name}' could be about.",
    "Give me three ideas for a {hobby} class called {name}.",
    "What would be a good slogan for a bakery named {name} in {city}?",
    "Can you check my grammar: '{name} and me goes to the library every friday.'",
    "Explain recursion with a short Python example that uses a function called {name}.",
)
_CHATTER = (
    "That sounds amazing!",
    "Wow, how did that go?",
    "I'm so happy for you.",
    "What made you decide to do that?",
    "Haha, that's hilarious.",
    "Did you take any pictures?",
    "How long have you been into {hobby}?",
    "That must have been exhausting, but worth it.",
    "Good luck with everything this week!",
    "I totally get what you mean.",
    "Tell me more about {city}, I've never been.",
    "Oh no, I hope everything is okay now.",
    "Thanks for asking, it's been a busy few days.",
    "We should catch up properly soon.",
)
_NARRATIVE = (
    "Last weekend I went to {place} with {name} and we stayed until sunset.",
    "Yesterday I finally finished the {hobby} project I started in {month}.",
    "Work has been hectic lately, so I've been cooking {food} to unwind.",
    "I spent the afternoon at {place}, it was so peaceful.",
    "We tried a new {food} recipe and it turned out great.",
    "I've been thinking about signing up for a {hobby} workshop.",
    "The weather was perfect, so I walked around {place} for hours.",
)
_CAPTIONS = (
    "a photo of a {pet} sleeping on a couch",
    "a photo of a plate of homemade {food}",
    "a photo of a sunset over {place}",
    "a photo of a street in {city} at night",
    "a photo of a table covered in {hobby} supplies",
)


class Names:
    """Made-up names, each given once (two or three syllables, capitalised: "Tavime", "Broulika")."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._given: set[str] = set()

    def __call__(self) -> str:
        while True:
            syllables = int(self._rng.integers(2, 4))
            name = "".join(str(self._rng.choice(_ONSETS)) + str(self._rng.choice(_VOWELS)) for _ in range(syllables))
            if name not in self._given:
                self._given.add(name)
                return name.capitalize()


def _fill(template: str, rng: np.random.Generator, name: str) -> str:
    pick = {k: str(rng.choice(v)) for k, v in _VOCABULARY.items()}
    return template.format(name=name, **pick)


_VOCABULARY = {
    "pet": PETS,
    "city": CITIES,
    "job": JOBS,
    "relative": RELATIVES,
    "hobby": HOBBIES,
    "food": FOODS,
    "month": MONTHS,
    "place": PLACES,
}


def saving_message(rng: np.random.Generator, name: str) -> str:
    """A first-person statement naming ``name`` that memory capture stores."""
    return _fill(str(rng.choice(_SAVING)), rng, name)


def no_save_message(rng: np.random.Generator, name: str) -> str:
    """A question or request naming ``name``, with nothing in it to remember."""
    return _fill(str(rng.choice(_NO_SAVE)), rng, name)


def _sentence(rng: np.random.Generator, names: Names) -> str:
    kind = rng.random()
    if kind < 0.25:
        return saving_message(rng, names())
    if kind < 0.55:
        return _fill(str(rng.choice(_NARRATIVE)), rng, names())
    return _fill(str(rng.choice(_CHATTER)), rng, "")


def synthetic_conversations(count: int, seed: int = 0) -> list[Conversation]:
    """``count`` conversations of LoCoMo's shape (module docstring), reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    names = Names(rng)
    out = []
    for number in range(count):
        speakers = (names(), names())
        at = datetime(2023, 1, 1) + timedelta(days=int(rng.integers(0, 365)), hours=int(rng.integers(8, 22)))
        turns: list[LocomoTurn] = []
        for session in range(1, int(rng.integers(19, 33)) + 1):
            at += timedelta(days=int(rng.integers(3, 22)), minutes=int(rng.integers(0, 600)))
            speaker = int(rng.integers(0, 2))
            for position in range(1, int(rng.integers(12, 34)) + 1):
                text = " ".join(dict.fromkeys(_sentence(rng, names) for _ in range(int(rng.integers(1, 5)))))
                caption = _fill(str(rng.choice(_CAPTIONS)), rng, "") if rng.random() < 0.2 else None
                turn_id = f"D{session}:{position}"
                turns.append(LocomoTurn(turn_id, speakers[speaker], text, session, at, caption))
                if rng.random() > 0.03:  # now and then one speaker says two things in a row
                    speaker = 1 - speaker
        out.append(Conversation(f"synthetic-{number}", tuple(turns), (), speakers[0], speakers[1]))
    return out
