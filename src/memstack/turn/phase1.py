"""Phase 1 of a turn: the chat model call, streamed or not, with the tool loop.

When the model asks for tools, each call is executed (:class:`ToolBox`), the assistant message and the results are
appended, and the model is called again, at most ``max_tool_rounds`` times; the last call offers the tools with
``tool_choice="none"`` so the model has to answer in words. A tool failing, or a model calling a tool that does not
exist or with bad arguments, becomes an error result the model reads, never an exception in the chat.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from memstack.errors import InputError, ProviderError
from memstack.models import ChatModel, ChatResponse, Message, ToolCall, ToolSpec, Usage
from memstack.types import ChatToken, ChatToolEvent, ToolUse

__all__ = ["ModelParams", "Phase1Done", "ToolBox", "ToolSupport", "run_phase1"]

log = logging.getLogger("memstack.turn")

#: Statuses with which an endpoint refuses a request it cannot serve (here: one that offers tools).
_REFUSED = frozenset({400, 422})


class ToolBox(Protocol):
    """The tools offered to the model during one turn (bound to its user)."""

    @property
    def specs(self) -> Sequence[ToolSpec]: ...

    async def call(self, call: ToolCall) -> ToolUse:
        """Run one call; failures are returned as ``ToolUse(error=True)`` with a message the model can read."""
        ...


class ToolSupport:
    """Models seen refusing requests that offer tools (HTTP 400/422: many local models have no tool calling).
    Their turns go on without tools instead of failing; kept for the life of the engine."""

    def __init__(self) -> None:
        self._refused: set[str] = set()

    def accepts(self, model: str) -> bool:
        return model not in self._refused

    def refused(self, model: str, error: ProviderError) -> None:
        if model not in self._refused:
            log.warning("%s refused a request with tools (%s); its turns go on without memory tools", model, error)
        self._refused.add(model)


@dataclass(frozen=True, slots=True)
class ModelParams:
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    max_tool_rounds: int = 4

    def __post_init__(self) -> None:
        if self.max_tool_rounds < 0:
            raise InputError(f"max_tool_rounds must be >= 0, got {self.max_tool_rounds}")


@dataclass(frozen=True, slots=True)
class Phase1Done:
    """The reply (all text the model produced, in order), the tools it used, the token usage it reported;
    ``placeholder``: the text is a stand-in no model wrote (:attr:`~memstack.models.ChatResponse.placeholder`)."""

    text: str
    tool_uses: tuple[ToolUse, ...]
    usage: Usage | None
    model: str
    placeholder: bool = False


async def _one_call(
    model: ChatModel,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] | None,
    tool_choice: str | None,
    params: ModelParams,
    stream: bool,
    tokens: list[str],
) -> AsyncIterator[ChatToken | ChatResponse]:
    """One model call: its text as ``ChatToken`` events when streaming, then the whole response."""
    if not stream:
        response = await model.complete(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            temperature=params.temperature,
            max_tokens=params.max_tokens,
            timeout=params.timeout,
        )
        tokens.append(response.text)
        yield response
        return
    parts: list[str] = []
    calls: tuple[ToolCall, ...] = ()
    finish: str | None = None
    usage: Usage | None = None
    name = ""
    placeholder = False
    chunks = model.stream(
        messages,
        tools=tools,
        tool_choice=tool_choice,
        temperature=params.temperature,
        max_tokens=params.max_tokens,
        timeout=params.timeout,
    )
    async for chunk in chunks:
        name = chunk.model or name
        placeholder = placeholder or chunk.placeholder
        if chunk.text:
            parts.append(chunk.text)
            tokens.append(chunk.text)
            yield ChatToken(chunk.text)
        if chunk.finish_reason is not None:
            calls, finish, usage = chunk.tool_calls, chunk.finish_reason, chunk.usage
    yield ChatResponse("".join(parts), calls, finish, usage, name, placeholder)


def _add_usage(total: Usage | None, more: Usage | None) -> Usage | None:
    if more is None:
        return total
    if total is None:
        return more
    return Usage(total.prompt_tokens + more.prompt_tokens, total.completion_tokens + more.completion_tokens)


async def run_phase1(
    model: ChatModel,
    messages: Sequence[Message],
    tools: ToolBox | None,
    params: ModelParams,
    *,
    stream: bool,
    support: ToolSupport | None = None,
) -> AsyncIterator[ChatToken | ChatToolEvent | Phase1Done]:
    """Token and tool events (tokens only when ``stream``), then one :class:`Phase1Done`. With ``support``, a model
    that refuses requests offering tools is asked again without them (before any of its text was passed on)."""
    conversation = list(messages)
    if tools is not None and support is not None and not support.accepts(model.name):
        tools = None
    specs = tuple(tools.specs) if tools is not None else ()
    uses: list[ToolUse] = []
    text: list[str] = []
    usage: Usage | None = None
    placeholder = False
    for round_ in range(params.max_tool_rounds + 1):
        last = round_ == params.max_tool_rounds
        offered = specs or None
        choice = "none" if (last and specs) else None
        response: ChatResponse | None = None
        try:
            async for item in _one_call(model, conversation, offered, choice, params, stream, text):
                if isinstance(item, ChatResponse):
                    response = item
                else:
                    yield item
        except ProviderError as exc:
            if support is None or round_ > 0 or not specs or text or exc.status not in _REFUSED:
                raise
            support.refused(model.name, exc)
            tools, specs = None, ()
            async for item in _one_call(model, conversation, None, None, params, stream, text):
                if isinstance(item, ChatResponse):
                    response = item
                else:
                    yield item
        if response is None:  # pragma: no cover - _one_call always ends with the response
            break
        usage = _add_usage(usage, response.usage)
        placeholder = placeholder or response.placeholder
        if not response.tool_calls or tools is None or last:
            break
        conversation.append(response.message)
        for call in response.tool_calls:
            use = await tools.call(call)
            uses.append(use)
            yield ChatToolEvent(use)
            conversation.append(Message.tool(call.id, use.for_model))
    yield Phase1Done("".join(text).strip(), tuple(uses), usage, model.name, placeholder)
