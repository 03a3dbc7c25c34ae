"""Forgetting: what a forgotten memory hides from the model besides itself, and the outcome of forgetting by query.

A memory came from something the user said (its ``source_turn_ids``) and left traces in what memstack derived from
the conversation: the archived exchange recall finds, the session's facts, the turn log, the session's one-line
summary. Forgetting the memory hides those too; each :class:`HiddenItem` names one of them and the memory whose
forget hides it (:mod:`memstack.capture.forget` decides which, the stores apply it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from memstack.types.memories import Memory

__all__ = ["Forgetting", "HiddenItem", "HiddenKind"]


class HiddenKind(StrEnum):
    """What a hidden item is."""

    TURN = "turn"  # an archived exchange: both its messages, its turn-log entry and its place in recall
    FACT = "fact"  # one base-truth fact of a session, by its text
    LINE = "line"  # a session's cross-session summary line (layer 7), by its text


@dataclass(frozen=True, slots=True)
class HiddenItem:
    """One thing kept from the model because ``memory_id`` was forgotten. ``turn``: the exchange's number (kind
    ``turn``); ``text``: the fact or line hidden (kinds ``fact`` and ``line``: exactly that text; a later line or
    fact with other words is not hidden). A preview also fills ``text`` of an exchange with its user message, and
    ``reason`` with why it goes (``source``: the memory came from it; ``mentions``: it says what the memory says)."""

    kind: HiddenKind
    session_id: str
    turn: int = 0
    text: str = ""
    memory_id: str = ""
    reason: str = ""

    @property
    def key(self) -> tuple[str, str, int, str]:
        """What identifies the hidden thing, whichever memory hides it."""
        return (self.kind.value, self.session_id, self.turn, self.text if self.kind is not HiddenKind.TURN else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "session_id": self.session_id,
            "turn": self.turn,
            "text": self.text,
            "memory_id": self.memory_id,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class Forgetting:
    """What forgetting by query did, or (``dry_run``) would do: the memories forgotten (as they are after it, or
    still active in a preview) and everything their forget hides besides them."""

    query: str
    memories: tuple[Memory, ...]
    hidden: tuple[HiddenItem, ...]
    dry_run: bool = False
