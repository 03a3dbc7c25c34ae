"""``/v1/users/{user_id}/memories…``: a user's long-term memories (list, add, get, edit, forget or delete, forget
everything a query is about (with a preview), restore, search, history) and tier usage. A forget hides, with the
memory, what it came from and what was derived from it (:mod:`memstack.capture.forget`). Every call is scoped to
the caller's tenant: another tenant's ids are 404. The writes honour an ``Idempotency-Key``
(:mod:`memstack.server.idempotency`)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import Response

from memstack.errors import InputError
from memstack.server.idempotency import IdempotencyKey, idempotent
from memstack.server.schemas import (
    AS_OF_DOC,
    DeleteOut,
    ErrorOut,
    EventList,
    ForgetIn,
    ForgetOut,
    MemoryAddedOut,
    MemoryCreate,
    MemoryList,
    MemoryOut,
    MemoryPatchIn,
    SearchIn,
    SearchOut,
    UsageOut,
)
from memstack.server.state import CallerDep, ServerState, StateDep
from memstack.server.wire import event_json, forgetting_json, json_response, memory_json, usage_json
from memstack.types import MAX_METADATA_CHARS, Category, DeletedBy

__all__ = ["router"]

_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (400, 401, 404, 409, 413, 503)}

router = APIRouter(prefix="/v1/users/{user_id}", tags=["memories"], responses=_ERRORS)

UserId = Annotated[str, Path(min_length=1, max_length=200, description="The user, within the caller's tenant")]
MemoryId = Annotated[str, Path(min_length=1, max_length=200)]
Tier = Annotated[str | None, Query(max_length=50, description="The user's tier (default: the default tier)")]


_SEARCH_BODY: dict[str, Any] = {
    "parameters": [
        {
            "name": "user_id",
            "in": "path",
            "required": True,
            "description": "The user, within the caller's tenant",
            "schema": {"type": "string", "minLength": 1, "maxLength": 200},
        }
    ],
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SearchIn"}}},
    },
}


@router.post(
    "/memories/search",
    response_model=SearchOut,
    summary="The memories closest in meaning to a query (at most limit, scoring min_score or more)",
    openapi_extra=_SEARCH_BODY,
)
async def search_memories(request: Request) -> Response:
    # The hot path (a UI's search box, the load test): the body is validated by SearchIn directly and the caller
    # resolved without FastAPI's dependency machinery, which cost about a third of the server's time per search.
    # The path parameter and body schema are published through ``openapi_extra`` (app.py adds SearchIn to the
    # components); UserRef checks the id (1-200 printable characters).
    st: ServerState = request.app.state.memstack
    caller = await st.keys.caller(request.headers.get("authorization"))
    body = SearchIn.model_validate_json(await request.body())
    if not body.query.strip():
        raise InputError("search query is empty; pass the text to search for")
    vector = await st.queries.embed(body.query)
    user = caller.user(request.path_params["user_id"])
    hits = await st.engine.nearest(
        user, vector, limit=body.limit, category=body.category, agent_id=body.agent_id, metadata=body.metadata,
        min_score=body.min_score, as_of=body.as_of,
    )  # fmt: skip
    return st.fragments.search_response(hits)


@router.get("/memories", response_model=MemoryList, summary="List a user's memories, newest first")
async def list_memories(
    st: StateDep,
    caller: CallerDep,
    user_id: UserId,
    category: Annotated[list[Category] | None, Query(description="Only these categories (repeatable)")] = None,
    q: Annotated[str | None, Query(min_length=1, max_length=1000, description="Containing every word")] = None,
    include_deleted: bool = False,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    metadata: Annotated[
        str | None,
        Query(
            max_length=MAX_METADATA_CHARS,
            description="Only memories whose metadata has these keys with these values: a JSON object, e.g. "
            '{"project":"apollo"} (URL-encoded; exact match on top-level keys)',
        ),
    ] = None,
    as_of: Annotated[datetime | None, Query(description=AS_OF_DOC)] = None,
) -> Response:
    user = caller.user(user_id)
    found = await st.engine.list(
        user, category=category, text=q, include_deleted=include_deleted, limit=limit, offset=offset,
        metadata=_metadata_filter(metadata), as_of=as_of,
    )  # fmt: skip
    return json_response({"memories": [memory_json(m) for m in found]})


def _metadata_filter(text: str | None) -> dict[str, Any] | None:
    """The ``metadata`` query parameter: a JSON object as text."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise InputError(
            'the metadata parameter is a JSON object, e.g. metadata={"project":"apollo"} (URL-encoded), '
            f"got {text[:100]!r}"
        )
    return value


