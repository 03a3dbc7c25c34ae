"""``/v1/contexts/{context_id}`` (what the model saw for one response: the manifest), ``/v1/sessions/{session_id}``
(a session's memory: base truth, turn log, raw window), ``/v1/sessions/{session_id}/turns`` (its archived exchanges),
``POST /v1/sessions/{session_id}/end`` (close it and write its cross-session line: ``AsyncMemstack.end_session``)
and ``GET /v1/users/{user_id}/sessions`` (a user's sessions, most recently active first, as ``memstack sessions
list`` shows them)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, Field
from starlette.responses import Response

from memstack.server.idempotency import IdempotencyKey, idempotent
from memstack.server.schemas import ErrorOut, SessionEndOut, SessionList, SessionOut, TurnList
from memstack.server.state import CallerDep, StateDep
from memstack.server.wire import archived_turn_json, json_response, session_summary_json
from memstack.types import SessionState

__all__ = ["router"]

_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (400, 401, 404)}
_END_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (409, 503)}

UserIdQuery = Annotated[str, Query(min_length=1, max_length=200, description="The session's user")]

router = APIRouter(tags=["sessions"], responses=_ERRORS)


class ManifestEntryOut(BaseModel):
    layer: str
    source: str
    tokens: int
    status: str
    flags: list[str]
    reason: str
    text: str = Field(
        description="The fragment's text as the model saw it; quarantined text comes as blocks (█), its words "
        "withheld; empty for the session layer (session metadata is never stored) and in contexts stored before "
        "texts were kept"
    )


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
    manifest = await st.engine.contexts.get(context_id, user_id=user_id, tenant=caller.tenant)
    data: dict[str, Any] = manifest.to_dict()
    return json_response(data)


def session_json(state: SessionState) -> dict[str, Any]:
    def ts(value: Any) -> str | None:
        return value.isoformat() if value is not None else None

    return {
        "session_id": state.session_id,
        "user_id": state.user_id,
        "agent": state.agent,
        "turn_count": state.turn_count,
        "base_truth": [
            {"text": f.text, "hard_exception": f.hard_exception, "since_turn": f.since_turn} for f in state.base_truth
        ],
        "turn_log": [
            {
                "turn": t.turn,
                "user_summary": t.user_summary,
                "assistant_summary": t.assistant_summary,
                "unsummarized": t.unsummarized,
            }
            for t in state.turn_log
        ],
        "raw_window": [
            {"role": m.role, "content": m.content, "turn": m.turn, "at": ts(m.at)} for m in state.raw_window
        ],
        "created_at": ts(state.created_at),
        "updated_at": ts(state.updated_at),
        "ended_at": ts(state.ended_at),
    }


@router.get(
    "/v1/sessions/{session_id}",
    response_model=SessionOut,
    summary="A session's memory: base truth (hard exceptions marked), turn log, raw window",
)
async def get_session(
    st: StateDep,
    caller: CallerDep,
    session_id: Annotated[str, Path(min_length=1, max_length=200)],
    user_id: UserIdQuery,
) -> Response:
    state = await st.engine.sessions.get(caller.user(user_id), session_id)
    return json_response(session_json(state))


@router.get(
    "/v1/sessions/{session_id}/turns",
    response_model=TurnList,
    summary="A session's archived exchanges in turn order, those a forgotten memory hides with their texts withheld",
)
async def session_turns(
    st: StateDep,
    caller: CallerDep,
    session_id: Annotated[str, Path(min_length=1, max_length=200)],
    user_id: UserIdQuery,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0, le=10_000_000, description="Turn n is at offset n - 1")] = 0,
) -> Response:
    user = caller.user(user_id)
    turns = await st.engine.sessions.turns(user, session_id, limit=limit, offset=offset, include_hidden=False)
    if not turns:  # a session of no turns (yet), or past its last one; NotFound for one the user does not have
        await st.engine.sessions.get(user, session_id, window_turns=0)
    return json_response({"turns": [archived_turn_json(t) for t in turns]})


@router.get(
    "/v1/users/{user_id}/sessions",
    response_model=SessionList,
    summary="A user's sessions, most recently active first (turns, ended or not, cross-session line)",
)
async def list_sessions(
    st: StateDep,
    caller: CallerDep,
    user_id: Annotated[str, Path(min_length=1, max_length=200, description="The user, within the caller's tenant")],
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> Response:
    found = await st.engine.sessions.list(caller.user(user_id), limit=limit, offset=offset)
    return json_response({"sessions": [session_summary_json(s) for s in found]})


@router.post(
    "/v1/sessions/{session_id}/end",
    response_model=SessionEndOut,
    responses=_END_ERRORS,
    summary="End a session and write its one-line summary, which the user's later sessions see",
)
async def end_session(
    request: Request,
    st: StateDep,
    caller: CallerDep,
    session_id: Annotated[str, Path(min_length=1, max_length=200)],
    user_id: UserIdQuery,
    key: IdempotencyKey = None,
) -> Response:
    user = caller.user(user_id)

    async def work() -> Response:
        # Ending an ended session writes its line again and answers the same (as the library does).
        summary = await st.engine.end_session(user, session_id)
        data = None if summary is None else session_summary_json(summary)
        return json_response({"session_id": session_id, "ended": True, "summary": data})

    return await idempotent(request, st, user, key, work)
