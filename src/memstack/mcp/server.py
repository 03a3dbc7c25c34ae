"""The MCP server: six tools over an open :class:`~memstack.engine.AsyncMemstack`, built on the official ``mcp`` SDK.

::

    MCP client ──stdio──────────────▶ tools ─▶ AsyncMemstack (tenant: the configured one, ``--tenant``)
    MCP client ──HTTP /mcp + Bearer─▶ _RequireKey (401 without a valid key) ─▶ tools ─▶ AsyncMemstack
                                       (tenant: the key's, resolved per call by the HTTP API's KeyCache)

Tools: ``add_memory``, ``search_memories``, ``list_memories``, ``forget_memory`` (one memory by id, or everything
about something by query, with a ``dry_run`` preview; what it came from is hidden with it), ``restore_memory`` and
``recall`` (memories and past conversations ranked together). Each names its user with ``user_id``, unless the
server was started for one user (``--user`` / ``$MEMSTACK_MCP_USER``): then ``user_id`` may be left out, and a call
naming another user is refused. Over HTTP every request needs ``Authorization: Bearer KEY`` (keys from ``memstack keys
create``), even on loopback: the MCP endpoint has no local mode. A key sees only its tenant's users, and only
the sessions it opened (another key naming one gets the 404 of an unknown session).

memstack's own errors (unknown id, empty query, full tier, bad key) come back as tool errors carrying the message
(``isError``); the server keeps serving. A full tier's names the tier and its limit and carries the upgrade prompt.
The tools capture nothing automatically (``add_memory`` is an explicit save), so nothing is dropped unreported.
Each answer is one short line per memory for the model, the whole JSON as structured content
(:mod:`memstack.mcp.compact`); the server reports memstack's version.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from memstack.engine import AsyncMemstack
from memstack.errors import InputError, LimitReached, MemstackError, Unauthorized
from memstack.mcp import compact
from memstack.server.auth import KeyCache
from memstack.server.settings import ServerSettings
from memstack.server.wire import forgetting_json, memory_json, scored_json
from memstack.types import Category, UserRef

__all__ = ["McpScope", "build_server", "http_app"]

T = TypeVar("T")
LogLevel = Literal["DEBUG", "INFO", "WARNING"]
#: What a tool answers: a compact text for the model and the whole JSON as structured content (the output schema
#: is the JSON's: :mod:`memstack.mcp.compact`).
Reply = Annotated[CallToolResult, dict[str, Any]]

_CATEGORIES = ", ".join(c.value for c in Category)

INSTRUCTIONS = (
    "Long-term memory for the user. Search or recall before answering questions about the user's preferences, "
    "facts or past conversations; add a memory when the user states a lasting fact or preference; forget one when "
    "the user asks you to."
)

Metadata = Annotated[
    dict[str, Any] | None,
    Field(description='Labels kept with the memory, as a JSON object, e.g. {"project": "apollo"}.'),
]
MetadataFilter = Annotated[
    dict[str, Any] | None,
    Field(description='Only memories whose metadata has these keys with these values, e.g. {"project": "apollo"}.'),
]

UserId = Annotated[
    str | None,
    Field(description="Whose memories. Leave out when the server is fixed to one user.", max_length=200),
]


@dataclass(frozen=True, slots=True)
class McpScope:
    """Who the tools act for. ``keys``: authenticate each HTTP call's bearer key (its tenant wins over
    ``tenant``); ``None`` over stdio. ``user``: the one user every call acts for, or ``None`` (each call names it)."""

    tenant: str = "default"
    user: str | None = None
    keys: KeyCache | None = None

    async def user_ref(self, ctx: Context, user_id: str | None) -> UserRef:
        tenant = self.tenant
        if self.keys is not None:
            headers = ctx.headers or {}
            tenant = (await self.keys.caller(headers.get("authorization"))).tenant
        if self.user is not None:
            if user_id is not None and user_id != self.user:
                raise InputError(
                    f"this MCP server acts for user {self.user!r} only (started with --user or $MEMSTACK_MCP_USER); "
                    f"leave out user_id or pass {self.user!r}"
                )
            return UserRef(self.user, tenant)
        if not user_id:
            raise InputError("name the user: pass user_id (or start the server with --user / $MEMSTACK_MCP_USER)")
        return UserRef(user_id, tenant)


async def _tool(call: Callable[[], Awaitable[T]]) -> T:
    """memstack's errors become tool errors with their message (a full tier's with the upgrade prompt, which the
    assistant can pass on); anything else stays a crash the SDK reports."""
    try:
        return await call()
    except LimitReached as exc:
        raise ToolError(f"LimitReached: {exc} (tier {exc.tier}, limit {exc.limit}). {exc.upgrade_prompt}") from exc
    except MemstackError as exc:
        raise ToolError(str(exc)) from exc


def build_server(engine: AsyncMemstack, scope: McpScope, *, log_level: LogLevel = "WARNING") -> MCPServer:
    """The MCP server over an open engine (the caller owns and closes it). Its log goes to stderr."""
    from memstack import __version__

    server: MCPServer = MCPServer("memstack", instructions=INSTRUCTIONS, version=__version__, log_level=log_level)

    @server.tool()
    async def add_memory(
        content: Annotated[str, Field(description="The fact or preference to remember, one sentence.")],
        ctx: Context,
        category: Annotated[str, Field(description=f"One of: {_CATEGORIES}.")] = "general",
        force: Annotated[bool, Field(description="Store it even if the user already has this memory.")] = False,
        metadata: Metadata = None,
        user_id: UserId = None,
    ) -> Reply:
        """Remember one thing about the user (a long-term memory). Returns the memory with its id and an action:
        created, or duplicate when the user already had it (the existing memory is returned, nothing is stored)."""

        async def run() -> CallToolResult:
            user = await scope.user_ref(ctx, user_id)
            added = await engine.add_result(user, content, category=category, force=force, metadata=metadata)
            data = {**memory_json(added.memory), "action": added.action.value, "reason": added.reason}
            return compact.result(data, compact.added(data))

        return await _tool(run)

    @server.tool()
    async def search_memories(
        query: Annotated[str, Field(description="What to look for, in words.")],
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=100, description="How many memories at most.")] = 5,
        metadata: MetadataFilter = None,
        min_score: Annotated[
            float | None, Field(ge=-1.0, le=1.0, description="Leave out memories scoring below this (-1 to 1).")
        ] = None,
        as_of: Annotated[
            datetime | None,
            Field(description="What held at this time (ISO 8601, e.g. 2025-06-01; no zone: UTC) instead of now."),
        ] = None,
        user_id: UserId = None,
    ) -> Reply:
        """The user's active memories closest in meaning to the query, best first, with their scores (cosine
        similarity, -1 to 1: higher is closer; unrelated memories score near 0)."""

        async def run() -> CallToolResult:
            user = await scope.user_ref(ctx, user_id)
            found = await engine.search(user, query, limit=limit, metadata=metadata, min_score=min_score, as_of=as_of)
            hits = [scored_json(hit) for hit in found]
            return compact.result({"results": hits}, compact.scored(hits))

        return await _tool(run)

    @server.tool()
    async def list_memories(
        ctx: Context,
        category: Annotated[str | None, Field(description=f"Only this category, one of: {_CATEGORIES}.")] = None,
        include_forgotten: Annotated[bool, Field(description="Also list forgotten memories.")] = False,
        limit: Annotated[int, Field(ge=1, le=1000, description="How many at most, newest first.")] = 100,
        metadata: MetadataFilter = None,
        as_of: Annotated[
            datetime | None,
            Field(description="What held at this time (ISO 8601, e.g. 2025-06-01; no zone: UTC) instead of now."),
        ] = None,
        user_id: UserId = None,
    ) -> Reply:
        """The user's memories, newest first."""

        async def run() -> CallToolResult:
            user = await scope.user_ref(ctx, user_id)
            found = await engine.list(
                user, category=category, include_deleted=include_forgotten, limit=limit, metadata=metadata, as_of=as_of
            )
            listed = [memory_json(m) for m in found]
            return compact.result({"memories": listed}, compact.memories(listed, "No memories."))

        return await _tool(run)

    @server.tool()
    async def forget_memory(
        ctx: Context,
        memory_id: Annotated[
            str | None, Field(description="The memory's id (or pass query instead).", min_length=1, max_length=200)
        ] = None,
        query: Annotated[
            str | None,
            Field(
                description="Instead of an id: forget everything about this, e.g. 'my cat' (every memory about it).",
                min_length=1,
                max_length=1000,
            ),
        ] = None,
        dry_run: Annotated[
            bool, Field(description="With query: only list what would be forgotten and hidden; change nothing.")
        ] = False,
        user_id: UserId = None,
    ) -> Reply:
        """Stop using a memory (by memory_id), or every memory about something (by query: preview it first with
        dry_run). What the memory came from in past conversations, and what was derived from it, is hidden with it.
        By id: the memory. By query: {query, dry_run, memories, hidden}. restore_memory brings one back."""

        async def run() -> CallToolResult:
            user = await scope.user_ref(ctx, user_id)
            if (memory_id is None) == (query is None):
                raise InputError("pass memory_id (one memory) or query (everything about it), not both or neither")
            if query is not None:
                data = forgetting_json(await engine.forget_about(user, query, dry_run=dry_run))
                return compact.result(data, compact.forgotten(data))
            assert memory_id is not None
            if dry_run:
                raise InputError("dry_run previews a forget by query; pass query instead of memory_id")
            memory = memory_json(await engine.forget(user, memory_id))
            return compact.result(memory, f"Forgot (restore_memory brings it back): {compact.one(memory)}")

        return await _tool(run)

    @server.tool()
    async def restore_memory(
        memory_id: Annotated[str, Field(description="The forgotten memory's id.", min_length=1, max_length=200)],
        ctx: Context,
        user_id: UserId = None,
    ) -> Reply:
        """Make a forgotten memory active again."""

        async def run() -> CallToolResult:
            user = await scope.user_ref(ctx, user_id)
            memory = memory_json(await engine.restore(user, memory_id))
            return compact.result(memory, f"Restored: {compact.one(memory)}")

        return await _tool(run)

    @server.tool()
    async def recall(
        query: Annotated[str, Field(description="What to recall, in words; dates like 'last week' are understood.")],
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=100, description="How many items at most.")] = 10,
        min_score: Annotated[
            float | None, Field(ge=0.0, description="Leave out items scoring below this (a ranking score, 0 or more).")
        ] = None,
        as_of: Annotated[
            datetime | None,
            Field(description="What held at this time (ISO 8601, e.g. 2025-06-01; no zone: UTC) instead of now."),
        ] = None,
        user_id: UserId = None,
    ) -> Reply:
        """What the user said before: memories and messages of past conversations ranked together, best first.
        Each item says whether it is a memory or a conversation turn, and where it comes from."""

        async def run() -> CallToolResult:
            user = await scope.user_ref(ctx, user_id)
            found = await engine.recall(user, query, limit=limit, min_score=min_score, as_of=as_of)
            items = [item.to_dict() for item in found]
            return compact.result({"results": items}, compact.recalled(items))

        return await _tool(run)

    return server


