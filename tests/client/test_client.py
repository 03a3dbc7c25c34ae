"""What only the client has: its signatures match the library's, the blocking ``MemstackClient``, API keys and
tenants, a server that cannot be reached, and the mapping of every error status back to the library's errors."""

from __future__ import annotations

import inspect
import re
import socket
from pathlib import Path

import pytest

from memstack.blocking import Memstack
from memstack.client import AsyncMemstackClient, MemstackClient
from memstack.client._http import error_from
from memstack.engine import AsyncMemstack
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
from memstack.types import ChatDone, Memory, UserRef

from .conftest import Servers

SHARED = [
    "add", "add_result", "get", "list", "search", "edit", "forget", "forget_about", "restore", "delete", "history",
    "count", "usage",
    "chat", "chat_stream", "end_session", "recall", "ingest", "export", "erase",
]  # fmt: skip


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
        assert [h.memory.id for h in ms.search("sync-user", "coffee", k=1)] == [memory.id]
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
    monkeypatch.setenv("MEMSTACK_KEY", servers.key)  # the name the README's shell examples use
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
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("**Python client.**", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "README.md has no python block after '**Python client.**'"
    monkeypatch.setenv("MEMSTACK_KEY", servers.key)  # as the README's shell example exports it
    monkeypatch.delenv("MEMSTACK_API_KEY", raising=False)
    code = match.group(1).replace("http://127.0.0.1:8700", servers.keyed)
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out == "User is training for the Lisbon marathon\n"
