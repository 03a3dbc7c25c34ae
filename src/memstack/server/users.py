"""``/v1/users/{user_id}`` as a whole: export everything held about a user (data access requests) and erase it
(data deletion requests). Scoped to the caller's tenant, like every route: the same user id in another tenant is
another user, and is left alone."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Path
from starlette.responses import Response, StreamingResponse

from memstack.server.schemas import ErasureOut, ErrorOut, ExportOut
from memstack.server.state import CallerDep, StateDep
from memstack.server.wire import json_response

__all__ = ["router"]

_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (400, 401, 503)}

router = APIRouter(prefix="/v1/users/{user_id}", tags=["users"], responses=_ERRORS)

UserId = Annotated[str, Path(min_length=1, max_length=200, description="The user, within the caller's tenant")]


@router.get(
    "/export",
    response_model=ExportOut,
    summary="Everything held about a user, as one JSON document (streamed)",
    response_description="The export document, format memstack.user-export version 1 (README: Export and erasure). "
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
