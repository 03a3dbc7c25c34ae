"""What the routes share: the engine, the settings, the key cache and the query embedder; and the dependencies that
hand them to a route."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from memstack.engine import AsyncMemstack
from memstack.server.auth import Caller, KeyCache
from memstack.server.embedding import QueryEmbedder
from memstack.server.settings import ServerSettings

__all__ = ["CallerDep", "ServerState", "StateDep"]

_bearer = HTTPBearer(auto_error=False, description="An API key from `memstack keys create --tenant NAME`")


@dataclass(slots=True)
class ServerState:
    engine: AsyncMemstack
    settings: ServerSettings
    keys: KeyCache
    queries: QueryEmbedder


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.memstack
    return state


async def _caller(
    request: Request,
    _: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
) -> Caller:
    state: ServerState = request.app.state.memstack
    return await state.keys.caller(request.headers.get("authorization"))


StateDep = Annotated[ServerState, Depends(_state)]
CallerDep = Annotated[Caller, Depends(_caller)]
