"""What the routes share: the engine, the settings, the key cache and the query embedder; and the dependencies that
hand them to a route."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from memstack.engine import AsyncMemstack
from memstack.server.auth import Caller, KeyCache
from memstack.server.embedding import QueryEmbedder
from memstack.server.settings import ServerSettings
from memstack.server.wire import MemoryFragments

__all__ = ["CallerDep", "ServerState", "StateDep"]


@dataclass(slots=True)
class ServerState:
    engine: AsyncMemstack
    settings: ServerSettings
    keys: KeyCache
    queries: QueryEmbedder
    fragments: MemoryFragments


async def _state(request: Request) -> ServerState:  # async: FastAPI runs sync dependencies in a thread pool
    state: ServerState = request.app.state.memstack
    return state


async def _caller(request: Request) -> Caller:
    # The bearer scheme is declared for the whole API in the OpenAPI document (app.py), not per dependency.
    state: ServerState = request.app.state.memstack
    return await state.keys.caller(request.headers.get("authorization"))


StateDep = Annotated[ServerState, Depends(_state)]
CallerDep = Annotated[Caller, Depends(_caller)]