class _RequireKey:
    """Refuses an HTTP request without a valid bearer key (401) before the MCP layer sees it, and names the key as
    the request's principal (``scope["user"]``), to which the SDK's session manager binds each session it opens:
    a request for that session with any other key (another tenant's, or another key of the same tenant) is answered
    404 exactly as an unknown session is, and the session goes on. A session id alone is no credential: without the
    binding, a key that learnt another tenant's session id could post into that session or end it (``DELETE``)."""

    def __init__(self, app: ASGIApp, keys: KeyCache) -> None:
        self._app = app
        self._keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            authorization = None
            for name, value in scope["headers"]:
                if name == b"authorization":
                    authorization = value.decode("latin-1")
            try:
                caller = await self._keys.caller(authorization)
            except Unauthorized as exc:
                response = JSONResponse({"error": str(exc)}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
            principal = caller.key_id or f"tenant:{caller.tenant}"  # a key always has an id (keys mode)
            token = AccessToken(token=principal, client_id=principal, scopes=[], subject=caller.tenant)
            scope = {**scope, "user": AuthenticatedUser(token)}
        await self._app(scope, receive, send)


def http_app(
    engine: AsyncMemstack,
    *,
    user: str | None = None,
    host: str = "127.0.0.1",
    key_cache_s: float | None = None,
    log_level: LogLevel = "WARNING",
) -> ASGIApp:
    """The streamable HTTP app (endpoint ``/mcp``): every request needs a key of ``engine``'s store; its tenant
    scopes the tools. Run it with uvicorn; its lifespan runs the SDK's session manager. ``key_cache_s``: how long
    an accepted key is trusted without asking the store again (default: the HTTP API's)."""
    ttl_s = ServerSettings().key_cache_s if key_cache_s is None else key_cache_s
    keys = KeyCache(engine.keys, ttl_s=ttl_s, mode="keys")
    server = build_server(engine, McpScope(user=user, keys=keys), log_level=log_level)
    return _RequireKey(server.streamable_http_app(host=host), keys)
