"""``/v1/agents``: agent definitions stored per tenant (the fields of an agent YAML file, as JSON or YAML).

A definition is validated by the same loader as agent files (``memstack.context``) before it is stored, so a chat
naming the agent can never fail on its definition. ``GET /v1/agents/default`` shows the built-in agent.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from memstack.context.agent import Agent
from memstack.engine import Agents
from memstack.errors import InputError
from memstack.server.media import YAML_TYPES
from memstack.server.schemas import AgentList, AgentOut, ErrorOut
from memstack.server.state import CallerDep, ServerState, StateDep
from memstack.server.wire import agent_json, json_response

__all__ = ["load_definition", "resolve_agent", "router"]

_ERRORS: dict[int | str, dict[str, object]] = {code: {"model": ErrorOut} for code in (400, 401, 404, 413)}

router = APIRouter(prefix="/v1/agents", tags=["agents"], responses=_ERRORS)

AgentName = Annotated[str, Path(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]

_PUT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "The agent: name (optional, must match the path), core, characteristics, model, "
        "budget_tokens, raw_window, memory, tools — as in an agent YAML file",
        "content": {
            "application/json": {"schema": {"type": "object", "additionalProperties": True}},
            "application/yaml": {"schema": {"type": "string"}},
        },
    }
}


def load_definition(name: str, definition: Any) -> Agent:
    """Validate ``definition`` with the agent loader; the loaded ``Agent`` (``InputError`` naming the bad field)."""
    return Agents.parse(name, definition)


async def resolve_agent(st: ServerState, tenant: str, name: str | None) -> Agent | None:
    """The agent a chat names: a stored one of this tenant, or the built-in ``default``; ``None`` when unnamed.

    Only ever an :class:`Agent` value reaches the engine, never a name: the engine would read a name ending in
    ``.yaml`` as a file path on the server."""
    if name is None:
        return None
    return await st.engine.agents.load(name, tenant=tenant)


#: How deep an agent definition may nest (a real one nests three or four levels).
_MAX_DEPTH = 32


def _nested(value: Any) -> Any:
    """``value`` if it nests at most ``_MAX_DEPTH`` levels; ``InputError`` otherwise (iterative: no recursion)."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if depth > _MAX_DEPTH:
            raise InputError(f"the agent definition nests deeper than {_MAX_DEPTH} levels; flatten it")
        if isinstance(item, dict):
            todo.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            todo.extend((v, depth + 1) for v in item)
    return value


async def _body(request: Request) -> Any:
    try:
        return _nested(await _parse(request))
    except RecursionError:
        raise InputError(f"the agent definition nests deeper than {_MAX_DEPTH} levels; flatten it") from None


async def _parse(request: Request) -> Any:
    raw = await request.body()
    kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("the agent definition is not UTF-8 text") from None
    if kind not in YAML_TYPES:
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"the request body is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    import yaml

    class _NoAliases(yaml.SafeLoader):
        # Anchors and aliases let a few bytes of YAML expand to gigabytes; agent files never need them.
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise InputError("YAML aliases (*name) are not accepted in agent definitions; write the values out")
            return super().compose_node(parent, index)

    try:
        return yaml.load(text, Loader=_NoAliases)
    except yaml.YAMLError as exc:
        raise InputError(f"the request body is not valid YAML: {exc}") from None


@router.get("", response_model=AgentList, summary="The caller's stored agents")
async def list_agents(st: StateDep, caller: CallerDep) -> Response:
    records = await st.engine.agents.list(tenant=caller.tenant)
    out = [agent_json(r, load_definition(r.name, r.definition).fingerprint) for r in records]
    return json_response({"agents": out})


@router.get("/{name}", response_model=AgentOut, summary="One agent definition (default: the built-in agent)")
async def get_agent(st: StateDep, caller: CallerDep, name: AgentName) -> Response:
    record = await st.engine.agents.get(name, tenant=caller.tenant)  # default: the built-in until one is stored
    return json_response(agent_json(record, load_definition(name, record.definition).fingerprint))


@router.put("/{name}", response_model=AgentOut, summary="Create or replace an agent", openapi_extra=_PUT_BODY)
async def put_agent(st: StateDep, caller: CallerDep, name: AgentName, request: Request) -> Response:
    definition = await _body(request)
    agent = load_definition(name, definition)
    record = await st.engine.agents.put(name, {**definition, "name": name}, tenant=caller.tenant)
    return json_response(agent_json(record, agent.fingerprint))


@router.delete("/{name}", status_code=204, summary="Delete a stored agent")
async def delete_agent(st: StateDep, caller: CallerDep, name: AgentName) -> Response:
    await st.engine.agents.delete(name, tenant=caller.tenant)
    return Response(status_code=204)
