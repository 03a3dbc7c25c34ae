"""What only the client has: its signatures match the library's, the blocking ``MemstackClient``, API keys and
tenants, a server that cannot be reached, and the mapping of every error status back to the library's errors."""

from __future__ import annotations

import inspect
import re
import socket
from pathlib import Path

import pytest

from memstack.blocking import (
    BlockingAgents,
    BlockingContexts,
    BlockingSessions,
    BlockingUsers,
    BlockingWebhooks,
    Memstack,
)
from memstack.client import AsyncMemstackClient, MemstackClient
from memstack.client._http import error_from
from memstack.client._namespaces import RemoteAgents, RemoteContexts, RemoteSessions, RemoteUsers
from memstack.client._webhooks import RemoteWebhooks
from memstack.engine import Agents, AsyncMemstack, Contexts, Sessions, Users, Webhooks
from memstack.errors import (
    BudgetExceeded,
    InputError,
    LimitReached,
    NotFound,
    ProviderError,
    ProviderTimeout,
    SessionConflict,
    StoreBusy,
    StoreError,
    StoreUnavailable,
    Unauthorized,
)
from memstack.types import ChatDone, Memory, UserRef, UserSummary

from .conftest import Servers

SHARED = [
    "add", "add_result", "get", "list", "search", "edit", "forget", "forget_about", "restore", "delete", "history",
    "count", "usage",
    "chat", "chat_stream", "end_session", "recall", "ingest", "export", "import_user", "erase",
]  # fmt: skip


#: The engine's namespaces the client has, and their methods (the rest are the library's only).
NAMESPACES = {
    "sessions": (Sessions, RemoteSessions, BlockingSessions, ["list", "get", "turns"]),
    "agents": (Agents, RemoteAgents, BlockingAgents, ["list", "get", "put", "delete"]),
    "contexts": (Contexts, RemoteContexts, BlockingContexts, ["get", "recent"]),
    "users": (Users, RemoteUsers, BlockingUsers, ["list"]),
    "webhooks": (
        Webhooks, RemoteWebhooks, BlockingWebhooks,
        ["create", "list", "get", "update", "delete", "deliveries", "replay"],
    ),
}  # fmt: skip


@pytest.mark.parametrize(("namespace", "name"), [(n, m) for n, (*_, methods) in NAMESPACES.items() for m in methods])
def test_namespace_signatures_match_the_library(namespace: str, name: str, servers: Servers) -> None:
    library_cls, client_cls, blocking_cls, _ = NAMESPACES[namespace]
    library = inspect.signature(getattr(library_cls, name))
    client = inspect.signature(getattr(client_cls, name))
    shape = [(p.name, p.kind, p.default) for p in library.parameters.values()]
    assert [(p.name, p.kind, p.default) for p in client.parameters.values()] == shape
    assert client.return_annotation == library.return_annotation
    assert callable(getattr(blocking_cls, name))
    with MemstackClient(servers.local) as ms:
        assert inspect.signature(getattr(getattr(ms, namespace), name)) == library.replace(
            parameters=list(library.parameters.values())[1:]
        )


@pytest.mark.parametrize("name", SHARED)
def test_signatures_match_the_library(name: str) -> None:
    library = inspect.signature(getattr(AsyncMemstack, name))
    client = inspect.signature(getattr(AsyncMemstackClient, name))
    shape = [(p.name, p.kind, p.default) for p in library.parameters.values()]
    assert [(p.name, p.kind, p.default) for p in client.parameters.values()] == shape
    assert client.return_annotation == library.return_annotation
    assert callable(getattr(Memstack, name)) and callable(getattr(MemstackClient, name))


def test_the_blocking_client(servers: Servers) -> None:
    with MemstackClient(servers.local) as ms:
        memory = ms.add("sync-user", "User drinks coffee black", category="preference")
        assert isinstance(memory, Memory) and ms.get("sync-user", memory.id) == memory
        assert [h.memory.id for h in ms.search("sync-user", "coffee", limit=1)] == [memory.id]
        assert ms.count("sync-user") == 1
        reply = ms.chat("sync-user", "Good morning")
        assert reply.reply and reply.turn == 1
        events = list(ms.chat_stream("sync-user", "And now?", session_id=reply.session_id))
        assert isinstance(events[-1], ChatDone) and events[-1].result.turn == 2
        with pytest.raises(NotFound):
            ms.get("sync-user", "missing")
        assert ms.erase("sync-user").total >= 1
    ms.close()  # closing twice is harmless


