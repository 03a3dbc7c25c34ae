"""``AsyncMemstackClient``: the methods of :class:`~memstack.engine.AsyncMemstack` that the HTTP API offers, with the
same names, parameters and return types, answered by a memstack server. Moving from the embedded library to a
server is one line::

    ms = AsyncMemstack(home=...)                                          # embedded
    ms = AsyncMemstackClient("http://127.0.0.1:8700", api_key="msk_...")  # a server

Users are named by id as in the library; their tenant is the API key's (``default`` for a server in local mode), so
``tenant=`` and a :class:`~memstack.types.UserRef` are accepted only when they name that tenant (learned once from
``GET /v1/whoami``). Errors are the library's (:mod:`memstack.client._http` maps them). A few arguments the HTTP API
does not carry (``add(source=, confidence=)``, ``list(agent_id=)``, ``forget(by=, note=)``, ``chat(delegated=)``,
an ``Agent`` object instead of a stored agent's name) raise ``InputError`` when given other than their default.
The engine's namespaces ``sessions``, ``agents`` and ``contexts`` are here too, and ``users`` (a tenant's users):
see :mod:`memstack.client._namespaces`.
"""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import AsyncGenerator, Iterable, Mapping
from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import quote

from memstack.client import _decode
from memstack.client._http import Transport, error_from
from memstack.client._identity import Identity
from memstack.client._namespaces import RemoteAgents, RemoteContexts, RemoteSessions, RemoteUsers
from memstack.client._webhooks import RemoteWebhooks
from memstack.engine._renamed import renamed
from memstack.errors import ConfigError, InputError, MalformedResponse
from memstack.types import (
    AddResult,
    Category,
    ChatDone,
    ChatEvent,
    ChatResult,
    ChatToken,
    ChatToolEvent,
    DeletedBy,
    ErasureReport,
    Forgetting,
    ImportReport,
    IngestResult,
    Memory,
    MemoryEvent,
    MemoryUsage,
    RecallItem,
    RecallKind,
    ScoredMemory,
    SessionSummary,
    Source,
    ToolUse,
    UserRef,
)
from memstack.types._core import check_min_score
from memstack.types.memories import check_as_of, check_interval, check_metadata, check_metadata_filter

if TYPE_CHECKING:
    from memstack.context import Agent, DelegatedTask, SessionMeta
    from memstack.recall import IngestMessage

__all__ = ["DEFAULT_URL", "AsyncMemstackClient"]

#: Where ``memstack serve`` listens by default.
DEFAULT_URL = "http://127.0.0.1:8700"

Categories = str | Category | Iterable[str | Category] | None


def _seg(value: str) -> str:
    """One path segment: ids are sent percent-escaped."""
    return quote(value, safe="")


def _categories(value: Categories) -> builtins.list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [Category.parse(value).value]
    return [Category.parse(c).value for c in value]


def _metadata(metadata: Mapping[str, Any] | SessionMeta) -> dict[str, Any]:
    """The session fields as ``POST /v1/chat`` takes them (times as ISO text; a ``SessionMeta``'s client fields)."""
    if not isinstance(metadata, Mapping):
        fields = ("local_time", "timezone", "user_agent", "location", "tier", "coins", "flags")
        metadata = {name: getattr(metadata, name) for name in fields}
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, tuple):
            value = list(value)
        if value is not None:
            out[key] = value
    return out


def _unsupported(what: str) -> InputError:
    return InputError(f"{what} is not offered by the HTTP API; use the embedded library (AsyncMemstack) for it")


