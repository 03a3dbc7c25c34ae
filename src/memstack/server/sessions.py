"""``/v1/contexts/{context_id}`` (what the model saw for one response: the manifest) and ``/v1/sessions``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel
from starlette.responses import Response

from memstack.server.schemas import ErrorOut
from memstack.server.state import CallerDep, StateDep
from memstack.server.wire import json_response

__all__ = ["router"]

_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (400, 401, 404, 422)}

router = APIRouter(tags=["sessions"], responses=_ERRORS)


class ManifestEntryOut(BaseModel):
    layer: str
    source: str
    tokens: int
    status: str
    flags: list[str]
    reason: str


class ManifestOut(BaseModel):
    context_id: str
    created_at: str
    agent: str
    fingerprint: str
    model: str | None
    encoding: str
    budget_tokens: int
    tokens: int
    memory_enabled: bool
    temporary: bool
    entries: list[ManifestEntryOut]


@router.get(
    "/v1/contexts/{context_id}",
    response_model=ManifestOut,
    summary="The manifest of one response: every fragment the model saw, kept, trimmed or quarantined",
)
async def get_context(
    st: StateDep,
    caller: CallerDep,
    context_id: Annotated[str, Path(min_length=1, max_length=200)],
    user_id: Annotated[str | None, Query(min_length=1, max_length=200, description="Only if it is this user's")] = None,
) -> Response:
    manifest = await st.engine.store.contexts.get(caller.tenant, context_id, user_id=user_id)
    data: dict[str, Any] = manifest.to_dict()
    return json_response(data)