async def test_keys_name_the_tenant(servers: Servers) -> None:
    async with AsyncMemstackClient(servers.keyed) as anonymous:
        with pytest.raises(Unauthorized):
            await anonymous.count("alice")
    async with AsyncMemstackClient(servers.keyed, api_key="msk_not_a_key") as wrong:
        with pytest.raises(Unauthorized):
            await wrong.count("alice")
    async with AsyncMemstackClient(servers.keyed, api_key=servers.key) as ms:
        assert await ms.tenant() == "acme"
        memory = await ms.add("alice", "User speaks Dutch")
        assert memory.tenant == "acme"
        assert await ms.count(UserRef("alice", "acme")) == 1
        assert await ms.count("alice", tenant="acme") == 1
        with pytest.raises(InputError, match="tenant 'acme'"):
            await ms.count("alice", tenant="globex")
        with pytest.raises(InputError):
            await ms.count(UserRef("alice", "globex"))
        assert (await ms.erase("alice")).tenant == "acme"


async def test_environment_fallback(servers: Servers, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTACK_URL", servers.keyed)
    monkeypatch.setenv("MEMSTACK_API_KEY", servers.key)
    async with AsyncMemstackClient() as ms:
        assert ms.base_url == servers.keyed and await ms.tenant() == "acme"
    monkeypatch.delenv("MEMSTACK_API_KEY")
    monkeypatch.setenv("MEMSTACK_KEY", servers.key)  # the name the docs' shell examples use
    async with AsyncMemstackClient() as ms:
        assert await ms.tenant() == "acme"


async def test_what_the_http_api_does_not_carry_is_refused(remote: AsyncMemstackClient) -> None:
    for call in (
        remote.add("bob", "User likes jazz", source="auto"),
        remote.add("bob", "User likes jazz", confidence=0.5),
        remote.list("bob", agent_id="tutor"),
        remote.forget("bob", "m1", by="ai"),
        remote.chat("bob", "hi", delegated="summarize"),
    ):
        with pytest.raises(InputError, match="not offered by the HTTP API"):
            await call
    assert await remote.count("bob") == 0


async def test_a_server_that_cannot_be_reached() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens there once the socket closes
    async with AsyncMemstackClient(f"http://127.0.0.1:{port}", timeout=5.0) as ms:
        with pytest.raises(StoreUnavailable, match="cannot reach the memstack server"):
            await ms.count("alice")


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (400, "InputError", InputError),
        (413, "PayloadTooLarge", InputError),
        (418, "Teapot", InputError),  # any other 4xx
        (401, "Unauthorized", Unauthorized),
        (409, "SessionConflict", SessionConflict),
        (502, "ProviderError", ProviderError),
        (504, "ProviderTimeout", ProviderTimeout),
        (503, "StoreBusy", StoreBusy),
        (503, "StoreUnavailable", StoreUnavailable),
        (500, "ServerError", StoreError),
    ],
)
def test_error_statuses_map_to_library_errors(status: int, kind: str, expected: type[Exception]) -> None:
    error = error_from(status, {"error": {"type": kind, "message": "what the server said"}})
    assert type(error) is expected and str(error) == "what the server said"


def test_not_found_and_limit_bodies_keep_their_fields() -> None:
    found = error_from(404, {"error": {"type": "NotFound", "message": "no memory 'm1' here", "kind": "memory",
                                       "key": "m1"}})  # fmt: skip
    assert isinstance(found, NotFound) and (found.kind, found.key, str(found)) == (
        "memory",
        "m1",
        "no memory 'm1' here",
    )
    assert isinstance(error_from(404, None, "Not Found"), NotFound)  # not even JSON: still a NotFound
    budget = error_from(400, {"error": {"type": "BudgetExceeded", "message": "m", "needed": 900, "budget": 500}})
    assert isinstance(budget, BudgetExceeded) and (budget.needed, budget.budget) == (900, 500)
    full = error_from(409, {"error": {"type": "LimitReached", "message": "full", "tier": "free", "limit": 50}})
    assert isinstance(full, LimitReached) and (full.tier, full.limit) == ("free", 50)


