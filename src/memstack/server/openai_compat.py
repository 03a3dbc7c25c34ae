"""``POST /v1/chat/completions``: OpenAI's chat completions API, with memory added transparently.

Point any OpenAI client at the server (``base_url=http://127.0.0.1:8700/v1``, ``api_key=`` a memstack key) and every
call becomes a memstack turn: the user's long-term memories, past-session summaries and the session's facts are put
in the context, and what the user says is captured.

How the request maps onto a turn:

* ``user`` names the user (required: memory is per user).
* The last message is the turn's message (``role: user``; text, or text parts).
* ``system`` / ``developer`` messages become the agent's identity (layer 1; memstack's own protections stay as hard
  constraints below it); a stored agent named with ``agent`` (in ``extra_body``) takes precedence.
* The conversation is a memstack session: ``session_id`` in ``extra_body``, or, by default, the session the
  client's earlier messages lead to (:mod:`memstack.server.threads`): a new conversation gets a new session, a
  continued one its own, an edited or regenerated message a branch that replaces the old reply, and a history
  memstack never saw is imported first. memstack keeps the conversation itself (summaries, facts, recent messages),
  so earlier messages are not re-sent to the model verbatim.
* ``temperature`` and ``max_tokens`` / ``max_completion_tokens`` pass to the model; ``metadata`` (session fields:
  ``timezone``…), ``memory`` and ``temporary`` may come in ``extra_body``. A field that would change the answer and
  that memstack cannot honour (``tools``, ``response_format`` other than text, ``n`` above 1, ``logprobs``,
  ``top_p`` other than 1, penalties other than 0, ``stop``, ``logit_bias``, audio) is a 400 naming it; neutral
  values of those and fields that do not change the answer (``seed``, ``stream_options``, ``store``…) are accepted.

The answer is a ``chat.completion`` (or ``chat.completion.chunk`` events then ``[DONE]`` when streaming) with
``usage`` (in the last chunk when streaming: as the model reported it, else memstack's count) and an extra
``memstack`` object carrying ``session_id``, ``context_id`` and ``memory_updates``. An ``Idempotency-Key`` header makes
a retry safe (:mod:`memstack.server.idempotency`), except for a temporary turn. Without one, a copy of a call still in
flight (the OpenAI SDK retries a call that timed out, with no key) waits for that call's answer instead of adding a
turn, and calls from one history take turns, so that only one of them continues its session and the others branch
as a regenerated reply does (:mod:`memstack.server.single_flight`), in every process sharing the store.
``GET /v1/models`` lists what ``model`` may name (the value only picks the reply's label: the agent chooses the
model).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response, StreamingResponse

from memstack.errors import InputError, MemstackError
from memstack.server.agents import resolve_agent
from memstack.server.chat import chat_json
from memstack.server.errors import status_for
from memstack.server.idempotency import IdempotencyKey, idempotent
from memstack.server.schemas import ErrorOut
from memstack.server.single_flight import flight_key, single_flight
from memstack.server.state import CallerDep, ServerState, StateDep
from memstack.server.threads import Said, continue_thread, history_digest, mark_turn
from memstack.server.wire import SSE_EVENT, json_response
from memstack.store.fence import Fence, fenced
from memstack.types import ChatDone, ChatEvent, ChatResult, ChatToken, UserRef, new_id

__all__ = ["router"]

_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (400, 401, 404, 409, 413)}

router = APIRouter(tags=["openai"], responses=_ERRORS)


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str = Field(max_length=50)
    content: str | list[dict[str, Any]] | None = None


class CompletionIn(BaseModel):
    """The fields of OpenAI's request that memstack uses; any other field is accepted and ignored."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(default="memstack", max_length=200)
    messages: list[_Message] = Field(min_length=1, max_length=10_000)
    user: str | None = Field(default=None, max_length=200, description="The user whose memory is used (required)")
    stream: bool = False
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    session_id: str | None = Field(default=None, min_length=1, max_length=200)
    agent: str | None = Field(default=None, min_length=1, max_length=200)
    metadata: dict[str, Any] | None = None
    memory: bool = True
    temporary: bool = False


class _ChoiceMessage(BaseModel):
    role: str
    content: str


class _Choice(BaseModel):
    index: int
    message: _ChoiceMessage
    finish_reason: str


class _Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class CompletionOut(BaseModel):
    id: str
    object: str
    created: int
    model: str
    choices: list[_Choice]
    usage: _Usage | None = Field(description="As the model reported it, else memstack's count of context and reply")
    memstack: dict[str, Any] = Field(description="session_id, context_id, memory_updates, … (as POST /v1/chat)")


