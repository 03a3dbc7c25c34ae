"""pydantic-ai: memstack's memory tools for an ``Agent``, and memstack's context fed into its runs.

::

    agent = Agent(model,
        tools=memory_tools(ms, "alice"),                          # recall_memory, save_memory, forget_memory
        capabilities=[memory_context(ms, "alice", session_id="s1")])  # layers 5–8 before every model request

- :func:`memory_tools`: the three tools as pydantic-ai ``Tool``\\ s bound to one user (``memstack.adapters._common``
  does the work: what each answers, and which mistakes come back to the model as ``error: …``).
- :func:`memory_context_processor`: a history processor (pydantic-ai's ``ProcessHistory`` runs it before every
  model request of a run): it reads the latest user prompt, asks memstack for what it knows that bears on it (the
  session's facts and turn log when ``session_id`` names a memstack session, the memories and archived messages
  recall ranks for the prompt, the lines about other recent sessions) and puts that block, as a system prompt part,
  just before the user prompt it was retrieved for. pydantic-ai keeps what a processor returns as the run's history,
  so the processor first removes any block it placed before (the next step, or a previous run whose messages were
  passed back as ``message_history``): the model sees one block, the current one. :func:`memory_context` wraps it
  in the capability.

The adapter captures nothing by itself: what the user says reaches memstack's long-term memory through
``save_memory`` (the model decides) or by importing the conversation (``AsyncMemstack.ingest``). pydantic-ai is
imported inside the functions (the ``pydantic-ai`` extra): importing memstack never imports it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from memstack.adapters._common import CONTEXT_HEADER, require, tool_functions
from memstack.adapters._common import memory_context as _memory_context

if TYPE_CHECKING:
    from memstack.adapters._common import Engine

__all__ = ["memory_context", "memory_context_processor", "memory_tools"]


def _require() -> None:
    require("pydantic_ai", adapter="pydantic-ai", package="pydantic-ai-slim", extra="pydantic-ai")


#: A pydantic-ai history processor (``list[ModelMessage]`` in and out; typed loosely so that this module does not
#: import pydantic-ai before it is called).
Processor = Callable[[list[Any]], Awaitable[list[Any]]]


def memory_tools(engine: Engine, user_id: str, *, tenant: str | None = None, agent_id: str | None = None) -> list[Any]:
    """``recall_memory``, ``save_memory`` and ``forget_memory`` as pydantic-ai ``Tool``\\ s for ``user_id``."""
    _require()
    from pydantic_ai import Tool

    return [Tool(fn) for fn in tool_functions(engine, user_id, tenant=tenant, agent_id=agent_id)]


def _prompt_text(part: Any) -> str:
    content = part.content
    if isinstance(content, str):
        return content
    return " ".join(item for item in content if isinstance(item, str))


def memory_context_processor(
    engine: Engine,
    user_id: str,
    *,
    session_id: str | None = None,
    tenant: str | None = None,
    agent_id: str | None = None,
    limit: int = 5,
) -> Processor:
    """A history processor that gives each model request memstack's context for the latest user prompt."""
    _require()
    from pydantic_ai.messages import ModelRequest, SystemPromptPart, UserPromptPart

    def ours(part: Any) -> bool:
        return isinstance(part, SystemPromptPart) and part.content.startswith(CONTEXT_HEADER)

    async def process(messages: list[Any]) -> list[Any]:
        kept: list[Any] = []
        for message in messages:
            if isinstance(message, ModelRequest) and any(ours(p) for p in message.parts):
                parts = [p for p in message.parts if not ours(p)]
                if not parts:
                    continue
                message = dataclasses.replace(message, parts=parts)
            kept.append(message)
        for index in range(len(kept) - 1, -1, -1):
            message = kept[index]
            if not isinstance(message, ModelRequest):
                continue
            prompts = [i for i, p in enumerate(message.parts) if isinstance(p, UserPromptPart)]
            if not prompts:
                continue
            text = _prompt_text(message.parts[prompts[-1]])
            block = await _memory_context(
                engine, user_id, text, session_id=session_id, tenant=tenant, agent_id=agent_id, limit=limit
            )
            if block:
                parts = list(message.parts)
                parts.insert(prompts[-1], SystemPromptPart(block))
                kept[index] = dataclasses.replace(message, parts=parts)
            break
        return kept

    return process


def memory_context(
    engine: Engine,
    user_id: str,
    *,
    session_id: str | None = None,
    tenant: str | None = None,
    agent_id: str | None = None,
    limit: int = 5,
) -> Any:
    """:func:`memory_context_processor` as a pydantic-ai capability (``Agent(capabilities=[...])``)."""
    _require()
    from pydantic_ai.capabilities import ProcessHistory

    return ProcessHistory(
        memory_context_processor(engine, user_id, session_id=session_id, tenant=tenant, agent_id=agent_id, limit=limit)
    )
