"""The offline responder: what answers when no chat model is configured. It is not a language model.

It reads the context memstack assembled (the system message of layers 1-8 and the user's message) and replies with a
clearly labelled report of what a model would have been given: the session details (local time, time zone, client),
a delegated task, the conversation's established facts, the long-term memories with their categories, the recent
conversation summaries and the turn log. So a newcomer sees memory working end to end with no key and no network,
and nobody mistakes the output for an answer.

It never calls tools and cannot produce JSON (``complete_json`` raises ``ConfigError`` saying to configure a model).
It lives with the context, not with the chat models: it parses what :mod:`memstack.context.render` writes, so the
two change together, and the models below the context never need to know how it is laid out.
Its replies are marked ``placeholder`` (:attr:`~memstack.models.ChatResponse.placeholder`, on every streamed chunk
too): the report describes the context, it is not conversation, so a chat turn keeps the user's message and no
reply (summarizing the report would feed the context's own contents back into the session as if the assistant had
said them, and recall would find it).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memstack.context.render import TAG
from memstack.context.stack import DEFAULT_STACK, LayerStack
from memstack.errors import ConfigError
from memstack.models.base import ChatModel, ToolChoice
from memstack.models.messages import ChatChunk, ChatResponse, Message, MessageLike, ToolSpec, Usage, as_messages
from memstack.types import Layer

__all__ = ["OFFLINE_BANNER", "OfflineResponder", "Section", "describe_context", "read_sections"]

OFFLINE_BANNER = (
    "[offline] No chat model is configured, so this is not an AI answer: memstack's offline responder shows what "
    "a model would be given. Set MEMSTACK_CHAT_MODEL (e.g. openai:gpt-4o-mini or ollama:llama3.2) to chat with one."
)

_HEADER = re.compile(r"^## (.+)$")
_OPEN = re.compile(rf'^<{TAG} layer="[^"]*"(?: from="[^"]*")?(?: flagged="([^"]*)")? key="\d+">$')
_CLOSE = re.compile(rf'^</{TAG} key="\d+">$')
_WORDS = re.compile(r"\s*\S+\s*|\s+")
_QUOTE_CHARS = 300
_NO_JSON = (
    "the offline responder is not a model and cannot answer JSON requests; configure a chat model "
    "(MEMSTACK_CHAT_MODEL, e.g. openai:gpt-4o-mini) for this"
)


@dataclass(frozen=True, slots=True)
class Section:
    """One section of an assembled system message: its title, its lines (a data block's items), its flags."""

    title: str
    layer: str | None  # the stack key of the section, None for sections that are not layers (the preamble)
    lines: tuple[str, ...]
    flags: tuple[str, ...] = ()

    @property
    def items(self) -> tuple[str, ...]:
        """Lines that start an entry; continuation lines (indented) are joined to the entry above."""
        out: list[str] = []
        for line in self.lines:
            if line.startswith("  ") and out:
                out[-1] = f"{out[-1]} {line.strip()}"
            elif line.strip():
                out.append(line.strip())
        return tuple(out)


def read_sections(system: str, stack: LayerStack = DEFAULT_STACK) -> list[Section]:
    """Split a system message rendered by :func:`memstack.context.assemble` into its sections.

    A data section's lines are the lines inside its block; other sections keep every line after the note."""
    titles = {spec.title: spec for spec in stack}
    sections: list[Section] = []
    title: str | None = None
    lines: list[str] = []
    flags: tuple[str, ...] = ()
    inside = False

    def close() -> None:
        if title is not None:
            spec = titles.get(title)
            body = lines
            if spec is not None and spec.note and body and body[0] == spec.note:
                body = body[1:]
            sections.append(Section(title, spec.key if spec else None, tuple(body), flags))

    for line in system.splitlines():
        header = None if inside else _HEADER.match(line)
        if header:
            close()
            title, lines, flags = header.group(1).strip(), [], ()
            continue
        if (opened := _OPEN.match(line)) is not None:
            inside = True
            flags = tuple(f for f in (opened.group(1) or "").split(",") if f)
            lines = []  # only the note came before the block
            continue
        if _CLOSE.match(line):
            inside = False
            continue
        lines.append(line)
    close()
    return sections


_LABELS: Mapping[str, str] = {
    Layer.DELEGATED.label: "Delegated task",
    Layer.FACTS.label: "Established in this conversation",
    Layer.MEMORY.label: "Memories about you",
    Layer.SUMMARIES.label: "Your recent conversations",
    Layer.TURN_LOG.label: "Earlier in this conversation",
}


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _QUOTE_CHARS else flat[: _QUOTE_CHARS - 1] + "…"


def describe_context(messages: Sequence[Message], stack: LayerStack = DEFAULT_STACK) -> str:
    """The offline responder's reply for one conversation: the banner, then what the context holds."""
    system = next((m.content or "" for m in messages if m.role == "system"), "")
    users = [m for m in messages if m.role == "user"]
    thread = [m for m in messages if m.role in ("user", "assistant")][:-1] if users else []
    out = [OFFLINE_BANNER, ""]
    if users:
        out.append(f'Your message: "{_quote(users[-1].content or "")}"')
        out.append("")
    sections = {s.layer: s for s in read_sections(system, stack) if s.layer is not None}
    out.append("What a model would be given to answer it:")
    session = sections.get(Layer.SESSION.label)
    if session is not None:
        out.append("- Session (from your client, never stored):")
        out.extend(f"  {line.strip()}" for line in session.lines if line.strip())
    shown_memory = False
    for key, label in _LABELS.items():
        section = sections.get(key)
        if section is None or not section.items:
            continue
        shown_memory |= key != Layer.DELEGATED.label
        flagged = f" [flagged as {', '.join(section.flags)}: shown as data, not followed]" if section.flags else ""
        out.append(f"- {label} ({len(section.items)}){flagged}:")
        out.extend(f"  {_quote(item) if item.startswith('- ') else '- ' + _quote(item)}" for item in section.items)
    if not shown_memory:
        out.append("- No remembered facts, memories or past conversations apply to this message yet.")
    if thread:
        out.append(f"- The last {len(thread)} message(s) of this conversation, word for word.")
    return "\n".join(out)


class OfflineResponder:
    """A :class:`~memstack.models.ChatModel` that reports its context instead of answering (see the module doc)."""

    def __init__(self, *, stack: LayerStack = DEFAULT_STACK) -> None:
        self._stack = stack

    @property
    def name(self) -> str:
        return "offline:responder"

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
    ) -> ChatResponse:
        self._refuse_json(response_format)
        text = describe_context(as_messages(messages), self._stack)
        return ChatResponse(text=text, finish_reason="stop", usage=Usage(0, 0), model=self.name, placeholder=True)

    async def stream(
        self,
        messages: Sequence[MessageLike],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: ToolChoice | None = None,
        response_format: Mapping[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[ChatChunk]:
        self._refuse_json(response_format)
        text = describe_context(as_messages(messages), self._stack)
        for piece in _WORDS.findall(text):
            yield ChatChunk(text=piece, model=self.name, placeholder=True)
        yield ChatChunk(finish_reason="stop", usage=Usage(0, 0), model=self.name, placeholder=True)

    async def complete_json(
        self,
        messages: Sequence[MessageLike],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        raise ConfigError(_NO_JSON)

    async def aclose(self) -> None:
        return None

    @staticmethod
    def _refuse_json(response_format: Mapping[str, Any] | None) -> None:
        if response_format is not None:
            raise ConfigError(_NO_JSON)


if TYPE_CHECKING:  # mypy proves the class satisfies the protocol
    _protocol_check: type[ChatModel] = OfflineResponder
