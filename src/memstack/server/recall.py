"""``POST /v1/users/{user_id}/recall`` (memories and past conversations ranked together) and
``POST /v1/users/{user_id}/ingest`` (import a past conversation without a chat model): ``AsyncMemstack.recall`` and
``AsyncMemstack.ingest`` over HTTP, with the library's checks and errors, scoped to the caller's tenant.

An import runs in the request (archive, summaries, memory capture, embeddings, then the session's line): a few
hundred messages take seconds. Its size is bounded by the server's body limit (413), by the number of messages one
request may carry (``ServerSettings.max_ingest_messages``, 400: import a longer conversation in parts, into the same
session) and, per message, by the chat message limit (400), as a chat turn is. Everything is checked before anything
is written. An import is idempotent by itself (messages the session has archived are not imported again:
:mod:`memstack.recall.ingest`) and also honours an ``Idempotency-Key`` (:mod:`memstack.server.idempotency`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from memstack.errors import InputError
from memstack.server.idempotency import IdempotencyKey, idempotent
from memstack.server.schemas import ErrorOut, IngestIn, IngestOut, RecallIn, RecallOut
from memstack.server.state import CallerDep, StateDep
from memstack.server.wire import ingest_json, json_response

__all__ = ["router"]

_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (400, 401, 404, 409, 413, 503)}

router = APIRouter(prefix="/v1/users/{user_id}", tags=["recall"], responses=_ERRORS)

UserId = Annotated[str, Path(min_length=1, max_length=200, description="The user, within the caller's tenant")]


@router.post(
    "/recall",
    response_model=RecallOut,
    summary="The items best matching a query among the user's memories and past conversations, best first",
)
async def recall(st: StateDep, caller: CallerDep, user_id: UserId, body: RecallIn) -> Response:
    items = await st.engine.recall(
        caller.user(user_id),
        body.query,
        limit=body.limit,
        at=body.at,
        kinds=body.kinds,
        exclude_session=body.exclude_session,
        agent_id=body.agent_id,
        min_score=body.min_score,
        as_of=body.as_of,
    )
    return json_response({"results": [item.to_dict() for item in items]})


@router.post(
    "/ingest",
    response_model=IngestOut,
    summary="Import a past conversation into a session (archived, summarized, memories captured, searchable)",
)
async def ingest(
    request: Request, st: StateDep, caller: CallerDep, user_id: UserId, body: IngestIn, key: IdempotencyKey = None
) -> Response:
    user = caller.user(user_id)  # InputError for an unusable id, before any work
    most = st.settings.max_ingest_messages
    if len(body.messages) > most:
        raise InputError(
            f"{len(body.messages)} messages in one import; this server takes at most {most} per request. Import the "
            "conversation in parts into the same session (with end=false on all but the last)"
        )
    limit = st.settings.max_message_chars
    for i, message in enumerate(body.messages):
        if len(message.content) > limit:
            raise InputError(
                f"message {i} is {len(message.content)} characters; this server accepts at most {limit} per message"
            )
    messages = [m.model_dump(exclude_none=True) for m in body.messages]

    async def work() -> Response:
        result = await st.engine.ingest(
            user,
            body.session_id,
            messages,
            user_speaker=body.user_speaker,
            agent=body.agent,
            capture=body.capture,
            tier=body.tier,
            end=body.end,
        )
        return json_response(ingest_json(result))

    return await idempotent(request, st, user, key, work)
