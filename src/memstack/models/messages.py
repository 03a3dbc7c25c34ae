"""The values a chat model takes and returns: messages, tool specs, tool calls, responses, stream chunks.

All are frozen dataclasses that convert to and from the OpenAI chat wire format (``to_openai`` /
``from_openai``), which every supported endpoint speaks.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from memstack.errors import InputError, MalformedResponse

__all__ = [
    "ChatChunk",
    "ChatResponse",
    "Message",
    "MessageLike",
    "Role",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "as_messages",
    "collect",
]

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
_ROLES = ("system", "user", "assistant", "tool")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A function call the model asked for, with its arguments parsed into a JSON object."""

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, id: str, name: str, raw_arguments: str | None) -> ToolCall:
        """Build from the wire form; arguments that are not a JSON object raise ``MalformedResponse``."""
        text = (raw_arguments or "").strip() or "{}"
        try:
            arguments = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MalformedResponse(
                f"the model called tool {name!r} with arguments that are not valid JSON ({exc.msg}); "
                "retry the call or use a model with reliable tool calling",
                body=raw_arguments,
            ) from None
        if not isinstance(arguments, dict):
            raise MalformedResponse(
                f"the model called tool {name!r} with a JSON {type(arguments).__name__}, not an object; "
                "retry the call or use a model with reliable tool calling",
                body=raw_arguments,
            )
        return cls(id=id, name=name, arguments=arguments)

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(dict(self.arguments), ensure_ascii=False)},
        }


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A function the model may call: ``parameters`` is a JSON Schema of an object."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool = False

    def __post_init__(self) -> None:
        if not _TOOL_NAME.match(self.name):
            raise InputError(f"tool name {self.name!r} must be 1-64 letters, digits, '_' or '-'")
        if self.parameters.get("type") != "object":
            raise InputError(f'tool {self.name!r}: parameters must be a JSON Schema with "type": "object"')

    def to_openai(self) -> dict[str, Any]:
        function: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": dict(self.parameters),
        }
        if self.strict:
            function["strict"] = True
        return {"type": "function", "function": function}


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message. ``tool_calls`` only on assistant messages; ``tool_call_id`` only (and always) on tool ones."""

    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise InputError(f"unknown message role {self.role!r}; use one of {', '.join(_ROLES)}")
        if self.tool_calls and self.role != "assistant":
            raise InputError("only assistant messages carry tool_calls")
        if (self.role == "tool") != (self.tool_call_id is not None):
            raise InputError("a tool message needs the tool_call_id it answers, and only tool messages have one")
        if self.content is None and not self.tool_calls:
            raise InputError(f"a {self.role} message needs content (only an assistant calling tools may omit it)")

    @classmethod
    def system(cls, content: str) -> Message:
        return cls("system", content)

    @classmethod
    def user(cls, content: str, *, name: str | None = None) -> Message:
        return cls("user", content, name=name)

    @classmethod
    def assistant(cls, content: str | None = None, *, tool_calls: Iterable[ToolCall] = ()) -> Message:
        return cls("assistant", content, tool_calls=tuple(tool_calls))

    @classmethod
    def tool(cls, tool_call_id: str, content: str | Mapping[str, Any] | Sequence[Any]) -> Message:
        """The result of a tool call; a non-string result is sent as JSON."""
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
        return cls("tool", text, tool_call_id=tool_call_id)

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out

    @classmethod
    def from_openai(cls, data: Mapping[str, Any]) -> Message:
        """Parse one message of an OpenAI request body; text parts of a content list are joined."""
        role = data.get("role")
        if role == "developer":  # OpenAI's newer name for system instructions
            role = "system"
        if role not in _ROLES:
            raise InputError(f"unknown message role {role!r}; use one of {', '.join(_ROLES)}")
        content = data.get("content")
        if isinstance(content, list):
            parts = [p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
            content = "\n".join(parts)
        if content is not None and not isinstance(content, str):
            raise InputError(f"message content must be a string or a list of text parts, got {type(content).__name__}")
        try:
            calls = tuple(
                ToolCall.parse(str(c.get("id", "")), str(c["function"]["name"]), c["function"].get("arguments"))
                for c in data.get("tool_calls") or ()
                if isinstance(c, Mapping) and isinstance(c.get("function"), Mapping) and "name" in c["function"]
            )
        except MalformedResponse as exc:
            raise InputError(f"an assistant message in the request has a malformed tool call: {exc}") from None
        return cls(role, content, tool_calls=calls, tool_call_id=data.get("tool_call_id"), name=data.get("name"))


MessageLike: TypeAlias = Message | Mapping[str, Any]


def as_messages(messages: Iterable[MessageLike]) -> tuple[Message, ...]:
    """Accept ``Message`` values or OpenAI-style dicts; raise ``InputError`` for an empty conversation."""
    out = tuple(m if isinstance(m, Message) else Message.from_openai(m) for m in messages)
    if not out:
        raise InputError("a chat request needs at least one message")
    return out


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """A finished reply: text (may be empty when the model only calls tools), tool calls, why it stopped.

    ``placeholder``: the text stands in for an answer no model gave (the offline responder's report): it is shown
    to the caller but never archived as something the assistant said."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str = ""
    placeholder: bool = False

    @property
    def message(self) -> Message:
        """The assistant message to append to the conversation before sending tool results back."""
        return Message.assistant(self.text if self.text or not self.tool_calls else None, tool_calls=self.tool_calls)


@dataclass(frozen=True, slots=True)
class ChatChunk:
    """One piece of a streamed reply.

    Text arrives as deltas. Tool calls are assembled from their fragments and arrive complete, together with
    ``finish_reason`` and ``usage`` (when the endpoint reports it), in the last chunk of the stream.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str = ""
    placeholder: bool = False  # as ChatResponse.placeholder: set on every chunk of a stand-in reply


async def collect(chunks: AsyncIterator[ChatChunk]) -> ChatResponse:
    """Drain a stream into the ``ChatResponse`` that ``complete`` would have returned."""
    text: list[str] = []
    model = ""
    placeholder = False
    final = ChatChunk()
    async for chunk in chunks:
        text.append(chunk.text)
        model = chunk.model or model
        placeholder = placeholder or chunk.placeholder
        if chunk.finish_reason is not None:
            final = chunk
    return ChatResponse(
        text="".join(text),
        tool_calls=final.tool_calls,
        finish_reason=final.finish_reason,
        usage=final.usage,
        model=model,
        placeholder=placeholder,
    )
