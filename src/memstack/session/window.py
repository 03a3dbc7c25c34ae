"""The raw window: the last ``window`` messages verbatim, long messages kept a few turns longer (seed 04 §6)."""

from __future__ import annotations

from collections.abc import Sequence

from memstack.session.routing import RouteDecision
from memstack.session.settings import SessionSettings
from memstack.session.text import count_words
from memstack.types import Exchange, RawMessage

__all__ = ["evict", "keep_extra", "push_exchange"]


def push_exchange(
    window: Sequence[RawMessage], exchange: Exchange, decision: RouteDecision, settings: SessionSettings | None = None
) -> tuple[RawMessage, ...]:
    """Append both messages of ``exchange`` and evict. A message of ``long_words`` or more (on a long or code route)
    is marked to stay ``long_extra_turns`` turns after it would have left. A blank message (no reply was given) is
    not appended, as the stores leave it out of the window they read."""
    s = settings or SessionSettings()
    user_keep, assistant_keep = keep_extra(exchange, decision, s)
    new = [
        RawMessage("user", exchange.user, exchange.turn, exchange.at, user_keep),
        RawMessage("assistant", exchange.assistant, exchange.turn, exchange.at, assistant_keep),
    ]
    return evict([*window, *(m for m in new if m.content.strip())], s.window)


def keep_extra(exchange: Exchange, decision: RouteDecision, settings: SessionSettings) -> tuple[int, int]:
    """How many turns longer the user's and the assistant's message stay in the window (long messages only)."""
    extra = settings.long_extra_turns if decision.preserve_raw else 0
    return (
        extra if count_words(exchange.user) >= settings.long_words else 0,
        extra if count_words(exchange.assistant) >= settings.long_words else 0,
    )


def evict(messages: Sequence[RawMessage], window: int) -> tuple[RawMessage, ...]:
    """Keep the newest ``window`` messages, plus older ones whose ``keep_extra_turns`` reach the oldest kept turn."""
    if len(messages) <= window:
        return tuple(messages)
    start = len(messages) - window
    cutoff = messages[start].turn
    return tuple(m for i, m in enumerate(messages) if i >= start or m.turn + m.keep_extra_turns >= cutoff)
