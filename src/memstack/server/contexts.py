"""``GET /v1/users/{user_id}/contexts``: a user's latest stored contexts (what the model saw for each response), newest
first, each as ``GET /v1/contexts/{context_id}`` shows one (:mod:`memstack.server.sessions`); ``session_id`` keeps
one session's. What ``memstack context list`` and the Python client's ``contexts.recent`` read."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel
from starlette.responses import Response

from memstack.server.schemas import ErrorOut
from memstack.server.sessions import ManifestOut
from memstack.server.state import CallerDep, StateDep
from memstack.server.wire import json_response

__all__ = ["router"]

_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (400, 401)}

router = APIRouter(tags=["sessions"], responses=_ERRORS)


class ManifestList(BaseModel):
    contexts: list[ManifestOut]


@router.get(
    "/v1/users/{user_id}/contexts",
    response_model=ManifestList,
    summary="A user's latest contexts (what the model saw for each response), newest first",
)
async def recent_contexts(
    st: StateDep,
    caller: CallerDep,
    user_id: Annotated[str, Path(min_length=1, max_length=200, description="The user, within the caller's tenant")],
    session_id: Annotated[str | None, Query(min_length=1, max_length=200, description="Only this session's")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> Response:
    found = await st.engine.contexts.recent(caller.user(user_id), session_id=session_id, limit=limit)
    data: list[dict[str, Any]] = [m.to_dict() for m in found]
    return json_response({"contexts": data})
