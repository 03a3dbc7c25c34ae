"""HTTP/1.1 plumbing (h11 over asyncio streams) and OpenAI response bodies for the scripted server.

Plain functions of plain values; the scripting logic lives in :mod:`memstack_testing.openai_server`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

import h11
import numpy as np

from memstack_testing.hashing import HashingEmbedder

__all__ = [
    "Exchange",
    "completion_body",
    "embeddings_body",
    "error_body",
    "model_row",
    "read_request",
    "stream_events",
]

_WORDS = re.compile(r"\s*\S+\s*|\s+")


def error_body(status: int, message: str) -> str:
    """An OpenAI error object."""
    kind = "server_error" if status >= 500 else "rate_limit_error" if status == 429 else "invalid_request_error"
    return json.dumps({"error": {"message": message, "type": kind, "code": status}})


class Exchange:
    """Writes one HTTP response on an h11 connection; every method returns whether to keep the connection."""

    def __init__(self, conn: h11.Connection, writer: asyncio.StreamWriter) -> None:
        self.conn = conn
        self.writer = writer

    async def _write(self, event: h11.Event) -> None:
        data = self.conn.send(event)
        if data:
            self.writer.write(data)
            await self.writer.drain()

    async def send(self, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> bool:
        head = {"content-type": "application/json", "content-length": str(len(body)), **(headers or {})}
        await self._write(h11.Response(status_code=status, headers=list(head.items())))
        await self._write(h11.Data(data=body))
        await self._write(h11.EndOfMessage())
        return True

    async def json(self, status: int, value: Any, headers: Mapping[str, str] | None = None) -> bool:
        return await self.send(status, json.dumps(value).encode(), headers)

    async def error(self, status: int, message: str) -> bool:
        return await self.send(status, error_body(status, message).encode())

    async def start_stream(self, headers: Mapping[str, str]) -> None:
        head = {"content-type": "text/event-stream", "cache-control": "no-cache", **headers}
        await self._write(h11.Response(status_code=200, headers=list(head.items())))

    async def event(self, data: str) -> None:
        await self._write(h11.Data(data=f"data: {data}\n\n".encode()))

    async def end(self) -> bool:
        await self._write(h11.EndOfMessage())
        return True

    def drop(self) -> bool:
        self.writer.transport.abort()
        return False


async def read_request(conn: h11.Connection, reader: asyncio.StreamReader) -> tuple[h11.Request, bytes] | None:
    """The next request and its body, or None when the client closed the connection."""
    request: h11.Request | None = None
    body = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await reader.read(65536))
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage) and request is not None:
            return request, bytes(body)
        else:  # ConnectionClosed or PAUSED
            return None


def model_row(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "scripted"}


def _envelope(completion_id: str, model: str | None, kind: str) -> dict[str, Any]:
    return {"id": completion_id, "object": kind, "created": int(time.time()), "model": model}


def completion_body(
    completion_id: str,
    model: str | None,
    content: str | None,
    tool_calls: Sequence[Mapping[str, Any]],
    finish: str | None,
    usage: Mapping[str, int],
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
    return {**_envelope(completion_id, model, "chat.completion"), "choices": [choice], "usage": dict(usage)}


def stream_events(
    completion_id: str,
    model: str | None,
    content: str | None,
    tool_calls: Sequence[Mapping[str, Any]],
    finish: str | None,
    usage: Mapping[str, int] | None,
) -> list[dict[str, Any]]:
    """The SSE payloads of a streamed reply: role, text word by word, tool calls in fragments, finish, usage."""
    head = _envelope(completion_id, model, "chat.completion.chunk")

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in _WORDS.findall(content or "")]
    for index, call in enumerate(tool_calls):
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        opening = {"index": index, "id": call["id"], "type": "function", "function": {"name": name, "arguments": ""}}
        events.append(chunk({"tool_calls": [opening]}))
        for start in range(0, len(arguments), 8):
            events.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[start : start + 8]}}]})
            )
    events.append(chunk({}, finish))
    if usage is not None:
        events.append({**head, "choices": [], "usage": dict(usage)})
    return events


def embeddings_body(model: str | None, texts: Sequence[str], dim: int, as_base64: bool) -> dict[str, Any]:
    """Deterministic word-hashing vectors scaled off unit length (clients must normalise)."""
    vectors = HashingEmbedder(dim).embed_sync(texts) * np.float32(2.5)
    data = [
        {
            "object": "embedding",
            "index": i,
            "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode() if as_base64 else v.tolist(),
        }
        for i, v in enumerate(vectors)
    ]
    tokens = sum(len(t.split()) for t in texts)
    return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
