"""``POST /v1/chat``: one turn with memory, answered as JSON or as server-sent events; ``POST /v1/delegate``: a
parent agent hands a stored agent a task on behalf of a user (``AsyncMemstack.delegate``), answered as JSON.

Streaming (``"stream": true``) answers ``text/event-stream``::

    event: token    data: {"text": "Hel"}                       (as the model writes)
    event: tool     data: {"name", "arguments", "result", "error"}  (when the model used a memory tool)
    event: done     data: {"session_id", "reply", "memory_updates", "context_id", "upgrade_prompt", …}
    event: error    data: {"error": {"type", "message"}}           (instead of done, if the turn failed midway)

Anything wrong with the request is found before the first event and answered as an ordinary JSON error. Both
routes honour an ``Idempotency-Key`` (:mod:`memstack.server.idempotency`; a stream is kept whole and replayed), except
for a temporary turn, which is never kept.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response, StreamingResponse

from memstack.errors import InputError, MemstackError
from memstack.server.agents import resolve_agent
from memstack.server.errors import status_for
from memstack.server.idempotency import IdempotencyKey, idempotent
from memstack.server.schemas import ChatIn, ChatOut, DelegateIn, ErrorOut
from memstack.server.state import CallerDep, StateDep
from memstack.server.wire import SSE_EVENT, json_response
from memstack.types import ChatDone, ChatEvent, ChatResult, ChatToken, ChatToolEvent

__all__ = ["chat_json", "router", "sse"]

_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (400, 401, 404, 409, 413)}

router = APIRouter(tags=["chat"], responses=_ERRORS)

_STREAM_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The turn's result; with stream=true, server-sent events (token, tool, then done or error)",
        "content": {"text/event-stream": {"schema": SSE_EVENT}},
    }
}


def chat_json(result: ChatResult) -> dict[str, Any]:
    """The wire form of a turn (schemas.ChatOut)."""
    return {
        "session_id": result.session_id,
        "reply": result.reply,
        "memory_updates": [u.to_dict() for u in result.memory_updates],
        "context_id": result.context_id,
        "upgrade_prompt": result.upgrade_prompt,
        "turn": result.turn,
        "memory_pending": result.memory_pending,
        "memories_used": list(result.memories_used),
        "model": result.model,
        "offline": result.offline,
        "usage": result.usage.to_dict() if result.usage is not None else None,
    }


def sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


def _error_data(exc: MemstackError) -> dict[str, Any]:
    return {"error": {"type": type(exc).__name__, "message": str(exc), "status": status_for(exc)}}


@router.post("/v1/chat", response_model=ChatOut, responses=_STREAM_DOC, summary="One chat turn with memory")
async def chat(request: Request, st: StateDep, caller: CallerDep, body: ChatIn, key: IdempotencyKey = None) -> Response:
    user = caller.user(body.user_id)  # InputError for an unusable id, before any work
    if len(body.message) > st.settings.max_message_chars:
        raise InputError(
            f"the message is {len(body.message)} characters; this server accepts at most "
            f"{st.settings.max_message_chars}. Send documents to a tool, not as one chat message"
        )
    options: dict[str, Any] = {
        "session_id": body.session_id,
        "new_session": body.new_session,
        "metadata": body.metadata,
        "agent": await resolve_agent(st, caller.tenant, body.agent),
        "memory": body.memory,
        "temporary": body.temporary,
    }

    async def work() -> Response:
        if not body.stream:
            return json_response(chat_json(await st.engine.chat(user, body.message, **options)))
        events = st.engine.chat_stream(user, body.message, **options)
        first = await anext(aiter(events))  # errors before the first event are ordinary JSON errors
        return StreamingResponse(
            _stream(first, events), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
        )

    return await idempotent(request, st, user, key, work, keep=not body.temporary)  # a temporary turn: not kept


@router.post(
    "/v1/delegate",
    response_model=ChatOut,
    summary="Hand an agent a task from a parent agent, for a user (the task is data, never the agent's rules)",
)
async def delegate(
    request: Request, st: StateDep, caller: CallerDep, body: DelegateIn, key: IdempotencyKey = None
) -> Response:
    user = caller.user(body.user_id)
    child = await resolve_agent(st, caller.tenant, body.child)
    task: dict[str, Any] | str = body.task if isinstance(body.task, str) else body.task.model_dump(exclude_none=True)

    async def work() -> Response:
        result = await st.engine.delegate(
            body.parent,
            child,
            task,
            user_id=user,
            session_id=body.session_id,
            metadata=body.metadata,
            memory=body.memory,
            temporary=body.temporary,
        )
        return json_response(chat_json(result))

    return await idempotent(request, st, user, key, work, keep=not body.temporary)


async def _stream(first: ChatEvent, events: AsyncIterator[ChatEvent]) -> AsyncIterator[bytes]:
    async with aclosing(events):  # type: ignore[type-var]  # closing early releases the session
        event: ChatEvent | None = first
        try:
            while event is not None:
                if isinstance(event, ChatToken):
                    yield sse("token", {"text": event.text})
                elif isinstance(event, ChatToolEvent):
                    use = event.use
                    yield sse(
                        "tool",
                        {"name": use.name, "arguments": dict(use.arguments), "result": use.result, "error": use.error},
                    )
                elif isinstance(event, ChatDone):
                    yield sse("done", chat_json(event.result))
                event = await anext(events, None)
        except MemstackError as exc:
            yield sse("error", _error_data(exc))
