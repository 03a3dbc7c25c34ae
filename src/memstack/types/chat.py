"""Chat turns: what ``AsyncMemstack.chat`` returns, and the events of ``AsyncMemstack.chat_stream``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from memstack.types.context import Manifest
from memstack.types.memories import MemoryUpdate, UpdateAction
from memstack.types.usage import ModelUsage

__all__ = [
    "BADGE_ACTIONS",
    "ChatDone",
    "ChatEvent",
    "ChatResult",
    "ChatToken",
    "ChatToolEvent",
    "TokenUsage",
    "ToolUse",
]


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """The tokens of a turn's model calls: as the model reported them, or ``estimated`` when it reported none (the
    offline responder, some local servers): memstack's count of the context it sent and of the reply.

    ``cost_usd``: the chat model's estimated cost (``None``: no model answered, or its price is unknown).
    ``roles``: every model call the turn made before its reply, by role and model (the chat model, and the memory
    classifier and update judge when detection finished within the badge wait); work after the reply (the session
    summarizer) is counted in the user's usage (``AsyncMemstack.usage``), not here."""

    prompt_tokens: int
    completion_tokens: int
    estimated: bool = False
    cost_usd: float | None = None
    roles: tuple[ModelUsage, ...] = ()

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "estimated": self.estimated,
            "cost_usd": self.cost_usd,
            "roles": [r.to_dict() for r in self.roles],
        }


#: Memory updates that show the "Memory updated" badge.
BADGE_ACTIONS = frozenset({UpdateAction.CREATED, UpdateAction.UPDATED})


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call the chat model made during a turn, and what was sent back to it. ``updates``: memories the
    call saved (they join the turn's badge); ``upgrade_prompt``: an explicit save refused at the tier limit."""

    name: str
    arguments: Mapping[str, Any]
    result: str  # the tool's answer (JSON text)
    error: bool = False
    updates: tuple[MemoryUpdate, ...] = ()
    upgrade_prompt: str | None = None
    model_content: str = ""  # what the model was sent: the result inside a data block with its flags

    @property
    def for_model(self) -> str:
        return self.model_content or self.result


@dataclass(frozen=True, slots=True)
class ChatResult:
    """One answered chat turn.

    ``memory_updates``: what detection saved from this message if it finished within ``badge_wait_s`` (the badge);
    ``memory_pending`` says it was still running when the reply left (it saves anyway). ``context_id`` names the
    stored manifest (what the model saw); ``None`` for a temporary chat, which stores nothing. ``memories_refused``:
    candidates detection did not store because they read as instructions to the assistant (memory poisoning).
    ``memories_used``: ids of the long-term memories placed in the context (transparency). ``offline``: the reply
    comes from the offline responder, not from a model. ``usage``: the tokens of the turn's model calls."""

    session_id: str
    reply: str
    turn: int
    memory_updates: tuple[MemoryUpdate, ...] = ()
    context_id: str | None = None
    upgrade_prompt: str | None = None
    memory_pending: bool = False
    memories_refused: tuple[str, ...] = ()
    memories_used: tuple[str, ...] = ()
    tool_uses: tuple[ToolUse, ...] = ()
    model: str = ""
    offline: bool = False
    memory_enabled: bool = True
    temporary: bool = False
    usage: TokenUsage | None = None
    manifest: Manifest | None = field(default=None, compare=False, repr=False)

    @property
    def badge(self) -> tuple[MemoryUpdate, ...]:
        """The updates the "Memory updated" badge shows: memories created or updated by this message."""
        return tuple(u for u in self.memory_updates if u.action in BADGE_ACTIONS)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: what ``POST /v1/chat`` answers (the manifest itself is fetched by ``context_id``)."""
        return {
            "session_id": self.session_id,
            "reply": self.reply,
            "turn": self.turn,
            "memory_updates": [u.to_dict() for u in self.memory_updates],
            "context_id": self.context_id,
            "upgrade_prompt": self.upgrade_prompt,
            "memory_pending": self.memory_pending,
            "memories_refused": list(self.memories_refused),
            "memories_used": list(self.memories_used),
            "tool_uses": [{"name": t.name, "arguments": dict(t.arguments), "error": t.error} for t in self.tool_uses],
            "model": self.model,
            "offline": self.offline,
            "memory_enabled": self.memory_enabled,
            "temporary": self.temporary,
            "usage": self.usage.to_dict() if self.usage is not None else None,
        }


@dataclass(frozen=True, slots=True)
class ChatToken:
    """A piece of the reply's text, as the model streams it."""

    text: str


@dataclass(frozen=True, slots=True)
class ChatToolEvent:
    """The model called a tool (between token events); ``use.result`` is what it got back."""

    use: ToolUse


@dataclass(frozen=True, slots=True)
class ChatDone:
    """The last event of a stream: the whole turn, with memory updates, context id and session id."""

    result: ChatResult


ChatEvent: TypeAlias = ChatToken | ChatToolEvent | ChatDone
