"""The client's namespaces: ``sessions``, ``agents``, ``contexts`` and ``users``, the engine's namespaces of the same
names (:mod:`memstack.engine`) answered by the HTTP API, with the same method names, parameters and return types
(``tests/client/test_client.py`` pins them). What the HTTP API does not carry raises ``InputError``, as the client's
other methods do: ``sessions.get(window_turns=)`` other than its default, ``sessions.turns(include_hidden=True)``,
and the engine's ``sessions.snapshots``, ``artifacts`` and ``search``, ``agents.load`` and the ``keys`` (an
administrator's, never a tenant key's) are the library's only.

``users.list`` lists the tenant's users a page at a time (``GET /v1/users?after=&limit=``): each user with its
active memories, sessions and last change, in user-id order; the last ``user_id`` of a page is the ``after`` of the
next.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from memstack.client import _decode
from memstack.client._http import Transport
from memstack.client._identity import Identity
from memstack.errors import InputError, MalformedResponse
from memstack.types import AgentRecord, ArchivedTurn, Manifest, SessionState, SessionSummary, UserRef, UserSummary

__all__ = ["RemoteAgents", "RemoteContexts", "RemoteSessions", "RemoteUsers"]


def _seg(value: str) -> str:
    return quote(value, safe="")


class _Remote:
    """A namespace over the client's transport, acting for the tenant of its key (``identity``)."""

    def __init__(self, http: Transport, identity: Identity) -> None:
        self._http = http
        self._who = identity

    async def _tenant(self, tenant: str | None) -> str:
        """The client's tenant; ``InputError`` for another one (as for users)."""
        return await self._who.tenant(tenant)


class RemoteSessions(_Remote):
    """A user's sessions (``GET /v1/users/{id}/sessions``, ``GET /v1/sessions/{id}``)."""

    async def list(
        self, user_id: str | UserRef, *, limit: int = 50, offset: int = 0, tenant: str | None = None
    ) -> builtins.list[SessionSummary]:
        """The user's sessions, most recently active first."""
        uid, ten = await self._who.user(user_id, tenant)
        params = {"limit": limit, "offset": offset}
        data = await self._http.request("GET", f"/v1/users/{_seg(uid)}/sessions", params=params)
        return [_decode.session_summary(s, ten) for s in data["sessions"]]

    async def get(
        self, user_id: str | UserRef, session_id: str, *, window_turns: int = 5, tenant: str | None = None
    ) -> SessionState:
        """One session's memory: base truth, turn log, the raw messages of its last turns."""
        if window_turns != 5:
            raise InputError(
                "sessions.get(window_turns=...) is not offered by the HTTP API; use the embedded library "
                "(AsyncMemstack) for it"
            )
        uid, ten = await self._who.user(user_id, tenant)
        data = await self._http.request("GET", f"/v1/sessions/{_seg(session_id)}", params={"user_id": uid})
        return _decode.session_state(data, ten)

    async def turns(
        self,
        user_id: str | UserRef,
        session_id: str,
        *,
        limit: int = 100,
        offset: int = 0,
        include_hidden: bool = False,
        tenant: str | None = None,
    ) -> builtins.list[ArchivedTurn]:
        """The session's archived exchanges in turn order (``GET /v1/sessions/{id}/turns``); those a forgotten
        memory hides come with their texts withheld (``include_hidden=True`` is the embedded library's only)."""
        if include_hidden:
            raise InputError(
                "sessions.turns(include_hidden=True) is not offered by the HTTP API: hidden exchanges stay in the "
                "store's record only; use the embedded library (AsyncMemstack) for it"
            )
        uid, ten = await self._who.user(user_id, tenant)
        params = {"user_id": uid, "limit": limit, "offset": offset}
        data = await self._http.request("GET", f"/v1/sessions/{_seg(session_id)}/turns", params=params)
        return [_decode.archived_turn(t, uid, ten) for t in data["turns"]]


class RemoteAgents(_Remote):
    """The tenant's stored agents (``/v1/agents``)."""

    async def list(self, *, tenant: str | None = None) -> builtins.list[AgentRecord]:
        ten = await self._tenant(tenant)
        data = await self._http.request("GET", "/v1/agents")
        return [_decode.agent_record(a, ten) for a in data["agents"]]

    async def get(self, name: str, *, tenant: str | None = None) -> AgentRecord:
        """One stored definition; ``default`` is the built-in agent's until the tenant stores its own."""
        ten = await self._tenant(tenant)
        return _decode.agent_record(await self._http.request("GET", f"/v1/agents/{_seg(name)}"), ten)

    async def put(self, name: str, definition: Mapping[str, Any], *, tenant: str | None = None) -> AgentRecord:
        """Create or replace the agent ``name`` (validated by the server: ``InputError`` naming the bad field)."""
        ten = await self._tenant(tenant)
        if not isinstance(definition, Mapping):
            raise InputError("an agent definition must be a mapping (the fields of an agent YAML file)")
        data = await self._http.request("PUT", f"/v1/agents/{_seg(name)}", json_body=dict(definition))
        return _decode.agent_record(data, ten)

    async def delete(self, name: str, *, tenant: str | None = None) -> None:
        await self._tenant(tenant)
        await self._http.request("DELETE", f"/v1/agents/{_seg(name)}")


class RemoteContexts(_Remote):
    """Stored contexts (``GET /v1/contexts/{id}``, ``GET /v1/users/{id}/contexts``)."""

    async def get(
        self, context_id: str, *, user_id: str | UserRef | None = None, tenant: str | None = None
    ) -> Manifest:
        """One response's context (only if it is ``user_id``'s when given)."""
        if user_id is None:
            await self._tenant(tenant)
            params = None
        else:
            params = {"user_id": (await self._who.user(user_id, tenant))[0]}
        data = await self._http.request("GET", f"/v1/contexts/{_seg(context_id)}", params=params)
        return _manifest(data)

    async def recent(
        self, user_id: str | UserRef, *, session_id: str | None = None, limit: int = 20, tenant: str | None = None
    ) -> builtins.list[Manifest]:
        """The user's latest contexts (of one session when given), newest first."""
        uid, _ = await self._who.user(user_id, tenant)
        params = {"session_id": session_id, "limit": limit}
        data = await self._http.request("GET", f"/v1/users/{_seg(uid)}/contexts", params=params)
        return [_manifest(m) for m in data["contexts"]]


def _manifest(data: Mapping[str, Any]) -> Manifest:
    try:
        return Manifest.from_dict(data)
    except InputError as exc:
        raise MalformedResponse(f"the server's context is not a manifest: {exc}", status=200) from None


class RemoteUsers(_Remote):
    """The tenant's users (``GET /v1/users``)."""

    async def list(
        self, *, after: str | None = None, limit: int = 100, tenant: str | None = None
    ) -> builtins.list[UserSummary]:
        """A page of the tenant's users (anyone with a memory or a session), in user-id order, each with its active
        memories, sessions and last change: pass the last ``user_id`` as ``after`` for the next page (1-1000)."""
        await self._tenant(tenant)
        data = await self._http.request("GET", "/v1/users", params={"after": after, "limit": limit})
        return [_decode.user_summary(u) for u in data["users"]]