def test_the_readme_example_runs(
    servers: Servers, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "http.md").read_text(encoding="utf-8")
    section = page.split("\n## Python client\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "docs/http.md has no python block under '## Python client'"
    monkeypatch.setenv("MEMSTACK_KEY", servers.key)  # as docs/http.md's shell example exports it
    monkeypatch.delenv("MEMSTACK_API_KEY", raising=False)
    code = match.group(1).replace("http://127.0.0.1:8700", servers.keyed)
    exec(compile(code, "docs/http.md", "exec"), {})
    assert capsys.readouterr().out == "User is training for the Lisbon marathon\n"


async def test_the_namespaces_act_for_the_keys_tenant(servers: Servers) -> None:
    async with AsyncMemstackClient(servers.keyed, api_key=servers.key) as ms:
        reply = await ms.chat("carol", "I grow tomatoes on my balcony.")
        [listed] = await ms.sessions.list("carol")
        assert (listed.session_id, listed.tenant) == (reply.session_id, "acme")
        assert (await ms.sessions.get(UserRef("carol", "acme"), reply.session_id)).tenant == "acme"
        assert reply.context_id and (await ms.contexts.get(reply.context_id, tenant="acme")).context_id
        record = await ms.agents.put("gardener", {"core": "You know plants."})
        assert record.tenant == "acme" and [a.name for a in await ms.agents.list()] == ["gardener"]
        for call in (
            ms.sessions.list("carol", tenant="globex"),
            ms.sessions.get(UserRef("carol", "globex"), reply.session_id),
            ms.contexts.get(reply.context_id, tenant="globex"),
            ms.contexts.recent("carol", tenant="globex"),
            ms.agents.get("gardener", tenant="globex"),
            ms.users.list(tenant="globex"),
        ):
            with pytest.raises(InputError, match="tenant 'acme'"):
                await call
        await ms.agents.delete("gardener")
        assert (await ms.erase("carol")).total > 0
    async with AsyncMemstackClient(servers.local) as other:  # the default tenant sees none of it
        assert await other.sessions.list("carol") == []
        with pytest.raises(NotFound):
            await other.contexts.get(reply.context_id)


async def test_a_session_window_the_api_does_not_carry_is_refused(remote: AsyncMemstackClient) -> None:
    with pytest.raises(InputError, match="not offered by the HTTP API"):
        await remote.sessions.get("bob", "ses_1", window_turns=2)


async def test_the_users_of_a_tenant_a_page_at_a_time(servers: Servers) -> None:
    async with AsyncMemstackClient(servers.keyed, api_key=servers.key) as ms:
        for name in ("u-page-1", "u-page-2", "u-page-3"):
            await ms.add(name, "User likes paging")
        first = await ms.users.list(limit=2)
        assert len(first) == 2 and all(isinstance(u, UserSummary) for u in first)
        rest = await ms.users.list(after=first[-1].user_id, limit=1000)
        listed = {u.user_id: u for u in (*first, *rest)}
        assert {"u-page-1", "u-page-2", "u-page-3"} <= set(listed) and listed["u-page-2"].memories == 1
        assert [u.user_id for u in (*first, *rest)] == sorted(listed)
    with MemstackClient(servers.keyed, api_key=servers.key) as blocking:
        assert blocking.users.list(limit=2) == first


def test_the_blocking_client_has_the_namespaces(servers: Servers) -> None:
    with MemstackClient(servers.local) as ms:
        reply = ms.chat("sync-namespaces", "I swim on Sundays.")
        ms.end_session("sync-namespaces", reply.session_id)
        assert [s.session_id for s in ms.sessions.list("sync-namespaces")] == [reply.session_id]
        assert ms.sessions.get("sync-namespaces", reply.session_id).turn_count == 1
        assert reply.context_id and ms.contexts.get(reply.context_id).context_id == reply.context_id
        assert [m.context_id for m in ms.contexts.recent("sync-namespaces")] == [reply.context_id]
        assert ms.agents.put("swimmer", {"core": "You coach swimmers."}).name == "swimmer"
        assert "swimmer" in [a.name for a in ms.agents.list()] and ms.agents.get("swimmer").name == "swimmer"
        ms.agents.delete("swimmer")
        ms.erase("sync-namespaces")
