"""Prompts are data: every template the library sends to a model, named and versioned.

Change a prompt by adding a new version; tests render every template.
"""

from __future__ import annotations

from dataclasses import dataclass
from string import Template

__all__ = ["PROMPTS", "Prompt", "get_prompt"]


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    version: int
    template: str

    def render(self, **values: str) -> str:
        """Substitute ``$name`` placeholders; a missing value raises ``KeyError`` naming it."""
        return Template(self.template).substitute(values)


PROMPTS: dict[str, Prompt] = {}


def _register(prompt: Prompt) -> Prompt:
    PROMPTS[prompt.name] = prompt
    return prompt


def get_prompt(name: str) -> Prompt:
    return PROMPTS[name]


CLASSIFY_MEMORY = _register(
    Prompt(
        name="capture.classify",
        version=1,
        template="""\
You decide whether a user's chat message contains durable facts worth remembering about the user for future
conversations. Most messages contain none: then return an empty list.

Save only facts about the user that will still matter later, in one of these categories:
- preference: likes, dislikes, how they want answers ("I prefer short explanations")
- fact: who they are, what they do, people and things in their life ("I'm a sophomore at UCLA")
- goal: what they want to achieve ("I want to ace my physics final")
- learningstyle: how they learn best ("Visual explanations help me")
- schedule: dated events and deadlines ("My quiz is next Thursday")
- general: any other durable fact about the user

Never save: task requests ("write me an essay"), greetings and thanks, questions about the assistant, or
temporary context (how they feel right now, what they are looking at, the current question).

Write each memory as one short third-person statement starting with "User" ("User is a sophomore at UCLA").
Today is $today: turn relative dates into absolute ones ("User's quiz is on Thursday, 16 May 2024").
Set "explicit" to true only when the user asked you to remember it. "confidence" is between 0 and 1.

Recent conversation (for reference only; classify only the new message):
$context

New message from the user:
<<<
$message
>>>

Reply with JSON only, exactly in this shape:
{"memories": [{"content": "...", "category": "preference|fact|goal|learningstyle|schedule|general",
"confidence": 0.0, "explicit": false}]}""",
    )
)