def _text(message: _Message) -> str:
    content = message.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = [str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(p for p in parts if p)


#: Fields whose value changes the answer, with the values that change nothing (accepted).
_NEUTRAL: dict[str, tuple[Any, ...]] = {
    "tools": (None, []),
    "tool_choice": (None, "none", "auto"),
    "functions": (None, []),
    "function_call": (None, "none", "auto"),
    "response_format": (None, {"type": "text"}),
    "n": (None, 1),
    "logprobs": (None, False),
    "top_logprobs": (None, 0),
    "top_p": (None, 1, 1.0),
    "presence_penalty": (None, 0, 0.0),
    "frequency_penalty": (None, 0, 0.0),
    "stop": (None, [], ""),
    "logit_bias": (None, {}),
    "audio": (None,),
    "modalities": (None, ["text"]),
    "prediction": (None,),
}


def _refuse_unsupported(body: CompletionIn) -> None:
    """``InputError`` naming every field of the request that would change the answer and cannot be honoured."""
    extra = body.model_extra or {}
    refused = [name for name, neutral in _NEUTRAL.items() if name in extra and extra[name] not in neutral]
    if refused:
        raise InputError(
            f"memstack cannot honour {', '.join(refused)} on /v1/chat/completions (the agent's model answers with "
            "text only, one choice); leave these fields out, or use POST /v1/chat for memstack's own options"
        )


def _turn_inputs(body: CompletionIn) -> tuple[str, str | None, list[Said]]:
    """(message, system text, the user and assistant messages before it) from the request; ``InputError`` saying
    what to send otherwise."""
    _refuse_unsupported(body)
    if not body.user:
        raise InputError(
            "set the request's user field to name the user whose memory to use "
            '(openai client: client.chat.completions.create(..., user="alice"))'
        )
    last = body.messages[-1]
    if last.role != "user":
        raise InputError(f"the last message must be the user's (role 'user'), got role {last.role!r}")
    message = _text(last)
    if not message.strip():
        raise InputError("the last user message has no text; send the user's message as text")
    system = "\n\n".join(_text(m) for m in body.messages if m.role in ("system", "developer") and _text(m).strip())
    earlier = [(m.role, _text(m)) for m in body.messages[:-1] if m.role in ("user", "assistant")]
    return message, system or None, earlier


async def _agent(st: ServerState, tenant: str, body: CompletionIn, system: str | None) -> Any:
    from memstack.context import agent_from_request, default_agent

    if body.agent is not None:
        return await resolve_agent(st, tenant, body.agent)
    if system is None and body.temperature is None and body.max_tokens is None and body.max_completion_tokens is None:
        return None
    base = default_agent()
    data: dict[str, Any] = {"name": "openai-client"}
    if system is not None:
        data["core"] = {
            "identity": system,
            "instructions": list(base.core.instructions),
            "hard_constraints": list(base.core.hard_constraints),
        }
    model: dict[str, Any] = {}
    if body.temperature is not None:
        model["temperature"] = body.temperature
    if (limit := body.max_completion_tokens or body.max_tokens) is not None:
        model["max_output_tokens"] = limit
    if model:
        data["model"] = model
    agent, _ = agent_from_request(data)
    return agent


def _usage(result: ChatResult) -> dict[str, int] | None:
    if result.usage is None:
        return None
    u = result.usage
    return {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens, "total_tokens": u.total_tokens}


def _completion(result: ChatResult, model: str, completion_id: str, created: int) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": result.model or model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": result.reply}, "finish_reason": "stop"}],
        "usage": _usage(result),
        "memstack": chat_json(result),
    }


def _chunk(completion_id: str, created: int, model: str, delta: dict[str, Any], finish: str | None) -> bytes:
    data = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


class _ModelOut(BaseModel):
    id: str
    object: str = "model"
    created: int = 0
    owned_by: str = "memstack"


class ModelList(BaseModel):
    object: str = "list"
    data: list[_ModelOut]


@router.get("/v1/models", response_model=ModelList, summary="What `model` may name (OpenAI's model list)")
async def list_models(st: StateDep, caller: CallerDep) -> ModelList:
    """``memstack`` and the server's chat model: the value of ``model`` labels the reply; the agent (the request's
    system messages, or a stored agent named with ``agent``) decides which model answers."""
    names = dict.fromkeys(["memstack", st.engine.config.chat_model or "offline"])
    return ModelList(data=[_ModelOut(id=name) for name in names])


_STREAM_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "A chat.completion; with stream=true, chat.completion.chunk server-sent events then [DONE]",
        "content": {"text/event-stream": {"schema": SSE_EVENT}},
    }
}


