"""The OpenAI Agents SDK: a ``Session`` kept in memstack, and memstack's memory tools as function tools.

::

    session = MemstackSession("trip-2026", ms, "alice")        # the conversation, across runs and processes
    agent = Agent(name="planner", tools=memory_tools(ms, "alice"))  # recall_memory, save_memory, forget_memory
    await Runner.run(agent, "Where did we land?", session=session)

**The session.** :class:`MemstackSession` implements the SDK's ``Session`` protocol (``get_items``, ``add_items``,
``pop_item``, ``clear_session``) over a memstack session of the same id, through the public API only:

- ``add_items`` imports the items' user and assistant messages with :meth:`AsyncMemstack.ingest` (``end=False``:
  the session stays open), so each exchange is archived, summarized into the session's turn log and base truth, and
  embedded for recall, exactly as a chat turn's phase 2 does, with no model call; ``capture`` (on by default) also
  runs long-term memory capture on the user's messages. The SDK saves a run's input and its answer in separate calls:
  an exchange then spans two archived turns (the user's side, then the reply's), read back in order.
- ``get_items`` reads the archived turns back (``engine.sessions.turns``) as ``{"role", "content"}`` messages, the
  latest ``limit`` of them when given; an exchange a forgotten memory hides is left out (its texts are withheld).
- What the archive holds is the conversation: user and assistant text. Tool calls and their outputs, reasoning and
  system or developer messages are a run's working, not kept (the SDK sends the model the messages of earlier
  runs); consecutive messages of one side in one ``add_items`` become one message, as memstack pairs exchanges.
- The archive is append-only (it is the user's memory; forgetting and erasure are :meth:`AsyncMemstack.forget` and
  :meth:`~AsyncMemstack.erase`). ``clear_session`` ends the memstack session (which writes its line about the
  user's past, layer 7) and continues in a fresh one, ``ID~1``, ``ID~2``…: the SDK's history starts empty, and
  what was said stays in the user's memory. ``pop_item`` does the same and imports the remaining turns into the new
  session at their own times, without capture (their memories are held already): a rare correction, whose cost grows
  with the session. Which memstack session is current is found again from the store on first use (the latest not
  ended), so another process with the same id continues where this one left.

The session and the tools work on the embedded engine (:class:`~memstack.AsyncMemstack`) or on an
``AsyncMemstackClient`` of a memstack server (``GET /v1/sessions/{id}/turns``, ``POST /v1/ingest``, ``POST
/v1/sessions/{id}/end``). The SDK is imported inside the functions (the ``openai-agents`` extra): importing memstack
never imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from memstack.adapters._common import require, tool_functions
from memstack.errors import NotFound

if TYPE_CHECKING:
    from memstack.adapters._common import Engine

__all__ = ["MemstackSession", "memory_tools"]

_PAGE = 100
_SIDES = ("user", "assistant")


def _require() -> None:
    require("agents", adapter="OpenAI Agents SDK", package="openai-agents", extra="openai-agents")


def memory_tools(engine: Engine, user_id: str, *, tenant: str | None = None, agent_id: str | None = None) -> list[Any]:
    """``recall_memory``, ``save_memory`` and ``forget_memory`` as the SDK's ``FunctionTool``\\ s for ``user_id``."""
    _require()
    from agents import function_tool

    return [function_tool(fn) for fn in tool_functions(engine, user_id, tenant=tenant, agent_id=agent_id)]


def _text(content: Any) -> str:
    """A message's text: a string, or the text of its parts (``input_text``, ``output_text``, ``text``)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [part.get("text") for part in content if isinstance(part, Mapping)]
    return "\n".join(t for t in texts if isinstance(t, str) and t)


def _messages(items: list[Any]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for item in items:
        if hasattr(item, "model_dump"):  # a pydantic item of the SDK's instead of its dict
            item = item.model_dump(exclude_unset=True)
        if not isinstance(item, Mapping) or item.get("type", "message") != "message":
            continue
        role, text = item.get("role"), _text(item.get("content")).strip()
        if role in _SIDES and text:
            out.append({"role": role, "content": text})
    return out


def _sides(turn: Any) -> list[tuple[str, str]]:
    """An archived turn's messages: the user's side, then the reply, each when it is not blank."""
    return [(side, text) for side, text in ((_SIDES[0], turn.user), (_SIDES[1], turn.assistant)) if text]


class MemstackSession:
    """The SDK's ``Session`` over memstack session ``session_id`` of ``user_id`` (see the module's docstring).

    ``agent``: the memstack agent the session belongs to; ``capture``: long-term memory capture on the user's
    messages as they are added (with the user's ``tier``)."""

    session_settings: Any = None  # the SDK's SessionSettings: none of its own (a run's settings apply)

    def __init__(
        self,
        session_id: str,
        engine: Engine,
        user_id: str,
        *,
        tenant: str | None = None,
        agent: str | None = None,
        capture: bool = True,
        tier: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.engine = engine
        self.user_id = user_id
        self.tenant = tenant
        self.agent = agent
        self.capture = capture
        self.tier = tier
        self._generation: int | None = None

    def _memstack_id(self, generation: int) -> str:
        return self.session_id if generation == 0 else f"{self.session_id}~{generation}"

    async def current(self) -> str:
        """The memstack session this one writes to now: the first of ``ID``, ``ID~1``… that is not ended."""
        if self._generation is None:
            generation = 0
            while True:
                try:
                    state = await self.engine.sessions.get(
                        self.user_id, self._memstack_id(generation), tenant=self.tenant
                    )
                except NotFound:
                    break
                if state.ended_at is None:
                    break
                generation += 1
            self._generation = generation
        return self._memstack_id(self._generation)

    async def _turns(self, session_id: str) -> list[Any]:
        turns: list[Any] = []
        while True:
            try:
                page = await self.engine.sessions.turns(
                    self.user_id, session_id, limit=_PAGE, offset=len(turns), tenant=self.tenant
                )
            except NotFound:
                return turns
            turns += page
            if len(page) < _PAGE:
                return turns

    async def get_items(self, limit: int | None = None) -> list[Any]:
        items: list[Any] = []
        for turn in await self._turns(await self.current()):
            items += [{"role": side, "content": text} for side, text in _sides(turn)]
        return items if limit is None else items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[Any]) -> None:
        messages = _messages(items)
        if messages:
            await self.engine.ingest(
                self.user_id, await self.current(), messages, agent=self.agent, capture=self.capture,
                tier=self.tier, end=False, tenant=self.tenant,
            )  # fmt: skip

    async def _next(self) -> list[Any]:
        """End the current memstack session (when it exists) and move to the next; its turns, as they were."""
        current = await self.current()
        turns = await self._turns(current)
        if turns:
            await self.engine.end_session(self.user_id, current, tenant=self.tenant)
            assert self._generation is not None
            self._generation += 1
        return turns

    async def pop_item(self) -> Any | None:
        items = await self.get_items()
        if not items:
            return None
        turns = await self._next()
        last = turns[-1]
        kept = list(turns[:-1])
        if last.user and last.assistant:  # the reply goes, the user's side of its exchange stays
            kept.append(last)
        target = await self.current()
        for turn in kept:
            sides = _sides(turn)
            if turn is last:
                sides = sides[:1]
            await self.engine.ingest(
                self.user_id, target, [{"role": s, "content": t, "at": turn.at} for s, t in sides],
                agent=self.agent, capture=False, end=False, tenant=self.tenant,
            )  # fmt: skip
        return items[-1]

    async def clear_session(self) -> None:
        await self._next()