_DUPLICATE: dict[int | str, dict[str, Any]] = {
    200: {
        "model": MemoryAddedOut,
        "description": 'The user already has this memory: it is returned with "action": "duplicate" and nothing is '
        "stored (nor counted against the tier limit, so a full tier answers this too); force=true stores it anyway",
    },
    201: {"description": 'Stored: the new memory, "action": "created"'},
}


@router.post(
    "/memories",
    response_model=MemoryAddedOut,
    status_code=201,
    responses=_DUPLICATE,
    summary="Add a memory (source: manual); one the user already has is returned, not stored twice",
)
async def add_memory(
    request: Request, st: StateDep, caller: CallerDep, user_id: UserId, body: MemoryCreate, key: IdempotencyKey = None
) -> Response:
    user = caller.user(user_id)

    async def work() -> Response:
        added = await st.engine.add_result(
            user, body.content, category=body.category, tier=body.tier, agent_id=body.agent_id, force=body.force,
            metadata=body.metadata, valid_from=body.valid_from, valid_to=body.valid_to,
        )  # fmt: skip
        data = {**memory_json(added.memory), "action": added.action.value, "reason": added.reason}
        return json_response(data, 200 if added.duplicate else 201)

    return await idempotent(request, st, user, key, work)


@router.get("/memories/{memory_id}", response_model=MemoryOut, summary="One memory (active or forgotten)")
async def get_memory(st: StateDep, caller: CallerDep, user_id: UserId, memory_id: MemoryId) -> Response:
    return json_response(memory_json(await st.engine.get(caller.user(user_id), memory_id)))


@router.patch(
    "/memories/{memory_id}", response_model=MemoryOut, summary="Edit content, category, confidence or metadata"
)
async def edit_memory(
    request: Request,
    st: StateDep,
    caller: CallerDep,
    user_id: UserId,
    memory_id: MemoryId,
    body: MemoryPatchIn,
    key: IdempotencyKey = None,
) -> Response:
    user = caller.user(user_id)

    async def work() -> Response:
        memory = await st.engine.edit(
            user, memory_id, content=body.content, category=body.category, confidence=body.confidence,
            metadata=body.metadata,
        )  # fmt: skip
        return json_response(memory_json(memory))

    return await idempotent(request, st, user, key, work)


@router.delete(
    "/memories/{memory_id}",
    response_model=DeleteOut,
    summary="Forget a memory (restorable), or delete it for good with ?permanent=true",
)
async def delete_memory(
    request: Request,
    st: StateDep,
    caller: CallerDep,
    user_id: UserId,
    memory_id: MemoryId,
    permanent: Annotated[bool, Query(description="Delete for good: content and vector gone, history kept")] = False,
    key: IdempotencyKey = None,
) -> Response:
    user = caller.user(user_id)

    async def work() -> Response:
        if permanent:
            await st.engine.delete(user, memory_id)
            return json_response({"id": memory_id, "permanent": True, "memory": None})
        memory = await st.engine.forget(user, memory_id, by=DeletedBy.USER)
        return json_response({"id": memory_id, "permanent": False, "memory": memory_json(memory)})

    return await idempotent(request, st, user, key, work)


@router.post(
    "/memories/forget",
    response_model=ForgetOut,
    summary="Forget everything about something (every memory a query is about, with what it came from); "
    "dry_run previews it",
)
async def forget_about(
    request: Request, st: StateDep, caller: CallerDep, user_id: UserId, body: ForgetIn, key: IdempotencyKey = None
) -> Response:
    user = caller.user(user_id)

    async def work() -> Response:
        return json_response(forgetting_json(await st.engine.forget_about(user, body.query, dry_run=body.dry_run)))

    if body.dry_run:
        return await work()
    return await idempotent(request, st, user, key, work)


@router.post("/memories/{memory_id}/restore", response_model=MemoryOut, summary="Restore a forgotten memory")
async def restore_memory(
    request: Request,
    st: StateDep,
    caller: CallerDep,
    user_id: UserId,
    memory_id: MemoryId,
    tier: Tier = None,
    key: IdempotencyKey = None,
) -> Response:
    user = caller.user(user_id)

    async def work() -> Response:
        return json_response(memory_json(await st.engine.restore(user, memory_id, tier=tier)))

    return await idempotent(request, st, user, key, work)


@router.get("/memories/{memory_id}/history", response_model=EventList, summary="Every change to a memory")
async def memory_history(st: StateDep, caller: CallerDep, user_id: UserId, memory_id: MemoryId) -> Response:
    events = await st.engine.history(caller.user(user_id), memory_id)
    return json_response({"events": [event_json(e) for e in events]})


@router.get("/usage", response_model=UsageOut, summary='Active memories against the tier limit ("37 / 50")')
async def usage(st: StateDep, caller: CallerDep, user_id: UserId, tier: Tier = None) -> Response:
    return json_response(usage_json(user_id, await st.engine.usage(caller.user(user_id), tier=tier)))