@router.post(
    "/v1/chat/completions",
    response_model=CompletionOut,
    responses=_STREAM_DOC,
    summary="OpenAI-compatible chat completions with memory (point an OpenAI client at /v1)",
)
async def chat_completions(
    request: Request, st: StateDep, caller: CallerDep, body: CompletionIn, key: IdempotencyKey = None
) -> Response:
    message, system, earlier = _turn_inputs(body)
    user = caller.user(body.user or "")  # _turn_inputs refused a missing user
    if len(message) > st.settings.max_message_chars:
        raise InputError(
            f"the message is {len(message)} characters; this server accepts at most {st.settings.max_message_chars}"
        )
    agent = await _agent(st, caller.tenant, body, system)

    # Pinned as the call arrives, before it waits for its turn: a call that waited while the user was erased writes
    # nothing (see _complete).
    fence = None if body.temporary else await st.engine.users.fence(user)

    async def work() -> Response:
        with fenced(fence):
            return await _complete(st, user, body, message, system, earlier, agent, fence)

    async def in_turn() -> Response:
        # Calls from one history take turns (copies of one call are one turn); a call that starts a conversation or
        # names its session shares no state with others, so only its own copies wait for it.
        follows = body.session_id is None and earlier
        flight = flight_key(user, history_digest(system, earlier)) if follows else None
        return await single_flight(request, st, user, flight, work)

    if body.temporary:  # nothing about a temporary turn may be stored, not even its answer for a copy
        return await work()
    return await idempotent(request, st, user, key, in_turn)


async def _complete(
    st: ServerState,
    user: UserRef,
    body: CompletionIn,
    message: str,
    system: str | None,
    earlier: list[Said],
    agent: Any,
    fence: Fence | None,
) -> Response:
    """The turn itself: the session the conversation continues (its history imported first when memstack never
    saw it), then the answer, as one completion or as chunks. All of it is one piece of work under one erasure fence
    (:mod:`memstack.store.fence`), pinned when the call arrived and held by the caller: an erasure of the user
    meanwhile leaves none of it, the conversation's mark included."""
    follow = body.session_id is None and not body.temporary
    if follow:
        thread = await continue_thread(st.engine, user, system, earlier)
        session_id = thread.session_id
        if thread.imports:
            said = [{"role": role, "content": text} for role, text in thread.imports]
            await st.engine.ingest(user, session_id, said, capture=thread.capture, end=False)
    else:
        session_id = body.session_id or new_id("ses")

    async def done(result: ChatResult) -> None:
        if follow:
            with fenced(fence):  # also when a stream's last event calls it, outside the request's context
                await mark_turn(
                    st.engine, user, system, earlier, ("user", message), result.reply, session_id, result.turn
                )

    options: dict[str, Any] = {
        "session_id": session_id,
        "metadata": body.metadata,
        "agent": agent,
        "memory": body.memory,
        "temporary": body.temporary,
    }
    completion_id = new_id("chatcmpl")
    created = int(time.time())
    if not body.stream:
        result = await st.engine.chat(user, message, **options)
        await done(result)
        return json_response(_completion(result, body.model, completion_id, created))
    events = st.engine.chat_stream(user, message, **options)
    first = await anext(aiter(events))  # errors before the first event are ordinary JSON errors
    return StreamingResponse(
        _stream(first, events, body.model, completion_id, created, done),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache"},
    )


async def _stream(
    first: ChatEvent,
    events: AsyncIterator[ChatEvent],
    model: str,
    completion_id: str,
    created: int,
    done: Callable[[ChatResult], Awaitable[None]],
) -> AsyncIterator[bytes]:
    async with aclosing(events):  # type: ignore[type-var]  # closing early releases the session
        yield _chunk(completion_id, created, model, {"role": "assistant", "content": ""}, None)
        event: ChatEvent | None = first
        try:
            while event is not None:
                if isinstance(event, ChatToken) and event.text:
                    yield _chunk(completion_id, created, model, {"content": event.text}, None)
                elif isinstance(event, ChatDone):
                    await done(event.result)
                    last = json.loads(_chunk(completion_id, created, model, {}, "stop")[6:])
                    last["usage"] = _usage(event.result)
                    last["memstack"] = chat_json(event.result)
                    yield f"data: {json.dumps(last, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()
                event = await anext(events, None)
        except MemstackError as exc:
            error = {"error": {"type": type(exc).__name__, "message": str(exc), "code": status_for(exc)}}
            yield f"data: {json.dumps(error)}\n\n".encode()
        yield b"data: [DONE]\n\n"
