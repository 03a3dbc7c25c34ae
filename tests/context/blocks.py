"""Reading rendered prompts back: which text sits inside which data block, and what lies outside any block."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memstack.context import ChatMessage


@dataclass(frozen=True)
class Rendered:
    key: str
    blocks: list[tuple[str, str]]  # (layer, content) of every data block, in order
    outside: str  # all message text that is not inside a block


def read(messages: Sequence[ChatMessage]) -> Rendered:
    opening = re.compile(r'<context-data layer="[a-z_]+"[^>\n]* key="([0-9]{12})">')
    keys = {k for m in messages for k in opening.findall(m.content)}
    assert len(keys) <= 1, f"one key per assembly, found {keys}"
    key = keys.pop() if keys else ""
    pattern = re.compile(
        rf'<context-data layer="([a-z_]+)"[^>\n]* key="{key}">\n(.*?)</context-data key="{key}">', re.S
    )
    blocks: list[tuple[str, str]] = []
    outside: list[str] = []
    for message in messages:
        text = message.content
        blocks.extend((m.group(1), m.group(2)) for m in pattern.finditer(text))
        outside.append(pattern.sub("", text))
    return Rendered(key, blocks, "\n".join(outside))


def squash(text: str) -> str:
    return " ".join(text.split())


def snippets(text: str, size: int = 28) -> list[str]:
    """Overlapping pieces of ``text`` (whitespace-normalized) to look for elsewhere."""
    flat = squash(text)
    if len(flat) <= size:
        return [flat]
    return [flat[i : i + size] for i in range(0, len(flat) - size + 1, size // 2)]
