"""``/v1/users/{user_id}`` as a whole: export everything held about a user (data access requests) and erase it
(data deletion requests); ``GET /v1/users``: the tenant's users, a page at a time; ``POST /v1/users/import``: users
brought in (memstack's export document, mem0's memories, plain messages). Scoped to the caller's tenant, like every
route: the same user id in another tenant is another user, and is left alone; a document of another tenant is
refused (409).

An import's body is bounded like every body, by the server's ``max_body_bytes`` (413 before it is read whole, whether
declared or streamed): a larger export is imported with ``memstack users import FILE`` on the server's machine, or
with the limit raised."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import Response, StreamingResponse

from memstack.errors import ImportRefused
from memstack.server.schemas import ErasureOut, ErrorOut, ExportOut, ImportList, UserList
from memstack.server.state import CallerDep, StateDep
from memstack.server.wire import json_response

__all__ = ["listing", "router"]

_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (400, 401, 503)}
_IMPORT_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (409, 413)}

router = APIRouter(prefix="/v1/users/{user_id}", tags=["users"], responses=_ERRORS)
listing = APIRouter(tags=["users"], responses=_ERRORS)

UserId = Annotated[str, Path(min_length=1, max_length=200, description="The user, within the caller's tenant")]


@router.get(
    "/export",
    response_model=ExportOut,
    summary="Everything held about a user, as one JSON document (streamed)",
    response_description="The export document, format memstack.user-export version 2 (README: Export and erasure). "
    "Written as it is read, a page at a time; a user never seen exports with every list empty.",
)
async def export_user(st: StateDep, caller: CallerDep, user_id: UserId) -> Response:
    user = caller.user(user_id)
    pieces = st.engine.export_stream(user)
    # The header and the first section are read before the response starts, so a store that is down answers 503
    # rather than a truncated document.
    head = [await anext(pieces), await anext(pieces)]

    async def body() -> AsyncIterator[bytes]:
        for piece in head:
            yield piece.encode()
        async for piece in pieces:
            yield piece.encode()

    name = re.sub(r"[^A-Za-z0-9._-]", "_", f"memstack-export-{user.tenant}-{user.user_id}.json")
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    return StreamingResponse(body(), media_type="application/json", headers=headers)


@router.delete(
    "",
    response_model=ErasureOut,
    summary="Erase everything held about a user (memories and history, sessions, archive, vectors, contexts, jobs)",
    response_description="Rows removed per table. Afterwards the user answers as one never seen; erasing a user "
    "with nothing stored removes nothing and is not an error.",
)
async def erase_user(st: StateDep, caller: CallerDep, user_id: UserId) -> Response:
    user = caller.user(user_id)
    report = await st.engine.erase(user)
    st.fragments.forget(user.tenant, user.user_id)
    return json_response(report.to_dict())


@listing.get(
    "/v1/users",
    response_model=UserList,
    summary="The tenant's users (anyone with a memory or a session), a page at a time",
    response_description="Users in user-id order with their active memories, sessions and last change; `next` is "
    "the cursor of the next page (null when the page is not full).",
)
async def list_users(
    st: StateDep,
    caller: CallerDep,
    after: Annotated[str | None, Query(min_length=1, max_length=200, description="The last user_id seen")] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="Users per page")] = 100,
) -> Response:
    found = await st.engine.users.list(tenant=caller.tenant, after=after, limit=limit)
    following = found[-1].user_id if len(found) == limit else None
    return json_response({"users": [u.to_dict() for u in found], "next": following})


@listing.post(
    "/v1/users/import",
    response_model=ImportList,
    responses=_IMPORT_ERRORS,
    summary="Import users: memstack's export document, mem0's memories, or plain messages",
    response_description="One report per user: rows written per table, or unchanged when the store held the "
    "document already. A refused import (400 unreadable, 409 conflicting, 413 too large) writes nothing.",
)
async def import_users(
    request: Request,
    st: StateDep,
    caller: CallerDep,
    source: Annotated[
        Literal["memstack", "mem0", "jsonl"],
        Query(
            alias="from",
            description="memstack: an export document (GET /v1/users/{user_id}/export); mem0: what mem0's get_all "
            'returns ({"results": [...]}); jsonl: {"messages": [{"user_id", "text", "timestamp"}, ...]}',
        ),
    ] = "memstack",
    user_id: Annotated[
        str | None, Query(min_length=1, max_length=200, description="mem0: the user of memories naming none")
    ] = None,
) -> Response:
    body = await request.body()
    if source == "memstack":
        reports = [await st.engine.import_user(body, tenant=caller.tenant)]
    else:
        try:
            data = json.loads(body)
        except ValueError:
            raise ImportRefused("the body is not JSON; nothing was imported") from None
        if source == "mem0":
            reports = await st.engine.users.import_mem0(data, user_id=user_id, tenant=caller.tenant)
        else:
            messages = data.get("messages") if isinstance(data, dict) else None
            if not isinstance(messages, list):
                raise ImportRefused('send {"messages": [{"user_id", "text", "timestamp"}, ...]}; nothing was imported')
            reports = await st.engine.users.import_messages(messages, tenant=caller.tenant)
    for report in reports:
        st.fragments.forget(report.tenant, report.user_id)
    return json_response({"users": [r.to_dict() for r in reports]})
