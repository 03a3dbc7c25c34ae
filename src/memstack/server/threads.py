"""Which session a request of ``POST /v1/chat/completions`` continues, when the client keeps the conversation and
sends all of it with every call (as OpenAI's API expects) and names no session.

After each turn the messages the client then holds (its system text, then every user and assistant message up to
this turn's reply) are digested and recorded with the turn's session and number (``engine.threads``). A call's
earlier messages are digested the same way:

- none: a new conversation, a new session (two conversations that both open with "hi" never share one);
- found, and that session is still at that turn: the conversation goes on there (two conversations whose
  messages are identical so far are one conversation state: the one marked last goes on);
- found, and the session has gone further: the client edited or regenerated a later message, so it branches: a new
  session gets the earlier messages imported (no memory capture: they were captured the first time) and the turn
  runs there, replacing the old reply instead of adding a turn after it;
- not found (a history memstack never saw: another server, a client that kept its own): a new session gets those
  messages imported (with memory capture), so the model still sees the conversation.

The decision holds because calls from one state make it one at a time, in every process sharing the store
(:mod:`memstack.server.single_flight`): a call made while another from the same state runs waits, and then finds
the session gone further (a branch), or, a copy of the same call, gets that call's answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from memstack.engine import AsyncMemstack
from memstack.errors import NotFound
from memstack.types import UserRef, new_id

__all__ = ["Said", "Thread", "continue_thread", "history_digest", "mark_turn"]

Said = tuple[str, str]  # (role, text): "user" or "assistant"


@dataclass(frozen=True, slots=True)
class Thread:
    """The session a call continues, and the earlier messages to import into it first (``capture``: run memory
    capture on them)."""

    session_id: str
    imports: tuple[Said, ...] = ()
    capture: bool = False


def history_digest(system: str | None, said: Sequence[Said]) -> str:
    """A conversation's state as the client holds it: its system text and its messages, in order."""
    body = json.dumps([system or "", [list(s) for s in said]], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


async def continue_thread(ms: AsyncMemstack, user: UserRef, system: str | None, earlier: Sequence[Said]) -> Thread:
    """Where a call whose messages before the current one are ``earlier`` goes on (see the module docstring)."""
    if not earlier:
        return Thread(new_id("ses"))
    found = await ms.threads.find(user, history_digest(system, earlier))
    if found is None:
        return Thread(new_id("ses"), tuple(earlier), capture=True)
    session_id, turn = found
    try:
        state = await ms.sessions.get(user, session_id, window_turns=1)
    except NotFound:  # the session was deleted since: start over from the client's messages
        return Thread(new_id("ses"), tuple(earlier), capture=False)
    latest = max([state.turn_count, *(m.turn for m in state.raw_window)])  # a reply's summary may still be due
    if latest == turn:
        return Thread(session_id)
    return Thread(new_id("ses"), tuple(earlier), capture=False)


async def mark_turn(
    ms: AsyncMemstack,
    user: UserRef,
    system: str | None,
    earlier: Sequence[Said],
    exchange: Said,
    reply: str,
    session_id: str,
    turn: int,
) -> None:
    """Record the conversation as the client now holds it (``earlier``, this turn's message and the reply)."""
    said = [*earlier, exchange, ("assistant", reply)]
    await ms.threads.mark(user, history_digest(system, said), session_id, turn)
