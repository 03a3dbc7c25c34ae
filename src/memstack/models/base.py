"""The chat-model role: the wire protocol every implementation speaks, and JSON replies on top of it.

An implementation (the OpenAI-compatible client, an offline responder, a test fake) provides ``complete`` and
``stream``; ``complete_json`` is usually the one-liner ``return await request_json(self, messages, ...)``.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, runtime_checkable

from memstack.errors import MalformedResponse
from memstack.models.messages import ChatChunk, ChatResponse, Message, MessageLike, ToolSpec, as_messages

__all__ = ["JSON_OBJECT", "ChatModel", "ToolChoice", "parse_json_object", "request_json"]

#: ``"auto"``, ``"none"``, ``"required"`` or the name of the one tool the model must call.
ToolChoice: TypeAlias = str

#: The ``response_format`` asking for a JSON object.
JSON_OBJECT: Mapping[str, Any] = {"type": "json_object"}

_JSON_INSTRUCTION = "Reply with one JSON object and nothing else."
_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)\n?[ \t]*```", re.DOTALL)


@runtime_checkable
class ChatModel(Protocol):
    """A chat model behind some endpoint. ``name`` is the model string it was built from (``openai:gpt-4o-mini``).

    ``timeout`` is in seconds: the deadline of the whole call for ``complete``, the longest wait for each chunk
    for ``stream``. Failures raise ``ProviderError`` (``status`` and ``body`` set for HTTP errors),
    ``ProviderTimeout`` or ``MalformedResponse``; nothing is retried here (see ``memstack.models.with_retry``).
    """

    @property
    def name(self) -> str: ...

    async def complete(
        self,
        messages: Sequence[MessageLike],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: ToolChoice | None = None,
        response_format: Mapping[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> ChatResponse: ...

    def stream(
        self,
        messages: Sequence[MessageLike],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: ToolChoice | None = None,
        response_format: Mapping[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[ChatChunk]: ...

    async def complete_json(
        self,
        messages: Sequence[MessageLike],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """The reply parsed as a JSON object; ``MalformedResponse`` (``body`` = the raw text) otherwise."""
        ...

    async def aclose(self) -> None: ...


def parse_json_object(text: str) -> dict[str, Any]:
    """Parse a model's reply as one JSON object, tolerating a surrounding Markdown code fence.

    Raises ``MalformedResponse`` with the raw text as ``body`` when it is not a JSON object.
    """
    candidate = text.strip()
    if not candidate.startswith("{") and (fence := _FENCE.search(candidate)):
        candidate = fence.group(1).strip()
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise MalformedResponse(
            f"the model's reply is not valid JSON ({exc.msg} at character {exc.pos}); "
            "retry, or use a model that follows JSON instructions",
            body=text,
        ) from None
    if not isinstance(value, dict):
        raise MalformedResponse(
            f"the model replied with a JSON {type(value).__name__} where a JSON object was asked for; "
            "retry, or use a model that follows JSON instructions",
            body=text,
        )
    return value


def _with_json_instruction(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """JSON mode requires the word "JSON" in the conversation; add a one-line instruction when it is absent."""
    if any("json" in (m.content or "").lower() for m in messages):
        return messages
    first = messages[0]
    if first.role == "system":
        return (Message.system(f"{first.content}\n\n{_JSON_INSTRUCTION}"), *messages[1:])
    return (Message.system(_JSON_INSTRUCTION), *messages)


async def request_json(
    model: ChatModel,
    messages: Sequence[MessageLike],
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """Ask ``model`` for a JSON object (``response_format`` json_object) and parse the reply.

    Endpoints without JSON mode get the same request without ``response_format`` (their provider row says so);
    the prompt must then ask for JSON itself, which it does when it mentions JSON or gets the added instruction.
    """
    prepared = _with_json_instruction(as_messages(messages))
    response = await model.complete(
        prepared,
        response_format=JSON_OBJECT,
        temperature=temperature,
        max_tokens=max_tokens,
        timeout=timeout,
    )
    return parse_json_object(response.text)