class AsyncMemstackClient:
    """The memstack HTTP API as :class:`~memstack.engine.AsyncMemstack`'s methods. Use as
    ``async with AsyncMemstackClient(base_url, api_key=...) as ms:``.

    ``base_url`` falls back to ``$MEMSTACK_URL`` then ``http://127.0.0.1:8700``; ``api_key`` to
    ``$MEMSTACK_API_KEY``, then ``$MEMSTACK_KEY`` (none: a server in local mode). ``timeout``: seconds per request
    (imports and chat turns run in the request: leave room for them). ``retries``: how many times a call is tried
    again when no answer came or the server was busy; every write carries an ``Idempotency-Key`` of its own, reused
    by its retries, so a retried write is done once (:mod:`memstack.client._http`)."""

    def __init__(
        self, base_url: str | None = None, *, api_key: str | None = None, timeout: float = 120.0, retries: int = 2
    ) -> None:
        url = base_url or os.environ.get("MEMSTACK_URL") or DEFAULT_URL
        if not url.startswith(("http://", "https://")):
            source = "base_url" if base_url else "$MEMSTACK_URL"
            raise ConfigError(f"{source} = {url!r} is not an http(s) URL; give the server's, e.g. {DEFAULT_URL}")
        key = api_key if api_key is not None else os.environ.get("MEMSTACK_API_KEY") or os.environ.get("MEMSTACK_KEY")
        self._http = Transport(url, key, timeout, retries)
        self._who = Identity(self._http)
        self.sessions = RemoteSessions(self._http, self._who)
        self.agents = RemoteAgents(self._http, self._who)
        self.contexts = RemoteContexts(self._http, self._who)
        self.users = RemoteUsers(self._http, self._who)
        self.webhooks = RemoteWebhooks(self._http, self._who)

    @property
    def base_url(self) -> str:
        return self._http.base_url

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def tenant(self) -> str:
        """The tenant this client acts for (the API key's), asked of the server once."""
        return await self._who.tenant()

    # -- chat turns -------------------------------------------------------------------------------------------------

    def _chat_body(
        self, user_id: str, message: str, session_id: str | None, new_session: bool, metadata: Any, agent: Any,
        memory: bool, temporary: bool, delegated: Any, stream: bool,
    ) -> dict[str, Any]:  # fmt: skip
        if delegated is not None:
            raise _unsupported("chat(delegated=...)")
        if agent is not None and not isinstance(agent, str):
            raise _unsupported("an Agent object (store it with PUT /v1/agents/{name} and pass its name)")
        body: dict[str, Any] = {"user_id": user_id, "message": message, "memory": memory, "temporary": temporary}
        body.update({k: v for k, v in (("session_id", session_id), ("agent", agent)) if v is not None})
        if new_session:
            body["new_session"] = True
        if metadata is not None:
            body["metadata"] = _metadata(metadata)
        if stream:
            body["stream"] = True
        return body

    async def chat(
        self,
        user_id: str | UserRef,
        message: str,
        *,
        session_id: str | None = None,
        new_session: bool = False,
        tenant: str | None = None,
        metadata: Mapping[str, Any] | SessionMeta | None = None,
        agent: str | Agent | None = None,
        memory: bool = True,
        temporary: bool = False,
        delegated: DelegatedTask | Mapping[str, Any] | str | None = None,
    ) -> ChatResult:
        """One turn with memory (``POST /v1/chat``); see :meth:`AsyncMemstack.chat` (without ``session_id`` it
        continues the user's current session; ``new_session=True`` starts one)."""
        uid, _ = await self._who.user(user_id, tenant)
        body = self._chat_body(
            uid, message, session_id, new_session, metadata, agent, memory, temporary, delegated, False
        )
        data = await self._http.request("POST", "/v1/chat", json_body=body)
        return _decode.chat_result(data, memory_enabled=memory, temporary=temporary)

    async def chat_stream(
        self,
        user_id: str | UserRef,
        message: str,
        *,
        session_id: str | None = None,
        new_session: bool = False,
        tenant: str | None = None,
        metadata: Mapping[str, Any] | SessionMeta | None = None,
        agent: str | Agent | None = None,
        memory: bool = True,
        temporary: bool = False,
        delegated: DelegatedTask | Mapping[str, Any] | str | None = None,
    ) -> AsyncGenerator[ChatEvent, None]:
        """:meth:`chat`, streamed (server-sent events): ``ChatToken`` events, ``ChatToolEvent`` when the model used a
        tool, then one ``ChatDone``. Bad arguments raise at the first ``anext`` (the library's raise at the call),
        before any event; closing the iterator early closes the connection, which releases the session."""
        uid, _ = await self._who.user(user_id, tenant)
        body = self._chat_body(
            uid, message, session_id, new_session, metadata, agent, memory, temporary, delegated, True
        )
        async with self._http.stream("POST", "/v1/chat", json_body=body) as response:
            event = ""
            async for line in response.aiter_lines():
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data = json.loads(line[5:].strip())
                    if event == "token":
                        yield ChatToken(data["text"])
                    elif event == "tool":
                        use = ToolUse(data["name"], data.get("arguments") or {}, data.get("result") or "",
                                      bool(data.get("error")))  # fmt: skip
                        yield ChatToolEvent(use)
                    elif event == "done":
                        yield ChatDone(_decode.chat_result(data, memory_enabled=memory, temporary=temporary))
                        return
                    elif event == "error":
                        error = data.get("error") or {}
                        raise error_from(int(error.get("status") or 500), data, line)
        raise MalformedResponse("the chat stream ended without its done event", status=200)

    async def end_session(
        self, user_id: str | UserRef, session_id: str, *, tenant: str | None = None
    ) -> SessionSummary | None:
        """Close a session and write its one-line summary (``POST /v1/sessions/{id}/end``)."""
        uid, ten = await self._who.user(user_id, tenant)
        path = f"/v1/sessions/{_seg(session_id)}/end"
        data = await self._http.request("POST", path, params={"user_id": uid})
        summary = data.get("summary")
        return None if summary is None else _decode.session_summary(summary, ten)

    # -- recall and import -------------------------------------------------------------------------------------------

    @renamed(k="limit")
    async def recall(
        self, user_id: str | UserRef, query: str, *, limit: int = 10, at: datetime | None = None,
        kinds: Iterable[RecallKind | str] | None = None, exclude_session: str | None = None,
        agent_id: str | None = None, min_score: float | None = None, as_of: datetime | None = None,
        tenant: str | None = None,
    ) -> builtins.list[RecallItem]:  # fmt: skip
        """Memories and archived messages best matching ``query`` (``POST …/recall``); see the library's."""
        uid, _ = await self._who.user(user_id, tenant)
        body: dict[str, Any] = {"query": query, "limit": limit}
        if (when := check_as_of(as_of)) is not None:
            body["as_of"] = when.isoformat()
        if (floor := check_min_score(min_score, low=0.0, high=None)) is not None:
            body["min_score"] = floor
        if at is not None:
            body["at"] = at.isoformat()
        if kinds is not None:
            body["kinds"] = [str(RecallKind(kind)) for kind in kinds]
        body.update({k_: v for k_, v in (("exclude_session", exclude_session), ("agent_id", agent_id)) if v})
        data = await self._http.request("POST", f"/v1/users/{_seg(uid)}/recall", json_body=body)
        return [_decode.recall_item(item) for item in data["results"]]

    async def ingest(
        self, user_id: str | UserRef, session_id: str, messages: Iterable[Mapping[str, Any] | IngestMessage], *,
        user_speaker: str | None = None, agent: str | None = None, capture: bool = True, tier: str | None = None,
        end: bool = True, tenant: str | None = None,
    ) -> IngestResult:  # fmt: skip
        """Import a past conversation (``POST …/ingest``); see :meth:`AsyncMemstack.ingest`."""
        uid, ten = await self._who.user(user_id, tenant)
        sent = []
        for message in messages:
            item = dict(message) if isinstance(message, Mapping) else asdict(message)
            if isinstance(item.get("at"), datetime):
                item["at"] = item["at"].isoformat()
            sent.append({k: v for k, v in item.items() if v is not None})
        body: dict[str, Any] = {"session_id": session_id, "messages": sent, "capture": capture, "end": end}
        body.update({k: v for k, v in (("user_speaker", user_speaker), ("agent", agent), ("tier", tier)) if v})
        data = await self._http.request("POST", f"/v1/users/{_seg(uid)}/ingest", json_body=body)
        return _decode.ingest_result(data, ten)

    # -- memory management ------------------------------------------------------------------------------------------

    def _memories(self, user_id: str, memory_id: str | None = None) -> str:
        path = f"/v1/users/{_seg(user_id)}/memories"
        return path if memory_id is None else f"{path}/{_seg(memory_id)}"

    @renamed(user="user_id")
    async def add(
        self, user_id: str | UserRef, content: str, *, category: str | Category = Category.GENERAL,
        tier: str | None = None, source: str | Source = Source.MANUAL, agent_id: str | None = None,
        confidence: float = 1.0, force: bool = False, metadata: Mapping[str, Any] | None = None,
        valid_from: datetime | None = None, valid_to: datetime | None = None, tenant: str | None = None,
    ) -> Memory:  # fmt: skip
        """Store one memory (``POST …/memories``); ``LimitReached`` when the user's tier is full. A memory the user
        already has is returned, not stored again (:meth:`add_result` says which); ``force`` stores it anyway.
        ``metadata``: a JSON object kept with it (see :meth:`AsyncMemstack.add`)."""
        added = await self.add_result(
            user_id, content, category=category, tier=tier, source=source, agent_id=agent_id, confidence=confidence,
            force=force, metadata=metadata, valid_from=valid_from, valid_to=valid_to, tenant=tenant,
        )  # fmt: skip
        return added.memory

    @renamed(user="user_id")
    async def add_result(
        self, user_id: str | UserRef, content: str, *, category: str | Category = Category.GENERAL,
        tier: str | None = None, source: str | Source = Source.MANUAL, agent_id: str | None = None,
        confidence: float = 1.0, force: bool = False, metadata: Mapping[str, Any] | None = None,
        valid_from: datetime | None = None, valid_to: datetime | None = None, tenant: str | None = None,
    ) -> AddResult:  # fmt: skip
        """:meth:`add`, saying what it did (the response's ``action``: ``created`` or ``duplicate``)."""
        if source != Source.MANUAL:
            raise _unsupported(f"add(source={source!r}) (the API stores manual memories)")
        if confidence != 1.0:
            raise _unsupported("add(confidence=...) (set it afterwards with edit)")
        uid, ten = await self._who.user(user_id, tenant)
        body: dict[str, Any] = {"content": content, "category": Category.parse(category).value}
        body.update({k: v for k, v in (("tier", tier), ("agent_id", agent_id)) if v is not None})
        if force:
            body["force"] = True
        if metadata:
            body["metadata"] = dict(check_metadata(metadata))
        start, end = check_interval(valid_from, valid_to)
        body.update({k: v.isoformat() for k, v in (("valid_from", start), ("valid_to", end)) if v is not None})
        return _decode.add_result(await self._http.request("POST", self._memories(uid), json_body=body), ten)

    @renamed(user="user_id")
    async def get(self, user_id: str | UserRef, memory_id: str, *, tenant: str | None = None) -> Memory:
        uid, ten = await self._who.user(user_id, tenant)
        return _decode.memory(await self._http.request("GET", self._memories(uid, memory_id)), ten)

    @renamed(user="user_id")
    async def list(
        self,
        user_id: str | UserRef,
        *,
        category: Categories = None,
        text: str | None = None,
        agent_id: str | None = None,
        include_deleted: bool = False,
        limit: int = 100,
        offset: int = 0,
        metadata: Mapping[str, Any] | None = None,
        as_of: datetime | None = None,
        tenant: str | None = None,
    ) -> builtins.list[Memory]:
        """Newest first; ``text`` keeps memories containing every word of it; ``metadata`` those whose metadata has
        each key given with the same value."""
        if agent_id is not None:
            raise _unsupported("list(agent_id=...)")
        uid, ten = await self._who.user(user_id, tenant)
        params = {"category": _categories(category), "q": text, "include_deleted": include_deleted,
                  "limit": limit, "offset": offset}  # fmt: skip
        if wanted := check_metadata_filter(metadata):
            params["metadata"] = json.dumps(wanted, ensure_ascii=False, separators=(",", ":"))
        if (when := check_as_of(as_of)) is not None:
            params["as_of"] = when.isoformat()
        data = await self._http.request("GET", self._memories(uid), params=params)
        return [_decode.memory(m, ten) for m in data["memories"]]

    @renamed(user="user_id", k="limit")
    async def search(
        self,
        user_id: str | UserRef,
        query: str,
        *,
        limit: int = 5,
        category: Categories = None,
        agent_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        min_score: float | None = None,
        as_of: datetime | None = None,
        tenant: str | None = None,
    ) -> builtins.list[ScoredMemory]:
        """The ``limit`` active memories closest in meaning to ``query``, best first (``score``: cosine similarity,
        -1 to 1); ``min_score`` leaves out those below it, ``metadata`` filters as :meth:`list` does."""
        if not query.strip():
            raise InputError("search query is empty; pass the text to search for")
        uid, ten = await self._who.user(user_id, tenant)
        body: dict[str, Any] = {"query": query, "limit": limit}
        body.update({k: v for k, v in (("category", _categories(category)), ("agent_id", agent_id)) if v})
        if wanted := check_metadata_filter(metadata):
            body["metadata"] = dict(wanted)
        if (floor := check_min_score(min_score, low=-1.0, high=1.0)) is not None:
            body["min_score"] = floor
        if (when := check_as_of(as_of)) is not None:
            body["as_of"] = when.isoformat()
        data = await self._http.request("POST", f"{self._memories(uid)}/search", json_body=body)
        return [_decode.scored(hit, ten) for hit in data["results"]]

    @renamed(user="user_id")
    async def edit(
        self,
        user_id: str | UserRef,
        memory_id: str,
        *,
        content: str | None = None,
        category: str | Category | None = None,
        confidence: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
    ) -> Memory:
        """Change content, category, confidence or metadata (``PATCH …/memories/{id}``; ``metadata`` replaces the
        whole object, ``{}`` clears it)."""
        if content is None and category is None and confidence is None and metadata is None:
            raise InputError("nothing to change: pass new content, category, confidence or metadata")
        uid, ten = await self._who.user(user_id, tenant)
        body: dict[str, Any] = {"content": content, "confidence": confidence}
        body["category"] = None if category is None else Category.parse(category).value
        body["metadata"] = None if metadata is None else dict(check_metadata(metadata))
        body = {k: v for k, v in body.items() if v is not None}
        return _decode.memory(await self._http.request("PATCH", self._memories(uid, memory_id), json_body=body), ten)

    @renamed(user="user_id")
    async def forget(
        self,
        user_id: str | UserRef,
        memory_id: str,
        *,
        by: str | DeletedBy = DeletedBy.USER,
        note: str = "",
        tenant: str | None = None,
    ) -> Memory:
        """Soft delete (``DELETE …/memories/{id}``): the memory stops being used but can be restored."""
        if by != DeletedBy.USER or note:
            raise _unsupported("forget(by=..., note=...) (the API forgets on the user's behalf)")
        uid, ten = await self._who.user(user_id, tenant)
        data = await self._http.request("DELETE", self._memories(uid, memory_id))
        return _decode.memory(data["memory"], ten)

    @renamed(user="user_id")
    async def forget_about(
        self, user_id: str | UserRef, query: str, *, dry_run: bool = False, tenant: str | None = None
    ) -> Forgetting:
        """Forget every memory ``query`` is about, with what it came from (``POST …/memories/forget``);
        ``dry_run``: the preview, nothing changed."""
        uid, ten = await self._who.user(user_id, tenant)
        body = {"query": query, "dry_run": dry_run}
        return _decode.forgetting(
            await self._http.request("POST", f"{self._memories(uid)}/forget", json_body=body), ten
        )

    @renamed(user="user_id")
    async def restore(
        self, user_id: str | UserRef, memory_id: str, *, tier: str | None = None, tenant: str | None = None
    ) -> Memory:
        """Make a forgotten memory active again; the tier limit applies."""
        uid, ten = await self._who.user(user_id, tenant)
        path = f"{self._memories(uid, memory_id)}/restore"
        return _decode.memory(await self._http.request("POST", path, params={"tier": tier}), ten)

    @renamed(user="user_id")
    async def delete(self, user_id: str | UserRef, memory_id: str, *, tenant: str | None = None) -> None:
        """Permanent delete (``?permanent=true``): content and vector are gone; only the history remains."""
        uid, _ = await self._who.user(user_id, tenant)
        await self._http.request("DELETE", self._memories(uid, memory_id), params={"permanent": True})

    @renamed(user="user_id")
    async def history(
        self, user_id: str | UserRef, memory_id: str, *, tenant: str | None = None
    ) -> builtins.list[MemoryEvent]:
        uid, _ = await self._who.user(user_id, tenant)
        data = await self._http.request("GET", f"{self._memories(uid, memory_id)}/history")
        return [_decode.event(e) for e in data["events"]]

    @renamed(user="user_id")
    async def count(self, user_id: str | UserRef, *, tenant: str | None = None) -> int:
        """Active memories of the user."""
        return (await self.usage(user_id, tenant=tenant)).active

    @renamed(user="user_id")
    async def usage(self, user_id: str | UserRef, *, tier: str | None = None, tenant: str | None = None) -> MemoryUsage:
        uid, _ = await self._who.user(user_id, tenant)
        data = await self._http.request("GET", f"/v1/users/{_seg(uid)}/usage", params={"tier": tier})
        last = data.get("last_dropped_at")
        return MemoryUsage(
            data["tier"],
            int(data["active"]),
            data.get("limit"),
            int(data.get("dropped") or 0),
            None if last is None else datetime.fromisoformat(str(last)),
        )

    # -- a user as a whole: data access and erasure ------------------------------------------------------------------

    @renamed(user="user_id")
    async def export(self, user_id: str | UserRef, *, tenant: str | None = None) -> dict[str, Any]:
        """Everything held about the user (``GET /v1/users/{id}/export``), parsed."""
        uid, _ = await self._who.user(user_id, tenant)
        document: dict[str, Any] = await self._http.request("GET", f"/v1/users/{_seg(uid)}/export")
        return document

    async def import_user(
        self, document: str | bytes | Mapping[str, Any], *, tenant: str | None = None, max_bytes: int | None = None
    ) -> ImportReport:
        """Import a user from their export document (``POST /v1/users/import``) into the client's tenant; the
        server checks it and writes it in one transaction (see ``AsyncMemstack.import_user``). ``max_bytes`` bounds
        the document read here; the server's own body limit applies too (413)."""
        await self._who.tenant(tenant)
        data = _decode.import_body(document, max_bytes)
        answer = await self._http.request("POST", "/v1/users/import", json_body=data)
        return _decode.import_report(answer["users"][0])

    @renamed(user="user_id")
    async def erase(self, user_id: str | UserRef, *, tenant: str | None = None) -> ErasureReport:
        """Remove everything held about the user in their tenant (``DELETE /v1/users/{id}``)."""
        uid, _ = await self._who.user(user_id, tenant)
        return _decode.erasure(await self._http.request("DELETE", f"/v1/users/{_seg(uid)}"))
