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
